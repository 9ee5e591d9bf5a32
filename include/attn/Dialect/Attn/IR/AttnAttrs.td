//===- AttnAttrs.td - Attributes of the attn dialect -------*- tablegen -*-===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNATTRS_TD
#define ATTN_DIALECT_ATTN_IR_ATTNATTRS_TD

include "attn/Dialect/Attn/IR/AttnDialect.td"
include "attn/Dialect/Attn/IR/AttnEnums.td"
include "mlir/IR/AttrTypeBase.td"

class Attn_EnumAttr<EnumAttrInfo info, string mnemonic>
    : EnumAttr<Attn_Dialect, info, mnemonic> {
  let assemblyFormat = "`<` $value `>`";
}

def Attn_ScoreAttr : Attn_EnumAttr<Attn_Score, "score">;
def Attn_FeatureMapAttr : Attn_EnumAttr<Attn_FeatureMap, "feature_map">;
def Attn_NormalizerAttr : Attn_EnumAttr<Attn_Normalizer, "normalizer">;
def Attn_OrderAttr : Attn_EnumAttr<Attn_Order, "order">;

def Attn_MaskAttr : AttrDef<Attn_Dialect, "Mask"> {
  let mnemonic = "mask";
  let summary = "which keys j a query i may attend to";
  let description = [{
    `#attn.mask<none>`, `#attn.mask<causal>` (j ≤ i), `#attn.mask<block(c)>`
    (⌊i/c⌋ = ⌊j/c⌋), `#attn.mask<block_causal(c)>` (same block and j ≤ i),
    `#attn.mask<prior_blocks(c)>` (⌊j/c⌋ < ⌊i/c⌋, FLASH's global causal part).
    `#attn.mask<window(l, r)>` (p − l ≤ j ≤ p + r, DESIGN §1.3's sliding
    window; `window(w)` of the spec language is `window(w − 1, 0)`).
    The causal and window masks read the query's position p = M − N + i
    (bottom-right alignment: p = i when N = M); the block masks read i.
    The block size c is given exactly for the three block kinds and must be
    positive; the window's left and right sizes are given exactly for
    `window` and must not be negative; the other kinds take none.
  }];
  let parameters = (ins "::mlir::attn::MaskKind":$kind,
                        DefaultValuedParameter<"int64_t", "0">:$block,
                        DefaultValuedParameter<"int64_t", "0">:$left,
                        DefaultValuedParameter<"int64_t", "0">:$right);
  let builders = [
    AttrBuilder<(ins "::mlir::attn::MaskKind":$kind,
                     CArg<"int64_t", "0">:$block), [{
      return $_get($_ctxt, kind, block, 0, 0);
    }]>
  ];
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// True for block, block_causal and prior_blocks, which take a block size.
    bool hasBlock() const { return kindHasBlock(getKind()); }
    static bool kindHasBlock(::mlir::attn::MaskKind kind);
    /// True for masks that contain the condition j ≤ i.
    bool isCausal() const;
  }];
}

#endif // ATTN_DIALECT_ATTN_IR_ATTNATTRS_TD
