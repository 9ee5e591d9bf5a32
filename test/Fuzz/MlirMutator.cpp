//===- MlirMutator.cpp - Structure-aware mutations of MLIR text -----------===//
//
// Each mutation finds a piece of MLIR syntax in the text (a shaped type, a
// dimension, an SSA use, an op on one line, an attn.term clause, a property
// of the generic form, a function header, ...) and rewrites it the way a
// user, a buggy front end or an earlier pass could: other types and sizes,
// other or missing attributes, operands and results, ops moved into
// regions where no pass expects them, changed signatures. A mutation that
// finds nothing to change reports so and another one is drawn.
//
// The scanners are deliberately simple (MLIR as printed by MLIR and as
// written in examples/ and test/: one op per line, regions opened at the end
// of a line); text they misread only makes a mutant that does not parse.
//
//===----------------------------------------------------------------------===//

#include "MlirMutator.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <set>
#include <utility>

using namespace attn::fuzz;

namespace {

//===----------------------------------------------------------------------===//
// Interesting values
//===----------------------------------------------------------------------===//

const std::vector<std::string> kDims = {"?",
                                        "?",
                                        "?",
                                        "0",
                                        "1",
                                        "1",
                                        "2",
                                        "3",
                                        "7",
                                        "8",
                                        "16",
                                        "17",
                                        "31",
                                        "32",
                                        "33",
                                        "63",
                                        "64",
                                        "65",
                                        "127",
                                        "128",
                                        "256",
                                        "1000",
                                        "1024",
                                        "4096",
                                        "65536",
                                        "1048576",
                                        "2147483647",
                                        "2147483648",
                                        "4294967296",
                                        "4611686018427387904",
                                        "9223372036854775807",
                                        "9223372036854775808",
                                        "-1",
                                        "-2"};

const std::vector<std::string> kInts = {"0",
                                        "1",
                                        "-1",
                                        "2",
                                        "3",
                                        "7",
                                        "8",
                                        "64",
                                        "255",
                                        "256",
                                        "4096",
                                        "1000000",
                                        "2147483647",
                                        "-2147483648",
                                        "4294967296",
                                        "4611686018427387904",
                                        "9223372036854775807",
                                        "-9223372036854775808",
                                        "18446744073709551615"};

const std::vector<std::string> kFloats = {"0.0",
                                          "-0.0",
                                          "1.0",
                                          "-1.0",
                                          "0.5",
                                          "1.0e-6",
                                          "1.0e+30",
                                          "1.0e+308",
                                          "1.0e-320",
                                          "3.4e+38",
                                          "1.0e+400",
                                          "0x7FF8000000000000",
                                          "0x7FF0000000000000",
                                          "0xFFF0000000000000",
                                          "0x0000000000000001"};

const std::vector<std::string> kElementTypes = {
    "f16",  "bf16",         "f64",           "f32",   "i32",
    "i1",   "i8",           "i64",           "index", "f8E4M3FN",
    "tf32", "complex<f32>", "vector<4xf32>", "ui32"};

const std::vector<std::string> kArgTypes = {"i32",
                                            "index",
                                            "f32",
                                            "tensor<*xf32>",
                                            "tensor<?xf32>",
                                            "tensor<f32>",
                                            "memref<4xf32>",
                                            "memref<?x?xf32>",
                                            "vector<4xf32>",
                                            "!llvm.ptr",
                                            "none",
                                            "tuple<>",
                                            "complex<f32>",
                                            "tensor<1x8x?x64xf16>",
                                            "tensor<1x1x1x1xf32>",
                                            "tensor<?x?x?x?xf32>",
                                            "memref<1x8x16x64xf32>",
                                            "tensor<2x3xf32>",
                                            "tensor<1x2x16x8xf32>"};

// Keyword families of the attn.term custom form and of the attribute
// mnemonics (#attn.score<...>, ...).
const std::vector<std::vector<std::string>> kKeywordFamilies = {
    {"softmax", "relu2", "kernel"},
    {"identity", "relu", "elu1", "favor_plus", "cosformer"},
    {"none", "causal", "block", "block_causal", "prior_blocks", "window"},
    {"rows", "length", "none"},
    {"auto", "qk_first", "kv_first"},
    {"omega", "project", "mask", "normalizer", "scale", "eps", "order", "chunk",
     "crossover", "softcap", "alibi", "sink", "key_lengths", "query_lengths"},
    {"score", "feature_map", "mask", "normalizer", "order"}};

const std::vector<std::string> kClauseWords = {
    "omega", "project", "mask",      "normalizer", "scale", "eps",
    "order", "chunk",   "crossover", "softcap",    "alibi"};

const std::vector<std::string> kMaskValues = {
    "none",
    "causal",
    "block(1)",
    "block(4)",
    "block(0)",
    "block(-3)",
    "block_causal(2)",
    "block_causal(256)",
    "prior_blocks(8)",
    "prior_blocks(9223372036854775807)",
    "causal(4)",
    "block",
    "window(3, 0)",
    "window(0, 0)",
    "window(-1, 2)",
    "window(4)",
    "window(9223372036854775807, 9223372036854775807)"};

const std::vector<std::string> kAttrValues = {
    "#attn.score<softmax>",
    "#attn.score<relu2>",
    "#attn.score<kernel>",
    "#attn.feature_map<identity>",
    "#attn.feature_map<relu>",
    "#attn.feature_map<elu1>",
    "#attn.feature_map<favor_plus>",
    "#attn.feature_map<cosformer>",
    "#attn.mask<none>",
    "#attn.mask<causal>",
    "#attn.mask<block(4)>",
    "#attn.mask<block_causal(1)>",
    "#attn.mask<prior_blocks(2)>",
    "#attn.mask<block(9223372036854775807)>",
    "#attn.normalizer<rows>",
    "#attn.normalizer<length>",
    "#attn.normalizer<none>",
    "#attn.order<auto>",
    "#attn.order<qk_first>",
    "#attn.order<kv_first>",
    "64 : i64",
    "1 : i64",
    "0 : i64",
    "-1 : i64",
    "9223372036854775807 : i64",
    "64 : i32",
    "64 : index",
    "1.000000e+00 : f64",
    "0.000000e+00 : f64",
    "-1.000000e+00 : f64",
    "0x7FF8000000000000 : f64",
    "0x7FF0000000000000 : f64",
    "1.000000e+00 : f32",
    "true",
    "unit",
    "\"softmax\"",
    "[]",
    "[1, 2]",
    "{}",
    "array<i32: 1, 1, 1, 0, 0, 0>",
    "array<i64: 1, 1, 1, 0, 0, 0>",
    "dense<1> : vector<6xi32>",
    "@softmax",
    "affine_map<(d0) -> (d0)>",
    "i32",
    "f32"};

const std::vector<std::string> kPropNames = {
    "score",       "feature_map",
    "mask",        "normalizer",
    "scale",       "eps",
    "order",       "chunk",
    "crossover",   "operandSegmentSizes",
    "softcap",     "alibi",
    "fuzz_unknown"};

const std::vector<std::string> kArgAttrs = {"{bufferization.writable = false}",
                                            "{bufferization.writable = true}",
                                            "{llvm.noalias}",
                                            "{bufferization.access = \"read\"}",
                                            "{llvm.align = 16 : i64}",
                                            "{attn.unknown = 1 : i64}"};

const std::vector<std::string> kFuncAttrs = {
    "attributes {llvm.emit_c_interface}",
    "attributes {passthrough = [\"noinline\"]}", "attributes {gpu.kernel}",
    "attributes {attn.kernel = \"x\"}",
    "attributes {llvm.linkage = #llvm.linkage<internal>}"};

//===----------------------------------------------------------------------===//
// Scanning
//===----------------------------------------------------------------------===//

bool isIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' ||
         c == '.';
}

std::string trim(const std::string &s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos)
    return "";
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

bool startsWith(const std::string &s, const std::string &prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

bool isOpen(char c) { return c == '(' || c == '[' || c == '{' || c == '<'; }
bool isClose(char c) { return c == ')' || c == ']' || c == '}' || c == '>'; }

/// The index of the bracket closing the one at \p open (any of ([{<, all
/// counted together; `->` is not a bracket; string literals are skipped), or
/// npos.
size_t matchingClose(const std::string &s, size_t open) {
  int depth = 0;
  for (size_t i = open; i < s.size(); ++i) {
    char c = s[i];
    if (c == '"') {
      for (++i; i < s.size() && s[i] != '"'; ++i)
        if (s[i] == '\\')
          ++i;
      continue;
    }
    if (c == '-' && i + 1 < s.size() && s[i + 1] == '>') {
      ++i;
      continue;
    }
    if (isOpen(c))
      ++depth;
    else if (isClose(c) && --depth == 0)
      return i;
  }
  return std::string::npos;
}

/// Splits \p s at the top-level occurrences of \p sep.
std::vector<std::string> splitTopLevel(const std::string &s, char sep) {
  std::vector<std::string> parts;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '"') {
      for (++i; i < s.size() && s[i] != '"'; ++i)
        if (s[i] == '\\')
          ++i;
      continue;
    }
    if (c == '-' && i + 1 < s.size() && s[i + 1] == '>') {
      ++i;
      continue;
    }
    if (isOpen(c))
      ++depth;
    else if (isClose(c))
      --depth;
    else if (c == sep && depth == 0) {
      parts.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  parts.push_back(s.substr(start));
  return parts;
}

std::string join(const std::vector<std::string> &parts,
                 const std::string &sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i)
    out += (i ? sep : "") + parts[i];
  return out;
}

/// The position of the last top-level occurrence of \p needle in \p s.
size_t findLastTopLevel(const std::string &s, const std::string &needle) {
  int depth = 0;
  size_t found = std::string::npos;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '"') {
      for (++i; i < s.size() && s[i] != '"'; ++i)
        if (s[i] == '\\')
          ++i;
      continue;
    }
    if (depth == 0 && s.compare(i, needle.size(), needle) == 0)
      found = i;
    if (c == '-' && i + 1 < s.size() && s[i + 1] == '>') {
      ++i;
      continue;
    }
    if (isOpen(c))
      ++depth;
    else if (isClose(c))
      --depth;
  }
  return found;
}

/// Lines as [begin, end) offsets (without the '\n').
struct LineSpan {
  size_t begin, end;
};

std::vector<LineSpan> splitLines(const std::string &text) {
  std::vector<LineSpan> lines;
  size_t begin = 0;
  for (size_t i = 0; i <= text.size(); ++i)
    if (i == text.size() || text[i] == '\n') {
      lines.push_back({begin, i});
      begin = i + 1;
    }
  return lines;
}

/// True if the (), [] and {} of \p line balance (strings skipped).
bool balanced(const std::string &line) {
  int paren = 0, square = 0, brace = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (c == '"') {
      for (++i; i < line.size() && line[i] != '"'; ++i)
        if (line[i] == '\\')
          ++i;
      continue;
    }
    paren += c == '(' ? 1 : c == ')' ? -1 : 0;
    square += c == '[' ? 1 : c == ']' ? -1 : 0;
    brace += c == '{' ? 1 : c == '}' ? -1 : 0;
    if (paren < 0 || square < 0 || brace < 0)
      return false;
  }
  return paren == 0 && square == 0 && brace == 0;
}

/// An SSA value token `%name` (with `#n` result numbers kept out).
struct SsaToken {
  size_t pos, len;
  bool isDef;
};

std::vector<SsaToken> scanSsa(const std::string &text, size_t begin,
                              size_t end) {
  std::vector<SsaToken> tokens;
  for (size_t i = begin; i < end; ++i) {
    if (text[i] == '"') {
      for (++i; i < end && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
      continue;
    }
    if (text[i] != '%')
      continue;
    size_t j = i + 1;
    while (j < end && isIdentChar(text[j]))
      ++j;
    if (j == i + 1)
      continue;
    // A definition: `%x = `, `%x:2 = ` or an argument `%x: type`.
    size_t k = j;
    bool isDef = false;
    if (k < end && text[k] == ':') {
      size_t d = k + 1;
      while (d < end && std::isdigit(static_cast<unsigned char>(text[d])))
        ++d;
      if (d == k + 1)
        isDef = true; // `%x: type`
      else
        k = d;
    }
    if (!isDef) {
      size_t e = k;
      while (e < end && text[e] == ' ')
        ++e;
      isDef = e < end && text[e] == '=' && (e + 1 >= end || text[e + 1] != '=');
    }
    tokens.push_back({i, j - i, isDef});
    i = j - 1;
  }
  return tokens;
}

/// A shaped type `tensor<...>`, `memref<...>` or `vector<...>` in the text.
struct ShapedSpan {
  size_t begin, end; // the whole type, end past '>'
};

std::vector<ShapedSpan> scanShapedTypes(const std::string &text) {
  std::vector<ShapedSpan> spans;
  for (const char *kind : {"tensor<", "memref<", "vector<"}) {
    std::string k = kind;
    for (size_t pos = text.find(k); pos != std::string::npos;
         pos = text.find(k, pos + 1)) {
      if (pos > 0 && (isIdentChar(text[pos - 1]) || text[pos - 1] == '!'))
        continue;
      size_t close = matchingClose(text, pos + k.size() - 1);
      if (close == std::string::npos)
        continue;
      spans.push_back({pos, close + 1});
    }
  }
  std::sort(spans.begin(), spans.end(),
            [](const ShapedSpan &a, const ShapedSpan &b) {
              return a.begin < b.begin;
            });
  return spans;
}

/// A shaped type taken apart: kind<dims x elem[, rest]>.
struct Shape {
  std::string kind; // tensor, memref, vector
  bool unranked = false;
  std::vector<std::string> dims;
  std::string elem;
  std::string rest; // encoding / layout / memory space, with its comma

  static bool parse(const std::string &type, Shape &shape) {
    size_t lt = type.find('<');
    if (lt == std::string::npos || type.back() != '>')
      return false;
    shape.kind = type.substr(0, lt);
    std::string body = type.substr(lt + 1, type.size() - lt - 2);
    size_t i = 0;
    if (startsWith(body, "*x")) {
      shape.unranked = true;
      i = 2;
    }
    while (i < body.size()) {
      size_t j = i;
      if (body[j] == '?')
        ++j;
      else {
        if (body[j] == '-')
          ++j;
        while (j < body.size() &&
               std::isdigit(static_cast<unsigned char>(body[j])))
          ++j;
      }
      if (j == i || j >= body.size() || body[j] != 'x' ||
          (body[i] == '-' && j == i + 1))
        break;
      shape.dims.push_back(body.substr(i, j - i));
      i = j + 1;
    }
    std::vector<std::string> parts = splitTopLevel(body.substr(i), ',');
    shape.elem = trim(parts[0]);
    for (size_t p = 1; p < parts.size(); ++p)
      shape.rest += "," + parts[p];
    return !shape.elem.empty();
  }

  std::string str() const {
    std::string out = kind + "<";
    if (unranked)
      out += "*x";
    for (const std::string &d : dims)
      out += d + "x";
    return out + elem + rest + ">";
  }
};

/// A function written in the custom form: `func.func [vis] @name(args)
/// [-> results] [attributes {...}] {` on one line, its body up to the
/// matching `}`.
struct FuncSpan {
  size_t header;    // start of the header line
  size_t argsOpen;  // '(' of the arguments
  size_t argsClose; // its ')'
  size_t bodyOpen;  // '{' of the body
  size_t bodyClose; // its '}'
  std::string name;
};

std::vector<FuncSpan> scanFuncs(const std::string &text) {
  std::vector<FuncSpan> funcs;
  for (LineSpan line : splitLines(text)) {
    std::string l = text.substr(line.begin, line.end - line.begin);
    size_t kw = l.find("func.func ");
    if (kw == std::string::npos || l.find('"') < kw || trim(l).back() != '{')
      continue;
    size_t at = l.find('@', kw);
    if (at == std::string::npos)
      continue;
    size_t paren = l.find('(', at);
    if (paren == std::string::npos)
      continue;
    FuncSpan f;
    f.header = line.begin;
    f.name = l.substr(at + 1, paren - at - 1);
    f.argsOpen = line.begin + paren;
    f.argsClose = matchingClose(text, f.argsOpen);
    f.bodyOpen = line.begin + l.rfind('{');
    if (f.argsClose == std::string::npos || f.argsClose > f.bodyOpen)
      continue;
    f.bodyClose = matchingClose(text, f.bodyOpen);
    if (f.bodyClose == std::string::npos)
      continue;
    funcs.push_back(f);
  }
  return funcs;
}

/// An op on one line: `[%r = ]rest`.
struct OpLine {
  size_t begin, end; // the line
  std::string indent;
  std::string result; // "%r" or "" (several results count as none)
  std::string rest;   // the op after `%r = `
  bool terminator;
};

bool isTerminatorText(const std::string &t) {
  for (const char *prefix :
       {"return", "func.return", "\"func.return\"", "scf.yield",
        "\"scf.yield\"", "linalg.yield", "gpu.terminator", "gpu.return",
        "scf.reduce", "cf.br", "cf.cond_br", "scf.condition", "affine.yield"})
    if (startsWith(t, prefix))
      return true;
  return false;
}

std::vector<OpLine> scanOpLines(const std::string &text) {
  std::vector<OpLine> ops;
  for (LineSpan line : splitLines(text)) {
    std::string l = text.substr(line.begin, line.end - line.begin);
    std::string t = trim(l);
    if (t.empty() || startsWith(t, "//") || t[0] == '^' || t[0] == '}' ||
        t[0] == '{' || t.find("func.func") != std::string::npos ||
        t.find("module") != std::string::npos || !balanced(t))
      continue;
    // An op starts with its results, a quoted (generic) name, a dotted
    // name or `return`; anything else is, say, a line of a multi-line
    // attribute.
    if (!(t[0] == '%' || t[0] == '"' || startsWith(t, "return"))) {
      size_t name = 0;
      while (name < t.size() && (std::isalnum((unsigned char)t[name]) ||
                                 t[name] == '_' || t[name] == '.'))
        ++name;
      if (name == 0 || t.substr(0, name).find('.') == std::string::npos ||
          !std::isalpha((unsigned char)t[0]))
        continue;
    }
    OpLine op;
    op.begin = line.begin;
    op.end = line.end;
    op.indent = l.substr(0, l.find_first_not_of(" \t"));
    op.terminator = isTerminatorText(t);
    if (t[0] == '%') {
      size_t eq = t.find(" = ");
      if (eq == std::string::npos)
        continue;
      std::string lhs = t.substr(0, eq);
      if (lhs.find(',') == std::string::npos &&
          lhs.find(':') == std::string::npos)
        op.result = lhs;
      op.rest = t.substr(eq + 3);
    } else {
      op.rest = t;
    }
    ops.push_back(op);
  }
  return ops;
}

/// The result type of a one-result op line: what follows the last top-level
/// `->`, else the last top-level ` : `.
std::string resultType(const std::string &rest) {
  size_t arrow = findLastTopLevel(rest, "->");
  std::string type;
  if (arrow != std::string::npos) {
    type = trim(rest.substr(arrow + 2));
  } else {
    size_t colon = findLastTopLevel(rest, " : ");
    if (colon == std::string::npos)
      return "";
    type = trim(rest.substr(colon + 3));
  }
  // `: T1 to T2` (casts, views): the result is T2.
  if (size_t to = findLastTopLevel(type, " to "); to != std::string::npos)
    type = trim(type.substr(to + 4));
  if (!type.empty() && type[0] == '(' &&
      matchingClose(type, 0) == type.size() - 1)
    type = trim(type.substr(1, type.size() - 2));
  if (type.empty() || splitTopLevel(type, ',').size() != 1 ||
      type.find('{') != std::string::npos)
    return "";
  return type;
}

/// The uses of SSA values in \p s, as [pos, len).
std::vector<std::pair<size_t, size_t>> usesIn(const std::string &s) {
  std::vector<std::pair<size_t, size_t>> uses;
  for (const SsaToken &t : scanSsa(s, 0, s.size()))
    if (!t.isDef)
      uses.push_back({t.pos, t.len});
  return uses;
}

/// The end of the region that holds \p pos: its closing '}' (or the end of
/// the text). SSA names are scoped to it.
size_t regionEnd(const std::string &text, size_t pos) {
  int depth = 0;
  for (size_t i = pos; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
      continue;
    }
    if (c == '{')
      ++depth;
    else if (c == '}' && --depth < 0)
      return i;
  }
  return text.size();
}

/// Replaces whole-token uses of \p from by \p to in \p text from \p begin
/// to the end of the region there.
void renameUses(std::string &text, size_t begin, const std::string &from,
                const std::string &to) {
  std::vector<SsaToken> tokens = scanSsa(text, begin, regionEnd(text, begin));
  for (auto it = tokens.rbegin(); it != tokens.rend(); ++it)
    if (!it->isDef && text.compare(it->pos, it->len, from) == 0 &&
        it->len == from.size())
      text.replace(it->pos, it->len, to);
}

//===----------------------------------------------------------------------===//
// The mutation context
//===----------------------------------------------------------------------===//

struct Ctx {
  std::string &text;
  Rng &rng;
  bool generic;
  int fresh = 0;

  std::string freshName(const char *stem = "fz") {
    return "%" + std::string(stem) + std::to_string(fresh++);
  }

  /// The types of values whose types the text states: function and block
  /// arguments, and one-result op lines.
  std::map<std::string, std::string> typeEnv() const {
    std::map<std::string, std::string> env;
    auto addArgs = [&](const std::string &args) {
      for (const std::string &arg : splitTopLevel(args, ',')) {
        std::string a = trim(arg);
        size_t colon = a.find(':');
        if (a.empty() || a[0] != '%' || colon == std::string::npos)
          continue;
        std::string type = trim(a.substr(colon + 1));
        size_t attrs = type.find(" {");
        if (attrs != std::string::npos)
          type = type.substr(0, attrs);
        env[a.substr(0, colon)] = type;
      }
    };
    for (const FuncSpan &f : scanFuncs(text))
      addArgs(text.substr(f.argsOpen + 1, f.argsClose - f.argsOpen - 1));
    for (LineSpan line : splitLines(text)) {
      std::string t = trim(text.substr(line.begin, line.end - line.begin));
      if (startsWith(t, "^") && t.find('(') != std::string::npos) {
        size_t open = t.find('(');
        size_t close = matchingClose(t, open);
        if (close != std::string::npos)
          addArgs(t.substr(open + 1, close - open - 1));
      }
    }
    for (const OpLine &op : scanOpLines(text))
      if (!op.result.empty()) {
        std::string type = resultType(op.rest);
        if (!type.empty())
          env[op.result] = type;
      }
    return env;
  }

  std::vector<OpLine> movableOps() const {
    std::vector<OpLine> ops;
    for (const OpLine &op : scanOpLines(text))
      if (!op.terminator && !op.result.empty() && !resultType(op.rest).empty())
        ops.push_back(op);
    return ops;
  }

  /// Prefers attn ops (the point of the exercise) two times in three.
  bool pickOp(const std::vector<OpLine> &ops, OpLine &op) {
    if (ops.empty())
      return false;
    std::vector<OpLine> attnOps;
    for (const OpLine &o : ops)
      if (o.rest.find("attn.") != std::string::npos)
        attnOps.push_back(o);
    op = (!attnOps.empty() && rng.chance(2, 3)) ? rng.pick(attnOps)
                                                : rng.pick(ops);
    return true;
  }

  std::string line(const OpLine &op) const {
    return text.substr(op.begin, op.end - op.begin);
  }
};

using Mutation = bool (*)(Ctx &);

//===----------------------------------------------------------------------===//
// Types and shapes
//===----------------------------------------------------------------------===//

/// Rewrites every shaped type for which \p edit returns true.
template <typename Fn> bool editShapes(Ctx &c, Fn edit) {
  std::vector<ShapedSpan> spans = scanShapedTypes(c.text);
  bool changed = false;
  for (auto it = spans.rbegin(); it != spans.rend(); ++it) {
    std::string type = c.text.substr(it->begin, it->end - it->begin);
    Shape shape;
    if (!Shape::parse(type, shape) || !edit(shape))
      continue;
    c.text.replace(it->begin, it->end - it->begin, shape.str());
    changed = true;
  }
  return changed;
}

bool pickShape(Ctx &c, ShapedSpan &span, Shape &shape, bool needDims) {
  std::vector<ShapedSpan> spans = scanShapedTypes(c.text);
  std::vector<ShapedSpan> ok;
  for (const ShapedSpan &s : spans) {
    Shape sh;
    if (Shape::parse(c.text.substr(s.begin, s.end - s.begin), sh) &&
        (!needDims || !sh.dims.empty()))
      ok.push_back(s);
  }
  if (ok.empty())
    return false;
  span = c.rng.pick(ok);
  return Shape::parse(c.text.substr(span.begin, span.end - span.begin), shape);
}

bool dimOne(Ctx &c) {
  ShapedSpan span;
  Shape shape;
  if (!pickShape(c, span, shape, true))
    return false;
  shape.dims[c.rng.below(shape.dims.size())] = c.rng.pick(kDims);
  c.text.replace(span.begin, span.end - span.begin, shape.str());
  return true;
}

bool dimGlobal(Ctx &c) {
  std::set<std::string> present;
  editShapes(c, [&](Shape &s) {
    present.insert(s.dims.begin(), s.dims.end());
    return false;
  });
  if (present.empty())
    return false;
  std::vector<std::string> values(present.begin(), present.end());
  std::string from = c.rng.pick(values), to = c.rng.pick(kDims);
  if (from == to)
    return false;
  return editShapes(c, [&](Shape &s) {
    bool changed = false;
    for (std::string &d : s.dims)
      if (d == from) {
        d = to;
        changed = true;
      }
    return changed;
  });
}

/// One of B, H, N, D in every rank-4 tensor.
bool dimPosition(Ctx &c) {
  size_t position = c.rng.below(4);
  std::string to = c.rng.pick(kDims);
  return editShapes(c, [&](Shape &s) {
    if (s.dims.size() != 4 || s.kind != "tensor")
      return false;
    s.dims[position] = to;
    return true;
  });
}

bool elemOne(Ctx &c) {
  ShapedSpan span;
  Shape shape;
  if (!pickShape(c, span, shape, false))
    return false;
  shape.elem = c.rng.pick(kElementTypes);
  c.text.replace(span.begin, span.end - span.begin, shape.str());
  return true;
}

bool elemGlobal(Ctx &c) {
  std::string from = "f32", to = c.rng.pick(kElementTypes);
  if (to == from)
    return false;
  return editShapes(c, [&](Shape &s) {
    if (s.elem != from)
      return false;
    s.elem = to;
    return true;
  });
}

void changeRank(Rng &rng, Shape &s, unsigned how) {
  if (how == 0 || s.dims.empty()) {
    s.dims.insert(s.dims.begin() + rng.below(s.dims.size() + 1),
                  rng.pick(kDims));
  } else if (how == 1) {
    s.dims.erase(s.dims.begin() + rng.below(s.dims.size()));
  } else if (s.kind != "vector") {
    s.unranked = true;
    s.dims.clear();
  } else {
    s.dims.clear();
  }
}

bool rankOne(Ctx &c) {
  ShapedSpan span;
  Shape shape;
  if (!pickShape(c, span, shape, false))
    return false;
  changeRank(c.rng, shape, c.rng.below(3));
  c.text.replace(span.begin, span.end - span.begin, shape.str());
  return true;
}

bool rankGlobal(Ctx &c) {
  unsigned how = c.rng.below(3);
  size_t rank = c.rng.chance(1, 2) ? 4 : 2;
  Rng local(c.rng.next());
  return editShapes(c, [&](Shape &s) {
    if (s.dims.size() != rank || s.unranked)
      return false;
    Rng same = local; // the same change in every type
    changeRank(same, s, how);
    return true;
  });
}

bool typeKind(Ctx &c) {
  static const std::vector<std::string> kinds = {"tensor", "memref", "vector"};
  std::string to = c.rng.pick(kinds);
  if (c.rng.chance(1, 2)) {
    ShapedSpan span;
    Shape shape;
    if (!pickShape(c, span, shape, false) || shape.kind == to)
      return false;
    shape.kind = to;
    c.text.replace(span.begin, span.end - span.begin, shape.str());
    return true;
  }
  std::string from = c.rng.pick(kinds);
  if (from == to)
    return false;
  return editShapes(c, [&](Shape &s) {
    if (s.kind != from)
      return false;
    s.kind = to;
    return true;
  });
}

//===----------------------------------------------------------------------===//
// attn.term clauses and keywords
//===----------------------------------------------------------------------===//

/// Whole-word occurrences of the keywords in \p words.
std::vector<std::pair<size_t, std::string>>
findWords(const std::string &text, const std::vector<std::string> &words,
          size_t begin = 0, size_t end = std::string::npos) {
  std::vector<std::pair<size_t, std::string>> found;
  end = std::min(end, text.size());
  for (size_t i = begin; i < end; ++i) {
    if (!std::isalpha(static_cast<unsigned char>(text[i])) ||
        (i > 0 &&
         (isIdentChar(text[i - 1]) || text[i - 1] == '%' ||
          text[i - 1] == '@' || text[i - 1] == '^' || text[i - 1] == '"')))
      continue;
    size_t j = i;
    while (j < end && (std::isalnum(static_cast<unsigned char>(text[j])) ||
                       text[j] == '_'))
      ++j;
    if (j < text.size() && text[j] == '.') {
      i = j;
      continue;
    }
    std::string word = text.substr(i, j - i);
    if (std::find(words.begin(), words.end(), word) != words.end())
      found.push_back({i, word});
    i = j;
  }
  return found;
}

bool keywordSwap(Ctx &c) {
  std::vector<std::string> all;
  for (const auto &family : kKeywordFamilies)
    all.insert(all.end(), family.begin(), family.end());
  auto found = findWords(c.text, all);
  if (found.empty())
    return false;
  auto [pos, word] = c.rng.pick(found);
  std::string to;
  if (c.rng.chance(9, 10)) {
    std::vector<const std::vector<std::string> *> families;
    for (const auto &family : kKeywordFamilies)
      if (std::find(family.begin(), family.end(), word) != family.end())
        families.push_back(&family);
    to = c.rng.pick(*c.rng.pick(families));
  } else {
    to = c.rng.pick(c.rng.pick(kKeywordFamilies));
  }
  if (to == word)
    return false;
  c.text.replace(pos, word.size(), to);
  return true;
}

/// Custom-form attn.term lines and the end of their operand list.
struct TermLine {
  OpLine op;
  size_t operandsOpen, operandsClose; // absolute offsets
};

std::vector<TermLine> customTerms(const std::string &text) {
  std::vector<TermLine> terms;
  for (const OpLine &op : scanOpLines(text)) {
    std::string l = text.substr(op.begin, op.end - op.begin);
    size_t kw = l.find("attn.term ");
    if (kw == std::string::npos || (kw > 0 && l[kw - 1] == '"'))
      continue;
    size_t open = l.find('(', kw);
    if (open == std::string::npos)
      continue;
    size_t close = matchingClose(l, open);
    if (close == std::string::npos)
      continue;
    terms.push_back({op, op.begin + open, op.begin + close});
  }
  return terms;
}

std::string anyValue(Ctx &c) {
  std::map<std::string, std::string> env = c.typeEnv();
  if (env.empty())
    return "%undefined";
  auto it = env.begin();
  std::advance(it, c.rng.below(env.size()));
  return it->first;
}

std::string randomClause(Ctx &c) {
  switch (c.rng.below(9)) {
  case 0:
    return c.rng.chance(1, 4) ? " chunk auto" : " chunk " + c.rng.pick(kInts);
  case 1:
    return " order " + c.rng.pick(std::vector<std::string>{
                           "auto", "qk_first", "kv_first", "sideways"});
  case 2:
    return " mask " + c.rng.pick(kMaskValues);
  case 3:
    return " normalizer " +
           c.rng.pick(std::vector<std::string>{"rows", "length", "none"});
  case 4:
    return " scale " + c.rng.pick(kFloats);
  case 5:
    return " eps " + c.rng.pick(kFloats);
  case 6:
    return " crossover " + c.rng.pick(kInts);
  case 7: {
    std::string type =
        c.rng.chance(1, 2)
            ? "tensor<" +
                  c.rng.pick(std::vector<std::string>{"16", "256", "?", "0"}) +
                  "x" +
                  c.rng.pick(std::vector<std::string>{"8", "64", "?", "3"}) +
                  "xf32>"
            : c.rng.pick(kArgTypes);
    return " omega(" + anyValue(c) + " : " + type + ")";
  }
  default: {
    std::string k = c.rng.pick(std::vector<std::string>{"4", "128", "?", "0"});
    std::string m = c.rng.pick(std::vector<std::string>{"16", "?", "4096"});
    std::string type = "tensor<" + k + "x" + m + "xf32>";
    return " project(" + anyValue(c) + ", " + anyValue(c) + " : " + type +
           ", " + type + ")";
  }
  }
}

bool clauseInsert(Ctx &c) {
  std::vector<TermLine> terms = customTerms(c.text);
  if (terms.empty())
    return false;
  const TermLine &t = c.rng.pick(terms);
  c.text.insert(t.operandsClose + 1, randomClause(c));
  return true;
}

/// The clauses of a custom attn.term: [begin, end) of `word argument`.
std::vector<std::pair<size_t, size_t>> clauses(const std::string &text,
                                               const TermLine &t) {
  std::vector<std::pair<size_t, size_t>> spans;
  size_t colon = text.find(" : ", t.operandsClose);
  size_t end = std::min(colon, t.op.end);
  for (auto [pos, word] : findWords(text, kClauseWords, t.operandsClose, end)) {
    size_t arg = pos + word.size();
    while (arg < end && text[arg] == ' ')
      ++arg;
    size_t stop = arg;
    if (stop < end && text[stop] == '(') {
      stop = matchingClose(text, stop);
      if (stop == std::string::npos || stop >= end)
        continue;
      ++stop;
    } else {
      while (stop < end && text[stop] != ' ')
        ++stop;
      if (stop < end && text[stop - 1] != ')' && text[stop] == '(') {
        size_t close = matchingClose(text, stop);
        if (close != std::string::npos)
          stop = close + 1;
      }
    }
    spans.push_back({pos - 1, stop}); // with the space before
  }
  return spans;
}

bool clauseDrop(Ctx &c) {
  std::vector<TermLine> terms = customTerms(c.text);
  if (terms.empty())
    return false;
  auto spans = clauses(c.text, c.rng.pick(terms));
  if (spans.empty())
    return false;
  auto [b, e] = c.rng.pick(spans);
  c.text.erase(b, e - b);
  return true;
}

bool clauseDuplicate(Ctx &c) {
  std::vector<TermLine> terms = customTerms(c.text);
  if (terms.empty())
    return false;
  const TermLine &t = c.rng.pick(terms);
  auto spans = clauses(c.text, t);
  if (spans.empty())
    return false;
  auto [b, e] = c.rng.pick(spans);
  std::string clause = c.text.substr(b, e - b);
  c.text.insert(t.operandsClose + 1, clause);
  return true;
}

//===----------------------------------------------------------------------===//
// Literals
//===----------------------------------------------------------------------===//

bool intLiteral(Ctx &c) {
  std::vector<std::pair<size_t, size_t>> found;
  const std::string &t = c.text;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] == '/' && i + 1 < t.size() && t[i + 1] == '/') {
      while (i < t.size() && t[i] != '\n')
        ++i;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(t[i])))
      continue;
    size_t j = i;
    while (j < t.size() && std::isdigit(static_cast<unsigned char>(t[j])))
      ++j;
    bool prefixOk =
        i == 0 || !(isIdentChar(t[i - 1]) || t[i - 1] == '%' ||
                    t[i - 1] == '^' || t[i - 1] == '#' || t[i - 1] == '-');
    bool suffixOk =
        j >= t.size() || !(isIdentChar(t[j]) || t[j] == 'x' || t[j] == '.');
    if (prefixOk && suffixOk)
      found.push_back({i, j - i});
    i = j;
  }
  if (found.empty())
    return false;
  auto [pos, len] = c.rng.pick(found);
  c.text.replace(pos, len, c.rng.pick(kInts));
  return true;
}

bool floatLiteral(Ctx &c) {
  std::vector<std::pair<size_t, size_t>> found;
  const std::string &t = c.text;
  for (size_t i = 0; i < t.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(t[i])) ||
        (i > 0 && (isIdentChar(t[i - 1]) || t[i - 1] == '%')))
      continue;
    size_t j = i;
    bool hex = t.compare(i, 2, "0x") == 0;
    if (hex) {
      j += 2;
      while (j < t.size() && std::isxdigit(static_cast<unsigned char>(t[j])))
        ++j;
      if (j - i < 10) { // hex floats of f64 have 16 digits
        i = j;
        continue;
      }
    } else {
      while (j < t.size() && std::isdigit(static_cast<unsigned char>(t[j])))
        ++j;
      if (j >= t.size() || t[j] != '.') {
        i = j;
        continue;
      }
      ++j;
      while (j < t.size() && std::isdigit(static_cast<unsigned char>(t[j])))
        ++j;
      if (j < t.size() && (t[j] == 'e' || t[j] == 'E')) {
        ++j;
        if (j < t.size() && (t[j] == '+' || t[j] == '-'))
          ++j;
        while (j < t.size() && std::isdigit(static_cast<unsigned char>(t[j])))
          ++j;
      }
    }
    size_t begin = (i > 0 && t[i - 1] == '-') ? i - 1 : i;
    found.push_back({begin, j - begin});
    i = j;
  }
  if (found.empty())
    return false;
  auto [pos, len] = c.rng.pick(found);
  c.text.replace(pos, len, c.rng.pick(kFloats));
  return true;
}

//===----------------------------------------------------------------------===//
// The generic form: properties and operandSegmentSizes
//===----------------------------------------------------------------------===//

/// `<{...}>` property dictionaries: [open of '{', close of '}').
std::vector<std::pair<size_t, size_t>> propDicts(const std::string &text,
                                                 bool attnOnly) {
  std::vector<std::pair<size_t, size_t>> dicts;
  for (const OpLine &op : scanOpLines(text)) {
    std::string l = text.substr(op.begin, op.end - op.begin);
    if (attnOnly && l.find("\"attn.") == std::string::npos)
      continue;
    size_t open = l.find("<{");
    if (open == std::string::npos)
      continue;
    size_t close = matchingClose(l, open + 1);
    if (close == std::string::npos)
      continue;
    dicts.push_back({op.begin + open + 1, op.begin + close});
  }
  return dicts;
}

/// The properties of attn ops only: those of upstream ops are MLIR's to
/// verify (their mutants find MLIR verifier bugs, see
/// regressions-mlir-pending/).
bool pickPropDict(Ctx &c, std::pair<size_t, size_t> &dict) {
  auto dicts = propDicts(c.text, /*attnOnly=*/true);
  if (dicts.empty())
    return false;
  dict = c.rng.pick(dicts);
  return true;
}

std::string randomEntry(Ctx &c) {
  return c.rng.pick(kPropNames) + " = " + c.rng.pick(kAttrValues);
}

bool propEdit(Ctx &c) {
  std::pair<size_t, size_t> dict;
  if (!pickPropDict(c, dict))
    return false;
  std::string body =
      c.text.substr(dict.first + 1, dict.second - dict.first - 1);
  std::vector<std::string> entries = splitTopLevel(body, ',');
  if (entries.size() == 1 && trim(entries[0]).empty())
    entries.clear();
  std::string moved;
  switch (c.rng.below(5)) {
  case 0: // drop
    if (entries.empty())
      return false;
    entries.erase(entries.begin() + c.rng.below(entries.size()));
    break;
  case 1: // duplicate
    if (entries.empty())
      return false;
    entries.push_back(c.rng.pick(entries));
    break;
  case 2: { // another value
    if (entries.empty())
      return false;
    std::string &entry = entries[c.rng.below(entries.size())];
    size_t eq = entry.find('=');
    if (eq == std::string::npos)
      return false;
    entry = entry.substr(0, eq + 1) + " " + c.rng.pick(kAttrValues);
    break;
  }
  case 3: // a new entry
    entries.push_back(" " + randomEntry(c));
    break;
  default: // into the discardable attribute dictionary
    if (entries.empty())
      return false;
    size_t i = c.rng.below(entries.size());
    moved = trim(entries[i]);
    entries.erase(entries.begin() + i);
    break;
  }
  std::string newBody = join(entries, ",");
  std::string replacement = "{" + newBody + "}";
  // `<{}>` prints as nothing; keep the empty form, MLIR accepts it.
  c.text.replace(dict.first, dict.second - dict.first + 1, replacement);
  if (!moved.empty())
    c.text.insert(dict.first + replacement.size() + 1, " {" + moved + "}");
  return true;
}

bool discardableAttr(Ctx &c) {
  // An attribute in the discardable dictionary of a generic op, or in the
  // attr-dict of a custom one (where attn.term refuses its own names).
  std::vector<OpLine> ops = scanOpLines(c.text);
  OpLine op;
  if (!c.pickOp(ops, op))
    return false;
  std::string l = c.line(op);
  size_t colon = findLastTopLevel(l, " : ");
  if (colon == std::string::npos)
    return false;
  c.text.insert(op.begin + colon, " {" + randomEntry(c) + "}");
  return true;
}

bool segments(Ctx &c) {
  const std::string key = "operandSegmentSizes = array<i32:";
  // Of attn ops only (see pickPropDict).
  std::vector<size_t> found;
  for (size_t pos = c.text.find(key); pos != std::string::npos;
       pos = c.text.find(key, pos + 1)) {
    size_t lineStart = c.text.rfind('\n', pos);
    lineStart = lineStart == std::string::npos ? 0 : lineStart + 1;
    if (c.text.substr(lineStart, pos - lineStart).find("\"attn.") !=
        std::string::npos)
      found.push_back(pos);
  }
  if (found.empty())
    return false;
  size_t pos = c.rng.pick(found) + key.size();
  size_t close = c.text.find('>', pos);
  if (close == std::string::npos)
    return false;
  std::vector<std::string> values =
      splitTopLevel(c.text.substr(pos, close - pos), ',');
  static const std::vector<std::string> counts = {"0", "1", "1", "1",
                                                  "2", "3", "-1"};
  switch (c.rng.below(4)) {
  case 0: // one count
    values[c.rng.below(values.size())] = " " + c.rng.pick(counts);
    break;
  case 1: // one more or one fewer segment
    if (c.rng.chance(1, 2) && values.size() > 1)
      values.pop_back();
    else
      values.push_back(" " + c.rng.pick(counts));
    break;
  case 2: // move a count between segments
  {
    size_t a = c.rng.below(values.size()), b = c.rng.below(values.size());
    std::swap(values[a], values[b]);
    break;
  }
  default: // all the operands in the first segment
  {
    long total = 0;
    for (const std::string &v : values)
      total += std::atol(trim(v).c_str());
    for (std::string &v : values)
      v = " 0";
    values[0] = " " + std::to_string(total);
    break;
  }
  }
  c.text.replace(pos, close - pos, join(values, ","));
  return true;
}

//===----------------------------------------------------------------------===//
// Operands and results
//===----------------------------------------------------------------------===//

bool operandSwap(Ctx &c) {
  OpLine op;
  if (!c.pickOp(scanOpLines(c.text), op))
    return false;
  std::string l = c.line(op);
  auto uses = usesIn(l);
  if (uses.size() < 2)
    return false;
  size_t a = c.rng.below(uses.size()), b = c.rng.below(uses.size());
  if (a == b)
    return false;
  if (a > b)
    std::swap(a, b);
  std::string ua = l.substr(uses[a].first, uses[a].second);
  std::string ub = l.substr(uses[b].first, uses[b].second);
  if (ua == ub)
    return false;
  l.replace(uses[b].first, uses[b].second, ua);
  l.replace(uses[a].first, uses[a].second, ub);
  c.text.replace(op.begin, op.end - op.begin, l);
  return true;
}

bool operandReplace(Ctx &c) {
  OpLine op;
  if (!c.pickOp(scanOpLines(c.text), op))
    return false;
  std::string l = c.line(op);
  auto uses = usesIn(l);
  if (uses.empty())
    return false;
  auto use = c.rng.pick(uses);
  std::string to;
  switch (c.rng.below(3)) {
  case 0: { // another operand of the op
    auto other = c.rng.pick(uses);
    to = l.substr(other.first, other.second);
    break;
  }
  case 1: // any value in scope (or out of it)
    to = anyValue(c);
    break;
  default: // undefined, or the op's own result
    to = c.rng.chance(1, 2) || op.result.empty() ? "%undefined" : op.result;
    break;
  }
  l.replace(use.first, use.second, to);
  c.text.replace(op.begin, op.end - op.begin, l);
  return true;
}

/// Generic form: `"name"(operands)` with its `: (types) ->`.
struct GenericOperands {
  size_t open, close;           // the operand list, relative to the line
  size_t typesOpen, typesClose; // the operand types
};

bool genericOperands(const std::string &l, GenericOperands &g) {
  size_t quote = l.find('"');
  if (quote == std::string::npos)
    return false;
  size_t endQuote = l.find('"', quote + 1);
  if (endQuote == std::string::npos || endQuote + 1 >= l.size() ||
      l[endQuote + 1] != '(')
    return false;
  g.open = endQuote + 1;
  g.close = matchingClose(l, g.open);
  size_t colon = findLastTopLevel(l, " : (");
  if (g.close == std::string::npos || colon == std::string::npos)
    return false;
  g.typesOpen = colon + 3;
  g.typesClose = matchingClose(l, g.typesOpen);
  return g.typesClose != std::string::npos;
}

bool operandDropOrAdd(Ctx &c) {
  std::vector<OpLine> generic;
  for (const OpLine &op : scanOpLines(c.text)) {
    GenericOperands g;
    if (genericOperands(c.line(op), g))
      generic.push_back(op);
  }
  OpLine op;
  if (!c.pickOp(generic, op))
    return false;
  std::string l = c.line(op);
  GenericOperands g;
  genericOperands(l, g);
  std::vector<std::string> operands =
      splitTopLevel(l.substr(g.open + 1, g.close - g.open - 1), ',');
  std::vector<std::string> types = splitTopLevel(
      l.substr(g.typesOpen + 1, g.typesClose - g.typesOpen - 1), ',');
  if (operands.size() == 1 && trim(operands[0]).empty())
    operands.clear();
  if (types.size() == 1 && trim(types[0]).empty())
    types.clear();
  bool drop = !operands.empty() && c.rng.chance(1, 2);
  if (drop) {
    size_t i = c.rng.below(operands.size());
    operands.erase(operands.begin() + i);
    if (i < types.size() && c.rng.chance(7, 8))
      types.erase(types.begin() + i);
  } else {
    std::map<std::string, std::string> env = c.typeEnv();
    std::string value = anyValue(c);
    std::string type = env.count(value) ? env[value] : c.rng.pick(kArgTypes);
    size_t at = c.rng.below(operands.size() + 1);
    operands.insert(operands.begin() + at, " " + value);
    types.insert(types.begin() + std::min(at, types.size()), " " + type);
  }
  for (std::string &s : operands)
    s = trim(s);
  for (std::string &s : types)
    s = trim(s);
  std::string newLine =
      l.substr(0, g.typesOpen + 1) + join(types, ", ") + l.substr(g.typesClose);
  newLine = newLine.substr(0, g.open + 1) + join(operands, ", ") +
            newLine.substr(g.close);
  c.text.replace(op.begin, op.end - op.begin, newLine);
  return true;
}

bool resultCount(Ctx &c) {
  std::vector<OpLine> ops = c.movableOps();
  OpLine op;
  if (!c.pickOp(ops, op))
    return false;
  std::string l = c.line(op);
  std::string type = resultType(op.rest);
  size_t arrow = findLastTopLevel(l, "->");
  bool generic = op.rest[0] == '"';
  if (c.rng.chance(1, 2)) {
    // Two results.
    size_t eq = l.find(op.result + " = ");
    l.replace(eq, op.result.size(), op.result + ":2");
    if (generic && arrow != std::string::npos)
      l = l.substr(0, arrow) + "-> (" + type + ", " + type + ")";
    std::string newText = c.text;
    newText.replace(op.begin, op.end - op.begin, l);
    // The old uses name the first result.
    renameUses(newText, op.begin + l.size(), op.result, op.result + "#0");
    c.text = newText;
    return true;
  }
  // No result: its uses take the op's first operand.
  auto uses = usesIn(op.rest);
  std::string replacement = uses.empty()
                                ? "%undefined"
                                : op.rest.substr(uses[0].first, uses[0].second);
  std::string newLine = op.indent + op.rest;
  if (generic && findLastTopLevel(newLine, "->") != std::string::npos)
    newLine = newLine.substr(0, findLastTopLevel(newLine, "->")) + "-> ()";
  c.text.replace(op.begin, op.end - op.begin, newLine);
  renameUses(c.text, op.begin + newLine.size(), op.result, replacement);
  return true;
}

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

bool opDuplicate(Ctx &c) {
  OpLine op;
  if (!c.pickOp(c.movableOps(), op))
    return false;
  std::string copy = op.indent + c.freshName() + " = " + op.rest;
  c.text.insert(op.end, "\n" + copy);
  return true;
}

bool opDrop(Ctx &c) {
  OpLine op;
  if (!c.pickOp(c.movableOps(), op))
    return false;
  auto uses = usesIn(op.rest);
  std::string replacement = uses.empty()
                                ? "%undefined"
                                : op.rest.substr(uses[0].first, uses[0].second);
  size_t end = op.end < c.text.size() ? op.end + 1 : op.end;
  c.text.erase(op.begin, end - op.begin);
  renameUses(c.text, op.begin, op.result, replacement);
  return true;
}

bool opSwap(Ctx &c) {
  std::vector<OpLine> ops = scanOpLines(c.text);
  std::vector<size_t> pairs;
  for (size_t i = 0; i + 1 < ops.size(); ++i)
    if (!ops[i].terminator && ops[i].end + 1 == ops[i + 1].begin)
      pairs.push_back(i);
  if (pairs.empty())
    return false;
  size_t i = c.rng.pick(pairs);
  std::string a = c.line(ops[i]), b = c.line(ops[i + 1]);
  c.text.replace(ops[i].begin, ops[i + 1].end - ops[i].begin, b + "\n" + a);
  return true;
}

bool opName(Ctx &c) {
  static const std::vector<std::string> names = {
      "attn.term",      "attn.combine", "attn.unknown",
      "linalg.generic", "tensor.empty", "func.call"};
  std::vector<std::pair<size_t, std::string>> found;
  for (const std::string &n : names)
    for (size_t pos = c.text.find(n); pos != std::string::npos;
         pos = c.text.find(n, pos + 1))
      found.push_back({pos, n});
  if (found.empty())
    return false;
  auto [pos, from] = c.rng.pick(found);
  std::string to = c.rng.pick(names);
  if (to == from)
    return false;
  c.text.replace(pos, from.size(), to);
  return true;
}

bool insertOp(Ctx &c) {
  std::vector<OpLine> ops = scanOpLines(c.text);
  if (ops.empty())
    return false;
  const OpLine &at = c.rng.pick(ops);
  std::map<std::string, std::string> env = c.typeEnv();
  std::string v = "%undefined", t = "tensor<1x2x16x8xf32>";
  std::vector<std::pair<std::string, std::string>> tensors;
  for (const auto &entry : env)
    if (startsWith(entry.second, "tensor<"))
      tensors.push_back(entry);
  if (!tensors.empty())
    std::tie(v, t) = c.rng.pick(tensors);
  std::string r = c.freshName();
  const std::string q = v + ", " + v + ", " + v, qt = t + ", " + t + ", " + t;
  std::vector<std::string> pool = {
      "\"attn.term\"() : () -> ()",
      r + " = \"attn.term\"(" + q + ") <{score = #attn.score<softmax>}> : (" +
          qt + ") -> " + t,
      r + " = \"attn.term\"(" + q +
          ") <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, "
          "0, 0, 0, 0>, "
          "resultSegmentSizes = array<i32: 1, 0, 0, 0>}> : (" +
          qt + ") -> " + t,
      r + " = \"attn.term\"(" + q +
          ") <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, "
          "0, 0, 0, 0>, "
          "resultSegmentSizes = array<i32: 1, 0, 0, 0>, score "
          "= "
          "#attn.score<kernel>}> : (" +
          qt + ") -> " + t,
      r + " = attn.combine " + v + " : " + t,
      r + " = attn.combine " + v + ", " + v + " gate(" + v + ") : " + t,
      r +
          " = \"attn.combine\"() <{operandSegmentSizes = array<i32: 0, 0>}> "
          ": () -> " +
          t,
      r + " = attn.term kernel favor_plus (" + q + ") : " + qt + " -> " + t,
      r + " = attn.term softmax (" + q + ") : " + qt + " -> " + t,
      r + " = attn.term kernel elu1 (" + q +
          ") mask causal order kv_first : " + qt + " -> " + t,
      r + " = attn.term relu2 (" + q + ") mask block_causal(3) : " + qt +
          " -> " + t,
      "\"attn.unknown\"() : () -> ()",
      r + " = tensor.empty() : " + t,
  };
  c.text.insert(at.begin, at.indent + c.rng.pick(pool) + "\n");
  return true;
}

/// Self-contained snippets of the loop, buffer and kernel code the GPU
/// mapping and the CPU tiling work on (they use only values they define),
/// put before an op: in a seed whose forall is a thread block, they land
/// in it. `N` is a fresh number.
std::vector<std::string> codegenSnippets(Ctx &c, const std::string &n) {
  std::string elem = c.rng.pick(
      std::vector<std::string>{"f32", "f16", "i1", "i32", "i64", "index",
                               "vector<4xf32>", "complex<f32>", "bf16"});
  std::string scalarZero = elem == "index"  ? "arith.constant 0 : index"
                           : elem[0] == 'i' ? "arith.constant 0 : " + elem
                           : elem[0] == 'f' || elem[0] == 'b'
                               ? "arith.constant 0.0 : " + elem
                               : "";
  std::string k = "%fzk" + n, c0 = "%fzc0_" + n, c1 = "%fzc1_" + n,
              c8 = "%fzc8_" + n, z = "%fzz" + n, m = "%fzm" + n,
              m2 = "%fzn" + n, r = "%fzr" + n, i = "%fzi" + n, t = "%fzt" + n;
  std::string consts = c0 + " = arith.constant 0 : index\n" + c1 +
                       " = arith.constant 1 : index\n" + c8 +
                       " = arith.constant 8 : index\n" + z +
                       " = arith.constant 0.0 : f32\n";
  std::vector<std::string> pool = {
      // A reduction loop.
      consts + r + " = scf.parallel (" + i + ") = (" + c0 + ") to (" + c8 +
          ") step (" + c1 + ") init (" + z + ") -> f32 {\n" + k +
          " = arith.addf " + z + ", " + z + " : f32\nscf.reduce(" + k +
          " : f32) {\n^bb0(%fza" + n + ": f32, %fzb" + n + ": f32):\n%fzs" + n +
          " = arith.addf %fza" + n + ", %fzb" + n +
          " : f32\nscf.reduce.return %fzs" + n + " : f32\n}\n}",
      // A tile of another element type, written and read.
      consts + m + " = memref.alloc() : memref<4x" + elem + ">\n" +
          (scalarZero.empty()
               ? ""
               : k + " = " + scalarZero + "\nmemref.store " + k + ", " + m +
                     "[" + c1 + "] : memref<4x" + elem + ">\n") +
          r + " = memref.load " + m + "[" + c0 + "] : memref<4x" + elem + ">",
      // Dynamic, zero-sized and odd-space tiles.
      consts + m + " = memref.alloc(" + c8 + ") : memref<?x8xf32>\n" +
          "linalg.fill ins(" + z + " : f32) outs(" + m + " : memref<?x8xf32>)",
      consts + m + " = memref.alloca() : memref<0xf32>\nlinalg.fill ins(" + z +
          " : f32) outs(" + m + " : memref<0xf32>)",
      consts + m + " = memref.alloc() : memref<4xf32, 1>\nmemref.store " + z +
          ", " + m + "[" + c0 + "] : memref<4xf32, 1>",
      // Copies, frees and barriers.
      consts + m + " = memref.alloc() : memref<8x8xf32>\n" + m2 +
          " = memref.alloc() : memref<8x8xf32>\nlinalg.fill ins(" + z +
          " : f32) outs(" + m + " : memref<8x8xf32>)\nmemref.copy " + m + ", " +
          m2 + " : memref<8x8xf32> to memref<8x8xf32>\n" + "memref.dealloc " +
          m + " : memref<8x8xf32>",
      "gpu.barrier",
      // A nested forall and a branch around linalg work.
      consts + "scf.forall (" + i + ") in (2) {\n" + m +
          " = memref.alloc() : memref<8xf32>\nlinalg.fill ins(" + z +
          " : f32) outs(" + m + " : memref<8xf32>)\n}",
      consts + "%fztrue" + n + " = arith.constant true\nscf.if %fztrue" + n +
          " {\n" + m + " = memref.alloc() : memref<8xf32>\nlinalg.fill ins(" +
          z + " : f32) outs(" + m + " : memref<8xf32>)\n}",
      // A reduction on buffers, and a tensor tile.
      consts + m + " = memref.alloc() : memref<8x8xf32>\n" + m2 +
          " = memref.alloc() : memref<8xf32>\nlinalg.generic {indexing_maps "
          "= [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> "
          "(d0)>], iterator_types = [\"parallel\", \"reduction\"]} ins(" +
          m + " : memref<8x8xf32>) outs(" + m2 +
          " : memref<8xf32>) {\n^bb0(%fza" + n + ": f32, %fzb" + n +
          ": f32):\n%fzs" + n + " = arith.addf %fza" + n + ", %fzb" + n +
          " : f32\nlinalg.yield %fzs" + n + " : f32\n}",
      consts + t + " = tensor.empty() : tensor<8x8xf32>\n" + r +
          " = linalg.fill ins(" + z + " : f32) outs(" + t +
          " : tensor<8x8xf32>) -> tensor<8x8xf32>",
      // A while loop.
      consts + r + " = scf.while (%fzw" + n + " = " + c0 +
          ") : (index) -> index {\n%fzcond" + n + " = arith.cmpi slt, %fzw" +
          n + ", " + c8 + " : index\nscf.condition(%fzcond" + n + ") %fzw" + n +
          " : index\n} do {\n^bb0(%fzx" + n + ": index):\n%fzy" + n +
          " = arith.addi %fzx" + n + ", " + c1 + " : index\nscf.yield %fzy" +
          n + " : index\n}",
  };
  return pool;
}

bool insertSnippet(Ctx &c) {
  std::vector<OpLine> ops = scanOpLines(c.text);
  if (ops.empty())
    return false;
  // Prefer the inside of a forall (a thread block of the GPU mapping).
  std::vector<OpLine> inForall;
  for (const OpLine &op : ops) {
    size_t forall = c.text.rfind("scf.forall", op.begin);
    size_t open =
        forall == std::string::npos ? forall : c.text.find('{', forall);
    if (open == std::string::npos || open > op.begin)
      continue;
    size_t close = matchingClose(c.text, open);
    if (close != std::string::npos && close > op.end)
      inForall.push_back(op);
  }
  const OpLine &at = !inForall.empty() && c.rng.chance(3, 4)
                         ? c.rng.pick(inForall)
                         : c.rng.pick(ops);
  std::string n = std::to_string(c.fresh++);
  std::string snippet = c.rng.pick(codegenSnippets(c, n));
  std::string indented;
  for (llvm::StringRef line : llvm::split(snippet, '\n'))
    indented += at.indent + line.str() + "\n";
  c.text.insert(at.begin, indented);
  return true;
}

//===----------------------------------------------------------------------===//
// Regions: ops moved or copied where passes may not expect them
//===----------------------------------------------------------------------===//

struct Consts {
  std::string zero, one, two, truth, text;
};

Consts constants(Ctx &c, const std::string &indent) {
  Consts k{c.freshName("c"), c.freshName("c"), c.freshName("c"),
           c.freshName("true"), ""};
  k.text = indent + k.zero + " = arith.constant 0 : index\n" + indent + k.one +
           " = arith.constant 1 : index\n" + indent + k.two +
           " = arith.constant 2 : index\n" + indent + k.truth +
           " = arith.constant true\n";
  return k;
}

/// Replaces the op line \p op by \p replacement (several lines).
void replaceOp(Ctx &c, const OpLine &op, const std::string &replacement) {
  c.text.replace(op.begin, op.end - op.begin, replacement);
}

bool wrapOp(Ctx &c) {
  OpLine op;
  if (!c.pickOp(c.movableOps(), op))
    return false;
  std::string type = resultType(op.rest);
  const std::string &in = op.indent;
  std::string inner = in + "  ";
  Consts k = constants(c, in);
  std::string a = c.freshName(), b = c.freshName();
  std::string out;
  switch (c.rng.below(5)) {
  case 4: {
    // An elementwise linalg.generic over the result whose body computes the
    // op again and reads its element (so that the copy is live).
    Shape shape;
    if (!Shape::parse(type, shape) || shape.kind != "tensor" ||
        shape.unranked || shape.elem.find('<') != std::string::npos)
      return false;
    std::vector<std::string> dims, parallel, indices;
    std::string body;
    for (size_t d = 0; d < shape.dims.size(); ++d) {
      dims.push_back("d" + std::to_string(d));
      parallel.push_back("\"parallel\"");
      indices.push_back(c.freshName("i"));
      body += inner + indices.back() + " = linalg.index " + std::to_string(d) +
              " : index\n";
    }
    std::string generic = c.freshName(), arg = c.freshName("a"),
                element = c.freshName("e");
    std::string map =
        "affine_map<(" + join(dims, ", ") + ") -> (" + join(dims, ", ") + ")>";
    out = c.line(op) + "\n" + in + generic +
          " = linalg.generic {indexing_maps = [" + map +
          "], iterator_types = [" + join(parallel, ", ") + "]} outs(" +
          op.result + " : " + type + ") {\n" + in + "^bb0(" + arg + ": " +
          shape.elem + "):\n" + inner + a + " = " + op.rest + "\n" + body +
          inner + element + " = tensor.extract " + a + "[" +
          join(indices, ", ") + "] : " + type + "\n" + inner + "linalg.yield " +
          element + " : " + shape.elem + "\n" + in + "} -> " + type;
    replaceOp(c, op, out);
    renameUses(c.text, op.begin + out.size(), op.result, generic);
    return true;
  }
  case 0:
    out = in + op.result + " = scf.execute_region -> " + type + " {\n" + inner +
          a + " = " + op.rest + "\n" + inner + "scf.yield " + a + " : " + type +
          "\n" + in + "}";
    break;
  case 1:
    out = k.text + in + op.result + " = scf.if " + k.truth + " -> (" + type +
          ") {\n" + inner + a + " = " + op.rest + "\n" + inner + "scf.yield " +
          a + " : " + type + "\n" + in + "} else {\n" + inner + b + " = " +
          op.rest + "\n" + inner + "scf.yield " + b + " : " + type + "\n" + in +
          "}";
    break;
  case 2: {
    // A loop carrying the result; the op may read the carried value
    // instead of its first operand.
    auto uses = usesIn(op.rest);
    if (uses.empty())
      return false;
    std::string init = op.rest.substr(uses[0].first, uses[0].second);
    std::string acc = c.freshName("acc"), iv = c.freshName("iv");
    std::string body = op.rest;
    if (c.rng.chance(1, 2))
      body.replace(uses[0].first, uses[0].second, acc);
    out = k.text + in + op.result + " = scf.for " + iv + " = " + k.zero +
          " to " + k.two + " step " + k.one + " iter_args(" + acc + " = " +
          init + ") -> (" + type + ") {\n" + inner + a + " = " + body + "\n" +
          inner + "scf.yield " + a + " : " + type + "\n" + in + "}";
    break;
  }
  default: {
    // Both a region and a successor block.
    out = in + "cf.br ^fzbb" + std::to_string(c.fresh) + "\n^fzbb" +
          std::to_string(c.fresh) + ":\n" + in + op.result + " = " + op.rest;
    ++c.fresh;
    break;
  }
  }
  replaceOp(c, op, out);
  return true;
}

/// A copy of an op (its result unused) inside a region that passes over
/// attn ops may not expect: a linalg.generic body, loops, a gpu.launch, ...
bool cloneIntoRegion(Ctx &c) {
  OpLine op;
  if (!c.pickOp(c.movableOps(), op))
    return false;
  const std::string &in = op.indent;
  std::string inner = in + "  ";
  Consts k = constants(c, in);
  std::string x = c.freshName(), iv = c.freshName("iv");
  std::string body = inner + x + " = " + op.rest + "\n";
  std::string out;
  switch (c.rng.below(8)) {
  case 0: {
    std::string init = c.freshName(), res = c.freshName(),
                arg = c.freshName("a");
    out = in + init + " = tensor.empty() : tensor<4xf32>\n" + in + res +
          " = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], "
          "iterator_types = [\"parallel\"]} outs(" +
          init + " : tensor<4xf32>) {\n" + in + "^bb0(" + arg + ": f32):\n" +
          body + inner + "linalg.yield " + arg + " : f32\n" + in +
          "} -> tensor<4xf32>\n";
    break;
  }
  case 1:
    out = k.text + in + "scf.for " + iv + " = " + k.zero + " to " + k.two +
          " step " + k.one + " {\n" + body + in + "}\n";
    break;
  case 2:
    out = k.text + in + "scf.if " + k.truth + " {\n" + body + in + "}\n";
    break;
  case 3:
    out = in + "scf.forall (" + iv + ") in (2) {\n" + body + in + "}\n";
    break;
  case 4:
    out = k.text + in + "scf.parallel (" + iv + ") = (" + k.zero + ") to (" +
          k.two + ") step (" + k.one + ") {\n" + body + inner + "scf.reduce\n" +
          in + "}\n";
    break;
  case 5: {
    std::string n = std::to_string(c.fresh++);
    auto ids = [&](const char *stem) {
      return "(%" + std::string(stem) + "x" + n + ", %" + stem + "y" + n +
             ", %" + stem + "z" + n + ")";
    };
    auto sizes = [&](const char *stem) {
      return "(%" + std::string(stem) + "x" + n + " = " + k.one + ", %" + stem +
             "y" + n + " = " + k.one + ", %" + stem + "z" + n + " = " + k.one +
             ")";
    };
    out = k.text + in + "gpu.launch blocks" + ids("fzb") + " in " +
          sizes("fzgs") + " threads" + ids("fzt") + " in " + sizes("fzbs") +
          " {\n" + body + inner + "gpu.terminator\n" + in + "}\n";
    break;
  }
  case 6:
    out = in + "affine.for " + iv + " = 0 to 2 {\n" + body + in + "}\n";
    break;
  default:
    out = in + "scf.execute_region {\n" + body + inner + "scf.yield\n" + in +
          "}\n";
    break;
  }
  c.text.insert(op.begin, out);
  return true;
}

/// A function copied into a gpu.module or a nested module, or an op
/// outlined into a function of its own.
bool moveFunction(Ctx &c) {
  std::vector<FuncSpan> funcs = scanFuncs(c.text);
  if (funcs.empty())
    return false;
  const FuncSpan &f = c.rng.pick(funcs);
  std::string func = c.text.substr(f.header, f.bodyClose + 1 - f.header);
  std::string renamed = func;
  size_t at = renamed.find("@" + f.name);
  renamed.replace(at, f.name.size() + 1, "@" + f.name + "_fz");
  unsigned how = c.rng.below(4);
  if (how == 0 || how == 1) {
    std::string wrapped =
        "gpu.module @fz_kernels {\n" + (how == 0 ? renamed : func) + "\n}";
    if (how == 0) {
      c.text.insert(f.header, wrapped + "\n");
    } else {
      // Moved, not copied.
      c.text.replace(f.header, f.bodyClose + 1 - f.header, wrapped);
    }
    if (c.rng.chance(2, 3) &&
        c.text.find("module") == c.text.find("gpu.module"))
      c.text = "module attributes {gpu.container_module} {\n" + c.text + "\n}";
    return true;
  }
  if (how == 2) {
    c.text.replace(f.header, f.bodyClose + 1 - f.header,
                   "module @fz_inner {\n" + func + "\n}");
    return true;
  }
  // Two copies of one function: a clash of symbols, or two entry points.
  c.text.insert(f.header, (c.rng.chance(1, 2) ? func : renamed) + "\n");
  return true;
}

/// Outlines an op into a private function (or a declaration) and calls it.
bool outlineOp(Ctx &c) {
  std::vector<FuncSpan> funcs = scanFuncs(c.text);
  OpLine op;
  if (funcs.empty() || !c.pickOp(c.movableOps(), op))
    return false;
  const FuncSpan *parent = nullptr;
  for (const FuncSpan &f : funcs)
    if (f.bodyOpen < op.begin && op.end < f.bodyClose)
      parent = &f;
  if (!parent)
    return false;
  std::map<std::string, std::string> env = c.typeEnv();
  std::string type = resultType(op.rest);
  auto uses = usesIn(op.rest);
  std::vector<std::string> names, types, params;
  std::string body = op.rest;
  for (auto it = uses.rbegin(); it != uses.rend(); ++it) {
    std::string name = op.rest.substr(it->first, it->second);
    if (!env.count(name))
      return false;
    auto known = std::find(names.begin(), names.end(), name);
    std::string param;
    if (known == names.end()) {
      names.push_back(name);
      types.push_back(env[name]);
      params.push_back("%p" + std::to_string(params.size()));
      param = params.back();
    } else {
      param = params[known - names.begin()];
    }
    body.replace(it->first, it->second, param);
  }
  std::string callee = "fz_outlined" + std::to_string(c.fresh++);
  std::vector<std::string> decls;
  for (size_t i = 0; i < names.size(); ++i)
    decls.push_back(params[i] + ": " + types[i]);
  std::string fn;
  if (c.rng.chance(3, 4))
    fn = "func.func " + std::string(c.rng.chance(3, 4) ? "private " : "") +
         "@" + callee + "(" + join(decls, ", ") + ") -> " + type +
         " {\n  %r = " + body + "\n  return %r : " + type + "\n}\n";
  else
    fn = "func.func private @" + callee + "(" + join(types, ", ") + ") -> " +
         type + "\n";
  std::string call = op.indent + op.result + " = func.call @" + callee + "(" +
                     join(names, ", ") + ") : (" + join(types, ", ") + ") -> " +
                     type;
  c.text.replace(op.begin, op.end - op.begin, call);
  c.text.insert(parent->header, fn);
  return true;
}

//===----------------------------------------------------------------------===//
// Function signatures
//===----------------------------------------------------------------------===//

bool signature(Ctx &c) {
  std::vector<FuncSpan> funcs = scanFuncs(c.text);
  if (funcs.empty())
    return false;
  const FuncSpan f = c.rng.pick(funcs);
  std::string header = c.text.substr(f.header, f.bodyOpen - f.header);
  size_t argsClose = f.argsClose - f.header;
  std::string args =
      c.text.substr(f.argsOpen + 1, f.argsClose - f.argsOpen - 1);
  std::string results = header.substr(argsClose + 1);
  size_t attrsPos = results.find(" attributes");
  std::string attrs;
  if (attrsPos != std::string::npos) {
    attrs = results.substr(attrsPos);
    results = results.substr(0, attrsPos);
  }
  results = trim(results);
  if (startsWith(results, "->"))
    results = trim(results.substr(2));
  if (!results.empty() && results[0] == '(')
    results = results.substr(1, results.size() - 2);
  std::vector<std::string> resultTypes;
  if (!trim(results).empty())
    for (const std::string &r : splitTopLevel(results, ','))
      resultTypes.push_back(trim(r));
  std::string prefix = header.substr(0, f.argsOpen - f.header + 1);

  // The return ops of this function.
  std::vector<OpLine> returns;
  for (const OpLine &op : scanOpLines(c.text))
    if (op.begin > f.bodyOpen && op.end < f.bodyClose &&
        (startsWith(op.rest, "return") || startsWith(op.rest, "func.return")))
      returns.push_back(op);

  auto rebuild = [&](const std::string &newArgs,
                     const std::vector<std::string> &newResults,
                     const std::string &newAttrs) {
    std::string r;
    if (newResults.size() == 1 && newResults[0].find("->") == std::string::npos)
      r = " -> " + newResults[0];
    else if (!newResults.empty())
      r = " -> (" + join(newResults, ", ") + ")";
    return prefix + newArgs + ")" + r + newAttrs + " ";
  };
  auto setReturns = [&](std::string &text,
                        const std::function<std::string(const OpLine &)> &fn) {
    for (auto it = returns.rbegin(); it != returns.rend(); ++it)
      text.replace(it->begin, it->end - it->begin, fn(*it));
  };

  std::string newText = c.text;
  switch (c.rng.below(8)) {
  case 0: { // an extra argument
    std::string arg = c.freshName("extra") + ": " + c.rng.pick(kArgTypes);
    std::string newArgs = trim(args).empty()   ? arg
                          : c.rng.chance(1, 2) ? arg + ", " + args
                                               : args + ", " + arg;
    newText.replace(f.header, f.bodyOpen - f.header,
                    rebuild(newArgs, resultTypes, attrs));
    break;
  }
  case 1: { // an extra (aliasing) result
    if (resultTypes.empty() || returns.empty())
      return false;
    std::vector<std::string> newResults = resultTypes;
    newResults.push_back(resultTypes[0]);
    setReturns(newText, [&](const OpLine &ret) {
      std::string r = ret.rest;
      size_t colon = r.find(" : ");
      if (colon == std::string::npos)
        return ret.indent + r;
      auto uses = usesIn(r);
      if (uses.empty())
        return ret.indent + r;
      std::string first = r.substr(uses[0].first, uses[0].second);
      return ret.indent + r.substr(0, colon) + ", " + first + " : " +
             r.substr(colon + 3) + ", " + resultTypes[0];
    });
    newText.replace(f.header, f.bodyOpen - f.header,
                    rebuild(args, newResults, attrs));
    break;
  }
  case 2: { // no results
    if (resultTypes.empty())
      return false;
    setReturns(newText,
               [&](const OpLine &ret) { return ret.indent + "return"; });
    newText.replace(f.header, f.bodyOpen - f.header, rebuild(args, {}, attrs));
    break;
  }
  case 3: { // return an argument
    if (returns.empty())
      return false;
    auto argUses = scanSsa(args, 0, args.size());
    if (argUses.empty())
      return false;
    const SsaToken &arg = c.rng.pick(argUses);
    std::string name = args.substr(arg.pos, arg.len);
    setReturns(newText, [&](const OpLine &ret) {
      std::string r = ret.rest;
      auto uses = usesIn(r);
      if (uses.empty())
        return ret.indent + r;
      r.replace(uses[0].first, uses[0].second, name);
      return ret.indent + r;
    });
    break;
  }
  case 4: { // visibility
    size_t at = prefix.find("func.func ") + 10;
    std::string vis =
        c.rng.pick(std::vector<std::string>{"private ", "nested ", "public "});
    if (prefix.compare(at, 8, "private ") == 0)
      newText.erase(f.header + at, 8);
    else
      newText.insert(f.header + at, vis);
    break;
  }
  case 5: { // an argument attribute
    std::vector<std::string> list = splitTopLevel(args, ',');
    if (trim(args).empty())
      return false;
    std::string &arg = list[c.rng.below(list.size())];
    arg += " " + c.rng.pick(kArgAttrs);
    newText.replace(f.header, f.bodyOpen - f.header,
                    rebuild(join(list, ","), resultTypes, attrs));
    break;
  }
  case 6: // a function attribute
    newText.replace(f.header, f.bodyOpen - f.header,
                    rebuild(args, resultTypes, " " + c.rng.pick(kFuncAttrs)));
    break;
  default: { // a result type changed (the returns keep theirs)
    if (resultTypes.empty())
      return false;
    std::vector<std::string> newResults = resultTypes;
    newResults[c.rng.below(newResults.size())] = c.rng.pick(kArgTypes);
    newText.replace(f.header, f.bodyOpen - f.header,
                    rebuild(args, newResults, attrs));
    break;
  }
  }
  c.text = newText;
  return true;
}

//===----------------------------------------------------------------------===//
// Values: casts and constants in place of operands
//===----------------------------------------------------------------------===//

/// The operand types of \p l in the order of its operands, where they can
/// be read: the generic form's `: (types)`, or a custom attn.term's first
/// three types (q, k, v). Offsets are into \p l.
bool operandTypes(const std::string &l,
                  std::vector<std::pair<size_t, size_t>> &operands,
                  std::vector<std::pair<size_t, size_t>> &types) {
  GenericOperands g;
  operands.clear();
  types.clear();
  auto spans = [](const std::string &l, size_t b, size_t e,
                  std::vector<std::pair<size_t, size_t>> &out) {
    size_t start = b;
    for (const std::string &part : splitTopLevel(l.substr(b, e - b), ',')) {
      size_t lead = part.find_first_not_of(' ');
      if (lead != std::string::npos)
        out.push_back({start + lead, trim(part).size()});
      start += part.size() + 1;
    }
  };
  if (genericOperands(l, g)) {
    spans(l, g.open + 1, g.close, operands);
    spans(l, g.typesOpen + 1, g.typesClose, types);
    return !operands.empty() && operands.size() == types.size();
  }
  size_t kw = l.find("attn.term ");
  if (kw == std::string::npos)
    return false;
  size_t open = l.find('(', kw);
  size_t close = open == std::string::npos ? open : matchingClose(l, open);
  size_t colon = findLastTopLevel(l, " : ");
  size_t arrow = findLastTopLevel(l, "->");
  if (close == std::string::npos || colon == std::string::npos ||
      arrow == std::string::npos || arrow < colon)
    return false;
  spans(l, open + 1, close, operands);
  spans(l, colon + 3, arrow, types);
  operands.resize(std::min<size_t>(operands.size(), 3));
  types.resize(std::min(types.size(), operands.size()));
  return operands.size() == 3 && types.size() == 3;
}

bool castOrConstantOperand(Ctx &c) {
  std::vector<OpLine> candidates;
  std::vector<std::pair<size_t, size_t>> operands, types;
  for (const OpLine &op : scanOpLines(c.text))
    if (operandTypes(c.line(op), operands, types))
      candidates.push_back(op);
  OpLine op;
  if (!c.pickOp(candidates, op))
    return false;
  std::string l = c.line(op);
  operandTypes(l, operands, types);
  size_t i = c.rng.below(operands.size());
  std::string value = l.substr(operands[i].first, operands[i].second);
  std::string type = l.substr(types[i].first, types[i].second);
  Shape shape;
  if (!Shape::parse(type, shape) || shape.kind != "tensor" || shape.unranked)
    return false;
  std::string fresh = c.freshName();
  std::string before, newType = type;
  if (c.rng.chance(1, 2)) {
    // A cast to another (usually more dynamic) type.
    Shape to = shape;
    for (std::string &d : to.dims)
      if (c.rng.chance(1, 2))
        d = d == "?" ? c.rng.pick(std::vector<std::string>{"1", "16", "64"})
                     : "?";
    if (c.rng.chance(1, 8))
      to.unranked = true, to.dims.clear();
    newType = to.str();
    before = op.indent + fresh + " = tensor.cast " + value + " : " + type +
             " to " + newType + "\n";
  } else {
    // A constant or an empty tensor of the operand's type.
    std::vector<std::string> sizes;
    for (const std::string &d : shape.dims)
      if (d == "?") {
        std::string size = c.freshName("n");
        before += op.indent + size + " = arith.constant " +
                  c.rng.pick(std::vector<std::string>{"0", "1", "16", "4096"}) +
                  " : index\n";
        sizes.push_back(size);
      }
    if (sizes.empty() && c.rng.chance(1, 2))
      before += op.indent + fresh + " = arith.constant dense<" +
                c.rng.pick(std::vector<std::string>{
                    "0.0", "1.0", "-1.0", "0x7FC00000", "0x7F800000"}) +
                "> : " + type + "\n";
    else
      before += op.indent + fresh + " = tensor.empty(" + join(sizes, ", ") +
                ") : " + type + "\n";
  }
  // Types first (they come after the operands).
  l.replace(types[i].first, types[i].second, newType);
  l.replace(operands[i].first, operands[i].second, fresh);
  c.text.replace(op.begin, op.end - op.begin, before + l);
  return true;
}

//===----------------------------------------------------------------------===//
// Raw structure: bracket groups and lines
//===----------------------------------------------------------------------===//

bool groupEdit(Ctx &c) {
  std::vector<size_t> opens;
  for (size_t i = 0; i < c.text.size(); ++i)
    if (c.text[i] == '(' || c.text[i] == '[' || c.text[i] == '{' ||
        (c.text[i] == '<' && i > 0 && isIdentChar(c.text[i - 1])))
      opens.push_back(i);
  if (opens.empty())
    return false;
  size_t open = c.rng.pick(opens);
  size_t close = matchingClose(c.text, open);
  if (close == std::string::npos)
    return false;
  if (c.rng.chance(1, 2))
    c.text.erase(open + 1, close - open - 1); // empty the group
  else
    c.text.insert(close + 1, c.text.substr(open, close - open + 1));
  return true;
}

bool lineEdit(Ctx &c) {
  std::vector<LineSpan> lines = splitLines(c.text);
  std::vector<LineSpan> nonEmpty;
  for (LineSpan l : lines)
    if (!trim(c.text.substr(l.begin, l.end - l.begin)).empty())
      nonEmpty.push_back(l);
  if (nonEmpty.empty())
    return false;
  LineSpan l = c.rng.pick(nonEmpty);
  std::string line = c.text.substr(l.begin, l.end - l.begin);
  if (c.rng.chance(1, 2))
    c.text.erase(l.begin, std::min(l.end + 1, c.text.size()) - l.begin);
  else
    c.text.insert(l.end, "\n" + line);
  return true;
}

//===----------------------------------------------------------------------===//
// The table
//===----------------------------------------------------------------------===//

struct Kind {
  const char *name;
  Mutation fn;
  unsigned weight;
};

const std::vector<Kind> &kinds() {
  static const std::vector<Kind> table = {
      {"dim-one", dimOne, 3},
      {"dim-global", dimGlobal, 10},
      {"dim-position", dimPosition, 10},
      {"elem-one", elemOne, 2},
      {"elem-global", elemGlobal, 4},
      {"rank-one", rankOne, 1},
      {"rank-global", rankGlobal, 3},
      {"type-kind", typeKind, 2},
      {"keyword-swap", keywordSwap, 10},
      {"clause-insert", clauseInsert, 10},
      {"clause-drop", clauseDrop, 4},
      {"clause-duplicate", clauseDuplicate, 2},
      {"int-literal", intLiteral, 6},
      {"float-literal", floatLiteral, 3},
      {"prop-edit", propEdit, 8},
      {"discardable-attr", discardableAttr, 3},
      {"operand-segments", segments, 5},
      {"operand-swap", operandSwap, 5},
      {"operand-replace", operandReplace, 4},
      {"operand-drop-add", operandDropOrAdd, 4},
      {"result-count", resultCount, 3},
      {"op-duplicate", opDuplicate, 4},
      {"op-drop", opDrop, 3},
      {"op-swap", opSwap, 2},
      {"op-name", opName, 2},
      {"insert-op", insertOp, 5},
      {"insert-codegen-snippet", insertSnippet, 6},
      {"wrap-in-region", wrapOp, 8},
      {"clone-into-region", cloneIntoRegion, 10},
      {"move-function", moveFunction, 5},
      {"outline-op", outlineOp, 5},
      {"signature", signature, 8},
      {"cast-or-constant-operand", castOrConstantOperand, 8},
      {"group-edit", groupEdit, 2},
      {"line-edit", lineEdit, 2},
  };
  return table;
}

} // namespace

std::vector<std::string> attn::fuzz::mutationKinds() {
  std::vector<std::string> names = {"generic-form"};
  for (const Kind &k : kinds())
    names.push_back(k.name);
  return names;
}

Mutant attn::fuzz::makeMutant(const std::vector<Seed> &seeds, uint64_t fuzzSeed,
                              uint64_t index) {
  Rng rng(fuzzSeed * 0x2545F4914F6CDD1DULL + index * 0x9E3779B97F4A7C15ULL +
          0x1234567);
  rng.next();
  Mutant mutant;
  uint64_t weights = 0;
  for (const Seed &s : seeds)
    weights += s.weight;
  uint64_t draw = rng.next() % weights;
  for (mutant.seed = 0; draw >= seeds[mutant.seed].weight; ++mutant.seed)
    draw -= seeds[mutant.seed].weight;
  const Seed &seed = seeds[mutant.seed];
  bool generic = !seed.generic.empty() && rng.chance(3, 10);
  mutant.text = generic ? seed.generic : seed.custom;
  if (generic)
    mutant.mutations.push_back("generic-form");

  unsigned total = 0;
  for (const Kind &k : kinds())
    total += k.weight;
  // 1 to 4 mutations: 45%, 30%, 15%, 10%.
  size_t roll = rng.below(20);
  unsigned count = roll < 9 ? 1 : roll < 15 ? 2 : roll < 18 ? 3 : 4;
  Ctx ctx{mutant.text, rng, generic};
  for (unsigned applied = 0, attempts = 0; applied < count && attempts < 40;
       ++attempts) {
    size_t r = rng.below(total);
    const Kind *kind = nullptr;
    for (const Kind &k : kinds()) {
      if (r < k.weight) {
        kind = &k;
        break;
      }
      r -= k.weight;
    }
    std::string before = mutant.text;
    if (kind->fn(ctx) && mutant.text != before) {
      mutant.mutations.push_back(kind->name);
      ++applied;
    } else {
      mutant.text = before;
    }
  }
  return mutant;
}
