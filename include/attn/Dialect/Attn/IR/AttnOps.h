//===- AttnOps.h - Operations of the attn dialect ---------------*- C++ -*-===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNOPS_H
#define ATTN_DIALECT_ATTN_IR_ATTNOPS_H

#include "attn/Dialect/Attn/IR/AttnAttrs.h"
#include "attn/Dialect/Attn/IR/AttnDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <optional>

#define GET_OP_CLASSES
#include "attn/Dialect/Attn/IR/AttnOps.h.inc"

namespace mlir {
namespace attn {
/// The largest sequence tile (`chunk`) a strategy uses: attn-select-order
/// clamps a larger user-given chunk to it with a remark (the tiles are
/// chunk x chunk scores and chunk-row operands: beyond this they leave every
/// cache and only cost memory), and convert-attn-to-linalg never tiles
/// wider.
constexpr int64_t kMaxChunk = 1024;
} // namespace attn
} // namespace mlir

#endif // ATTN_DIALECT_ATTN_IR_ATTNOPS_H
