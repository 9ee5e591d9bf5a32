//===- AttnEnums.td - Enumerations of the attn dialect -----*- tablegen -*-===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNENUMS_TD
#define ATTN_DIALECT_ATTN_IR_ATTNENUMS_TD

include "mlir/IR/EnumAttr.td"

def Attn_Score : I32EnumAttr<"Score", "how a term weighs a (query, key) pair", [
    I32EnumAttrCase<"Softmax", 0, "softmax">,
    I32EnumAttrCase<"Relu2", 1, "relu2">,
    I32EnumAttrCase<"Kernel", 2, "kernel">
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::attn";
}

def Attn_FeatureMap : I32EnumAttr<"FeatureMap", "the feature map φ of a kernel term", [
    I32EnumAttrCase<"Identity", 0, "identity">,
    I32EnumAttrCase<"Relu", 1, "relu">,
    I32EnumAttrCase<"Elu1", 2, "elu1">,
    I32EnumAttrCase<"FavorPlus", 3, "favor_plus">,
    I32EnumAttrCase<"CosFormer", 4, "cosformer">,
    I32EnumAttrCase<"Rfa", 5, "rfa">
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::attn";
}

def Attn_MaskKind : I32EnumAttr<"MaskKind", "which keys a query may see", [
    I32EnumAttrCase<"None", 0, "none">,
    I32EnumAttrCase<"Causal", 1, "causal">,
    I32EnumAttrCase<"Block", 2, "block">,
    I32EnumAttrCase<"BlockCausal", 3, "block_causal">,
    I32EnumAttrCase<"PriorBlocks", 4, "prior_blocks">,
    I32EnumAttrCase<"Window", 5, "window">
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::attn";
}

def Attn_Normalizer : I32EnumAttr<"Normalizer", "the divisor z_i of a term's row", [
    I32EnumAttrCase<"Rows", 0, "rows">,
    I32EnumAttrCase<"Length", 1, "length">,
    I32EnumAttrCase<"None", 2, "none">
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::attn";
}

def Attn_Order : I32EnumAttr<"Order", "association order of a term", [
    I32EnumAttrCase<"Auto", 0, "auto">,
    I32EnumAttrCase<"QkFirst", 1, "qk_first">,
    I32EnumAttrCase<"KvFirst", 2, "kv_first">,
    I32EnumAttrCase<"Recurrent", 3, "recurrent">
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::attn";
}

#endif // ATTN_DIALECT_ATTN_IR_ATTNENUMS_TD
