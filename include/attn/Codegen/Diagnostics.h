//===- Diagnostics.h - Errors that point into the input ---------*- C++ -*-===//
//
// The canonicalizer gives the constants it hoists and folds an unknown
// location, and every op bufferized or lowered from such a constant
// inherits it (a `memref.get_global` of a folded `arith.constant`, say). An
// error at one of them would say `<unknown>:0`; these helpers put it at the
// nearest enclosing op that has a place in the input instead.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_DIAGNOSTICS_H
#define ATTN_CODEGEN_DIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/OperationSupport.h"

namespace mlir {
namespace attn {

/// True if \p loc names a place in a file (possibly through name, call-site
/// or fused locations).
inline bool hasFileLocation(Location loc) {
  bool found = false;
  loc->walk([&](Location inner) {
    found = isa<FileLineColRange>(inner);
    return found ? WalkResult::interrupt() : WalkResult::advance();
  });
  return found;
}

/// The location of \p op if it has a place in a file, else that of its
/// nearest ancestor that has one (else \p op's own).
inline Location locationInInput(Operation *op) {
  for (Operation *at = op; at; at = at->getParentOp())
    if (hasFileLocation(at->getLoc()))
      return at->getLoc();
  return op->getLoc();
}

/// Like `op->emitError(message)`, but at locationInInput(op).
inline InFlightDiagnostic emitErrorInInput(Operation *op,
                                           const Twine &message = {}) {
  InFlightDiagnostic diag = emitError(locationInInput(op), message);
  if (op->getContext()->shouldPrintOpOnDiagnostic())
    diag.attachNote(op->getLoc())
        .append("see current operation: ")
        .appendOp(*op, OpPrintingFlags().printGenericOpForm());
  return diag;
}

/// Like `op->emitOpError(message)`, but at locationInInput(op).
inline InFlightDiagnostic emitOpErrorInInput(Operation *op,
                                             const Twine &message = {}) {
  return emitErrorInInput(op, Twine('\'') + op->getName().getStringRef() +
                                  "' op " + message);
}

} // namespace attn
} // namespace mlir

#endif // ATTN_CODEGEN_DIAGNOSTICS_H
