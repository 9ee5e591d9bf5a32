//===- Passes.td - attn conversion passes ------------------*- tablegen -*-===//

#ifndef ATTN_CONVERSION_PASSES_TD
#define ATTN_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertAttnToLinalg : Pass<"convert-attn-to-linalg"> {
  let summary = "Lower attn.term and attn.combine to tiled linalg on tensors";
  let description = [{
    Each term becomes its feature rows (computed once per row, padded to
    whole tiles with `static-tiles`, else per tile where they are used),
    then the order it carries: qk-first as a scf.forall over
    (batch, head, query tile) with an online normaliser over the visible key
    tiles (no N×M matrix), kv-first as a state pass and a query pass, or,
    with a causal or block mask, a loop over chunks carrying a w×E state.
    `order auto` with `crossover N` emits both behind `scf.if`; `auto`
    without it lowers qk-first (run attn-select-order first to choose).
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect", "::mlir::affine::AffineDialect",
    "::mlir::bufferization::BufferizationDialect"
  ];
  let options = [
    Option<"tileSize", "tile-size", "int64_t", /*default=*/"64",
           "Query/key tile of qk-first and default chunk of kv-first">,
    Option<"staticTiles", "static-tiles", "bool", /*default=*/"false",
           "Only tiles of static size, each in a buffer of its own block "
           "(what attn-map-to-gpu needs): whole feature rows padded to "
           "whole tiles, outputs through a padded buffer. Without it "
           "(CPU), every strategy maps the tiles of Q and K itself (qk-first "
           "builds its K^T panels in one parallel pass) and the last query "
           "tile writes only its real rows">,
    Option<"stateCacheBytes", "state-cache-bytes", "int64_t",
           /*default=*/"0",
           "L1 data cache bytes of a core (0: not known): kv-first's state "
           "pass halves its key tile, from tile-size down to 32 keys, until "
           "one tile of phi(K) and one of V (f32) fit in it">,
  ];
}

#endif // ATTN_CONVERSION_PASSES_TD
