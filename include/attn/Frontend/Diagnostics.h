//===- Diagnostics.h - Spec source files and their diagnostics --*- C++ -*-===//
//
// Plain C++ (no LLVM/MLIR) so that the parser can be fuzzed and reused on
// its own.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_FRONTEND_DIAGNOSTICS_H
#define ATTN_FRONTEND_DIAGNOSTICS_H

#include <string>
#include <vector>

namespace attn {
namespace frontend {

/// A 1-based line and column in a spec file; line 0 means "no location".
struct SourceLocation {
  int line = 0;
  int column = 0;
  bool isValid() const { return line > 0; }
};

/// The text of one spec file, for rendering diagnostics with the source line.
class SourceFile {
public:
  SourceFile(std::string name, std::string text);

  const std::string &getName() const { return name; }
  const std::string &getText() const { return text; }
  /// The text of 1-based line \p line, without its line break.
  std::string getLine(int line) const;

  /// `file:line:col: error: message`, then the source line and a caret.
  std::string render(SourceLocation loc, const std::string &message,
                     const char *severity = "error") const;

private:
  std::string name;
  std::string text;
  std::vector<size_t> lineStarts;
};

/// The first error found in a spec; later stages stop at the first error so
/// that every mistake gives exactly one, precise message.
struct Diagnostic {
  SourceLocation loc;
  std::string message;
};

/// "a, b or c".
std::string listChoices(const std::vector<std::string> &choices);

/// "; did you mean 'x'?" when one of \p choices is close to \p word, else
/// "; expected a, b or c".
std::string suggest(const std::string &word,
                    const std::vector<std::string> &choices);

} // namespace frontend
} // namespace attn

#endif // ATTN_FRONTEND_DIAGNOSTICS_H
