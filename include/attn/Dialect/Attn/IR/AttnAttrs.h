//===- AttnAttrs.h - Attributes and enums of the attn dialect ---*- C++ -*-===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNATTRS_H
#define ATTN_DIALECT_ATTN_IR_ATTNATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"

#include "attn/Dialect/Attn/IR/AttnEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "attn/Dialect/Attn/IR/AttnAttrs.h.inc"

namespace mlir {
namespace attn {
/// Parses a mask without its `#attn.mask<>` wrapper: `kind` or `kind(block)`.
/// Shared by the attribute and the `mask` clause of `attn.term`.
FailureOr<MaskAttr> parseMaskClause(AsmParser &parser);
/// Prints the form parseMaskClause reads.
void printMaskClause(AsmPrinter &printer, MaskAttr mask);
} // namespace attn
} // namespace mlir

#endif // ATTN_DIALECT_ATTN_IR_ATTNATTRS_H
