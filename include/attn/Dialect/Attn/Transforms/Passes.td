//===- Passes.td - Transformations of the attn dialect -----*- tablegen -*-===//

#ifndef ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_TD
#define ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttnMaterializeDefaults : Pass<"attn-materialize-defaults"> {
  let summary = "Write every defaulted attribute of attn.term explicitly";
  let description = [{
    Makes the defaults of DESIGN §1 explicit on every `attn.term`: the mask
    (`none`), the normaliser (`rows` for softmax and kernel, `length` for
    relu2), ε of a `rows` normaliser (0 for softmax and relu2, 1e-6 for
    kernel) and, where D is static, the scale 1/sqrt(D) of the terms that use
    one. Later passes then read one canonical form instead of re-deriving the
    defaults. The result computes exactly what the input did.
  }];
}

def AttnSelectOrder : Pass<"attn-select-order"> {
  let summary = "Choose each term's association order and chunk by cost";
  let description = [{
    Fills in every `order auto` and `chunk auto` of `attn.term` from the
    cost model (docs/CostModel.md) for the chosen target:

    - `softmax` and `relu2` terms have no product form: always `qk_first`.
    - A `kernel` term with a static N gets the faster of `qk_first` and
      `kv_first`; a causal kv-first term also gets its best state chunk.
    - A `kernel` term with a dynamic N keeps `order auto` and gets
      `crossover N`, the smallest N at which kv-first wins, so that code
      generation emits both orders and branches at run time (`qk_first` when
      kv-first never wins).
    - A term whose order is already fixed keeps it; only its chunk is filled.

    Dynamic B and H do not change the choice and count as 1; a dynamic
    feature or value size is assumed to be 64, and a dynamic FAVOR+ width
    256 (a remark says so).
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"cpu\"",
           "cpu, nvptx, or the path of a target description file">,
    Option<"force", "force", "std::string", /*default=*/"\"\"",
           "Force every auto order: qk_first or kv_first">,
    Option<"chunk", "chunk", "int64_t", /*default=*/"0",
           "Use this chunk for every auto chunk (0: the cost model's)">,
  ];
}

def AttnDestinationAbi : Pass<"attn-destination-abi", "::mlir::ModuleOp"> {
  let summary = "Give public functions the memref calling convention of attnc";
  let description = [{
    Rewrites every public `func.func` taking and returning ranked tensors into
    one taking memrefs of the same shapes, followed by one output memref per
    result, and returning nothing: arguments are read through
    `bufferization.to_tensor restrict` and results are written with
    `bufferization.materialize_in_destination`. The function gets
    `llvm.emit_c_interface`, so that `_mlir_ciface_<name>` takes pointers to
    memref descriptors (what attnc's JIT and C header call).
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect",
                           "::mlir::memref::MemRefDialect"];
}

def AttnTileAndVectorize : Pass<"attn-tile-and-vectorize", "::mlir::func::FuncOp"> {
  let summary = "Register-tile and vectorize the static linalg tiles of attn";
  let description = [{
    Runs on the tensor IR of convert-attn-to-linalg. Every linalg.generic
    whose loop ranges are static (the per-tile products, reductions and
    elementwise steps) is vectorized; contractions (two parallel loops and
    one reduction) are first tiled to `rows`×`cols` register tiles with the
    whole reduction inside, so that their vector.contract lowers to
    outer-product FMAs held in registers. Ops with dynamic ranges (feature
    maps over a dynamic sequence) are left for the scalar loop lowering.
  }];
  let options = [
    Option<"rows", "rows", "int64_t", /*default=*/"8",
           "Rows of a contraction's register tile">,
    Option<"cols", "cols", "int64_t", /*default=*/"32",
           "Columns of a contraction's register tile">,
  ];
  let dependentDialects = ["::mlir::vector::VectorDialect",
                           "::mlir::scf::SCFDialect"];
}

def AttnStridedCopiesToLinalg
    : Pass<"attn-strided-copies-to-linalg", "::mlir::func::FuncOp"> {
  let summary = "Turn memref.copy between strided buffers into linalg.copy";
  let description = [{
    MLIR lowers a `memref.copy` whose operands are not both known to be
    contiguous to a call of the runtime's `memrefCopy`, which copies element
    by element with index arithmetic: the padding of Q, K and V to whole
    tiles (a copy into a subview) then costs more than the attention itself
    at small N. As `linalg.copy` it becomes a loop nest whose innermost
    stride is known, which LLVM vectorizes. Copies between contiguous
    buffers (a memcpy) are left alone.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def AttnApproximateMath : Pass<"attn-approximate-math"> {
  let summary = "Replace exp (and friends) by polynomial approximations";
  let description = [{
    Rewrites `math.exp`, `math.sin`, `math.cos` and other transcendental ops
    into MLIR's polynomial approximations (plain arith, f32-accurate to a few
    ulp). A libm call per element keeps LLVM from vectorizing the softmax
    and feature-map loops; the arithmetic form vectorizes. An f32 exp whose
    result would be subnormal (x < ln(FLT_MIN), masked scores at −inf)
    gives 0: subnormal arithmetic is ~100× slower on x86 without
    flush-to-zero, and those values are below 1.2e-38. In GPU kernels it
    replaces libdevice's `__nv_expf` and friends, so that the PTX needs no
    CUDA toolkit at compile time. Runs on any op (a function, a
    `gpu.module`).

    With `arith-only`, the helpers the polynomials use are expanded too:
    `math.fma` into a multiply and an add (which the backend contracts
    again), `math.floor` and `math.absf` of f32 into exact integer and bit
    arithmetic. convert-gpu-to-nvvm would otherwise call libdevice for them.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::vector::VectorDialect"];
  let options = [
    Option<"arithOnly", "arith-only", "bool", /*default=*/"false",
           "Also expand fma, floor and absf into arith">,
  ];
}

def AttnCheckLowered : Pass<"attn-check-lowered", "::mlir::ModuleOp"> {
  let summary = "Fail unless only the LLVM (and OpenMP) dialects are left";
  let description = [{
    The last pass of `attn-lower-to-llvm` and `attn-lower-to-nvvm`: every
    operation must belong to the `llvm` or `omp` dialect, or be a serialised
    `gpu.binary` or a `gpu.launch_func` of one (or be the module itself). Anything else, above all an
    `attn` op, is reported with its location and fails the pipeline.
  }];
}

#endif // ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_TD
