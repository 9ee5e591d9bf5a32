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
    Option<"force", "force", "::mlir::attn::Order",
           /*default=*/"::mlir::attn::Order::Auto",
           "Force every auto order",
           [{::llvm::cl::values(
             clEnumValN(::mlir::attn::Order::Auto, "auto",
                        "the cost model's choice"),
             clEnumValN(::mlir::attn::Order::QkFirst, "qk_first",
                        "(phi(Q) phi(K)^T) V"),
             clEnumValN(::mlir::attn::Order::KvFirst, "kv_first",
                        "phi(Q) (phi(K)^T V)"),
             clEnumValN(::mlir::attn::Order::Recurrent, "recurrent",
                        "token by token: S_i = g_i S_{i-1} + phi(k_i) v_i^T"))}]>,
    Option<"chunk", "chunk", "int64_t", /*default=*/"0",
           "Use this chunk for every auto chunk (0: the cost model's)">,
  ];
}

#endif // ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_TD
