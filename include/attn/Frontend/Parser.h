//===- Parser.h - Parse and check .attn specs -------------------*- C++ -*-===//
//
// The language is documented in docs/language.md. Both entry points stop at
// the first mistake and describe it with its location; plain C++ (no
// LLVM/MLIR), so that the libFuzzer target exercises exactly this code.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_FRONTEND_PARSER_H
#define ATTN_FRONTEND_PARSER_H

#include "attn/Frontend/AST.h"

#include <map>
#include <optional>

namespace attn {
namespace frontend {

/// Parses \p source. Returns the syntax tree, or std::nullopt with \p error
/// set to the first syntax error.
std::optional<Spec> parseSpec(const SourceFile &source, Diagnostic &error);

/// Resolves names and checks what the language itself requires: unique
/// names, declared sizes, known inputs with the right rank for their role,
/// a score per term, a value input, no unused input. Fills in the default
/// references (`q`, `k`, `v`). Constraints between attributes and sizes are
/// left to the attn dialect's verifier, whose messages attnc reports at the
/// term's location. Returns false with \p error set on the first mistake.
bool checkSpec(Spec &spec, Diagnostic &error);

/// Concrete sizes: every `dim` with its value.
using SizeBindings = std::map<std::string, int64_t>;

/// Binds every `dim`: from \p overrides (`--set NAME=VALUE`) where given,
/// else from its declared value. A dynamic dim left unbound is an error
/// unless \p allowUnbound, in which case it is left out of the result.
bool bindSizes(const Spec &spec, const SizeBindings &overrides,
               bool allowUnbound, SizeBindings &result, Diagnostic &error);

/// Checks the sizes that the language ties together and the dialect cannot
/// see on one op: every term's query has the output's B, H and N, and the
/// gate is [B, H, N, E]. Sizes unbound in \p sizes match anything.
bool checkShapes(const Spec &spec, const SizeBindings &sizes,
                 Diagnostic &error);

/// The concrete shape of \p input under \p sizes; -1 for an unbound dim.
std::vector<int64_t> concreteShape(const InputDecl &input,
                                   const SizeBindings &sizes);

} // namespace frontend
} // namespace attn

#endif // ATTN_FRONTEND_PARSER_H
