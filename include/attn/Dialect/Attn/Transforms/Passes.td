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

#endif // ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_TD
