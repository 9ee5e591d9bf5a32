//===- AttnDialect.cpp - The attn dialect and its attributes --------------===//

#include "attn/Dialect/Attn/IR/AttnDialect.h"
#include "attn/Dialect/Attn/IR/AttnAttrs.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::attn;

#include "attn/Dialect/Attn/IR/AttnOpsDialect.cpp.inc"

#include "attn/Dialect/Attn/IR/AttnEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "attn/Dialect/Attn/IR/AttnAttrs.cpp.inc"

void AttnDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "attn/Dialect/Attn/IR/AttnOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "attn/Dialect/Attn/IR/AttnAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// MaskAttr
//===----------------------------------------------------------------------===//

bool MaskAttr::kindHasBlock(MaskKind kind) {
  return kind == MaskKind::Block || kind == MaskKind::BlockCausal ||
         kind == MaskKind::PriorBlocks;
}

bool MaskAttr::isCausal() const {
  return getKind() == MaskKind::Causal || getKind() == MaskKind::BlockCausal;
}

LogicalResult MaskAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               MaskKind kind, int64_t block, int64_t left,
                               int64_t right) {
  if (kind == MaskKind::Window) {
    if (left < 0 || right < 0)
      return emitError() << "mask 'window' needs non-negative left and right "
                            "sizes, got "
                         << left << " and " << right;
    if (block != 0)
      return emitError() << "mask 'window' takes no block size";
    return success();
  }
  if (left != 0 || right != 0)
    return emitError() << "mask '" << stringifyMaskKind(kind)
                       << "' takes no window sizes";
  if (kindHasBlock(kind)) {
    if (block <= 0)
      return emitError() << "mask '" << stringifyMaskKind(kind)
                         << "' needs a positive block size, got " << block;
    return success();
  }
  if (block != 0)
    return emitError() << "mask '" << stringifyMaskKind(kind)
                       << "' takes no block size";
  return success();
}

FailureOr<MaskAttr> mlir::attn::parseMaskClause(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (parser.parseKeyword(&keyword))
    return failure();
  std::optional<MaskKind> kind = symbolizeMaskKind(keyword);
  if (!kind) {
    parser.emitError(loc) << "unknown mask '" << keyword
                          << "'; expected none, causal, block(c), "
                             "block_causal(c), prior_blocks(c) or "
                             "window(l, r)";
    return failure();
  }
  int64_t block = 0;
  if (*kind == MaskKind::Window) {
    int64_t left = 0, right = 0;
    if (parser.parseLParen())
      return failure();
    SMLoc sizeLoc = parser.getCurrentLocation();
    if (parser.parseInteger(left) || parser.parseComma() ||
        parser.parseInteger(right) || parser.parseRParen())
      return failure();
    MaskAttr attr =
        MaskAttr::getChecked([&] { return parser.emitError(sizeLoc); },
                             parser.getContext(), *kind, 0, left, right);
    if (!attr)
      return failure();
    return attr;
  }
  if (!MaskAttr::kindHasBlock(*kind)) {
    if (succeeded(parser.parseOptionalLParen())) {
      parser.emitError(loc) << "mask '" << keyword << "' takes no block size";
      return failure();
    }
  } else if (succeeded(parser.parseOptionalLParen())) {
    SMLoc blockLoc = parser.getCurrentLocation();
    if (parser.parseInteger(block) || parser.parseRParen())
      return failure();
    loc = blockLoc;
  } else {
    parser.emitError(loc) << "mask '" << keyword
                          << "' needs a block size: " << keyword << "(c)";
    return failure();
  }
  MaskAttr attr = MaskAttr::getChecked([&] { return parser.emitError(loc); },
                                       parser.getContext(), *kind, block, 0, 0);
  if (!attr)
    return failure();
  return attr;
}

void mlir::attn::printMaskClause(AsmPrinter &printer, MaskAttr mask) {
  printer << stringifyMaskKind(mask.getKind());
  if (mask.hasBlock())
    printer << "(" << mask.getBlock() << ")";
  if (mask.getKind() == MaskKind::Window)
    printer << "(" << mask.getLeft() << ", " << mask.getRight() << ")";
}

Attribute MaskAttr::parse(AsmParser &parser, Type) {
  if (parser.parseLess())
    return {};
  FailureOr<MaskAttr> mask = parseMaskClause(parser);
  if (failed(mask) || parser.parseGreater())
    return {};
  return *mask;
}

void MaskAttr::print(AsmPrinter &printer) const {
  printer << "<";
  printMaskClause(printer, *this);
  printer << ">";
}
