//===- AttnDialect.td - The attn dialect -------------------*- tablegen -*-===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNDIALECT_TD
#define ATTN_DIALECT_ATTN_IR_ATTNDIALECT_TD

include "mlir/IR/OpBase.td"

def Attn_Dialect : Dialect {
  let name = "attn";
  let cppNamespace = "::mlir::attn";
  let summary = "Attention variants as first-class operations";
  let description = [{
    The `attn` dialect states an attention variant `O = G ⊙ Σ_t term_t` at the
    level of its math (DESIGN §1): each `attn.term` is one normalised weighted
    sum over a shared `V` with its own score, feature map, mask, normaliser,
    scale, optional Linformer projection, and the decisions the compiler
    takes later (association order and chunk size). `attn.combine` sums terms
    and applies the optional GAU-style gate.

    Tensors are row-major `[B, H, L, X]` (batch, heads, sequence, feature):
    `Q: [B,H,N,D]`, `K: [B,H,M,D]`, `V: [B,H,M,E]`, `O: [B,H,N,E]`; sizes may
    be static or dynamic. The element type is f32.
  }];
  let useDefaultAttributePrinterParser = 1;
}

class Attn_Op<string mnemonic, list<Trait> traits = []>
    : Op<Attn_Dialect, mnemonic, traits>;

#endif // ATTN_DIALECT_ATTN_IR_ATTNDIALECT_TD
