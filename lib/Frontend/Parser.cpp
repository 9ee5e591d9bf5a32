//===- Parser.cpp - Lex and parse .attn specs -----------------------------===//
//
// A hand-written lexer and recursive-descent parser for the grammar in
// docs/language.md. Keywords are contextual (an input may be called `mask`),
// and parsing stops at the first error so that the message is precise.
//
//===----------------------------------------------------------------------===//

#include "attn/Frontend/Parser.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

using namespace attn::frontend;

namespace {

//===----------------------------------------------------------------------===//
// Lexer
//===----------------------------------------------------------------------===//

enum class TokenKind {
  Identifier,
  Integer,
  Float,
  Punctuation, ///< One of { } [ ] ( ) , : = ; ? + -
  EndOfFile,
  Error,
};

struct Token {
  TokenKind kind = TokenKind::EndOfFile;
  std::string text;
  SourceLocation loc;
  int64_t integer = 0;
  double number = 0.0;

  bool is(TokenKind k) const { return kind == k; }
  bool isPunct(char c) const {
    return kind == TokenKind::Punctuation && text.size() == 1 && text[0] == c;
  }
  bool isIdent(const char *word) const {
    return kind == TokenKind::Identifier && text == word;
  }
};

class Lexer {
public:
  explicit Lexer(const std::string &text) : text(text) {}

  /// Lexes the next token; an error token carries its message in `text`.
  Token next() {
    skipSpaceAndComments();
    Token token;
    token.loc = {line, column};
    if (pos >= text.size()) {
      token.kind = TokenKind::EndOfFile;
      return token;
    }
    unsigned char c = text[pos];
    if (std::isalpha(c) || c == '_')
      return lexIdentifier(token);
    if (std::isdigit(c) || (c == '.' && pos + 1 < text.size() &&
                            std::isdigit((unsigned char)text[pos + 1])))
      return lexNumber(token);
    if (c != '\0' && std::strchr("{}[](),:=;?+-", c)) {
      token.kind = TokenKind::Punctuation;
      token.text = std::string(1, c);
      advance();
      return token;
    }
    token.kind = TokenKind::Error;
    if (c < 0x20 || c >= 0x7f)
      token.text = "unexpected character (byte " + std::to_string(c) + ")";
    else
      token.text = std::string("unexpected character '") + (char)c + "'";
    return token;
  }

private:
  void advance() {
    if (text[pos] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
    ++pos;
  }

  void skipSpaceAndComments() {
    while (pos < text.size()) {
      char c = text[pos];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        advance();
      } else if (c == '#') {
        while (pos < text.size() && text[pos] != '\n')
          advance();
      } else {
        break;
      }
    }
  }

  Token lexIdentifier(Token &token) {
    size_t begin = pos;
    while (pos < text.size() &&
           (std::isalnum((unsigned char)text[pos]) || text[pos] == '_'))
      advance();
    token.kind = TokenKind::Identifier;
    token.text = text.substr(begin, pos - begin);
    return token;
  }

  /// Reads everything that could belong to a number (so that `12ab` or
  /// `1.2.3` is one bad number, not a number followed by junk), then checks
  /// that it is an integer or a floating-point literal that fits.
  Token lexNumber(Token &token) {
    size_t begin = pos;
    while (pos < text.size()) {
      unsigned char c = text[pos];
      bool exponentSign = (c == '+' || c == '-') && pos > begin &&
                          (text[pos - 1] == 'e' || text[pos - 1] == 'E') &&
                          (std::isdigit((unsigned char)text[begin]) ||
                           text[begin] == '.');
      if (!(std::isalnum(c) || c == '.' || c == '_' || exponentSign))
        break;
      advance();
    }
    token.text = text.substr(begin, pos - begin);
    const char *str = token.text.c_str();
    char *end = nullptr;
    bool allDigits = std::all_of(token.text.begin(), token.text.end(),
                                 [](char c) { return std::isdigit((unsigned char)c); });
    if (allDigits) {
      errno = 0;
      long long value = std::strtoll(str, &end, 10);
      if (errno == ERANGE) {
        token.kind = TokenKind::Error;
        token.text = "number '" + token.text + "' is too large";
        return token;
      }
      token.kind = TokenKind::Integer;
      token.integer = value;
      token.number = static_cast<double>(value);
      return token;
    }
    errno = 0;
    double value = std::strtod(str, &end);
    bool hexOrSpecial = token.text.find_first_of("xXnN") != std::string::npos;
    if (end != str + token.text.size() || hexOrSpecial) {
      token.kind = TokenKind::Error;
      token.text = "bad number '" + token.text + "'";
      return token;
    }
    if (errno == ERANGE) {
      token.kind = TokenKind::Error;
      token.text = "number '" + token.text + "' is out of range";
      return token;
    }
    token.kind = TokenKind::Float;
    token.number = value;
    return token;
  }

  const std::string &text;
  size_t pos = 0;
  int line = 1;
  int column = 1;
};

//===----------------------------------------------------------------------===//
// Parser
//===----------------------------------------------------------------------===//

class Parser {
public:
  Parser(const SourceFile &source, Diagnostic &error)
      : lexer(source.getText()), error(error) {
    consume();
  }

  std::optional<Spec> parse() {
    Spec spec;
    if (!parseSpecBody(spec))
      return std::nullopt;
    return spec;
  }

private:
  //===--------------------------------------------------------------------===//
  // Helpers
  //===--------------------------------------------------------------------===//

  void consume() { token = lexer.next(); }

  bool fail(SourceLocation loc, std::string message) {
    if (!failed) {
      error.loc = loc;
      error.message = std::move(message);
      failed = true;
    }
    return false;
  }

  /// Fails at the current token; lexer errors win over the parser's message.
  bool failHere(const std::string &message) {
    if (token.is(TokenKind::Error))
      return fail(token.loc, token.text);
    return fail(token.loc, message);
  }

  std::string describe(const Token &t) const {
    switch (t.kind) {
    case TokenKind::EndOfFile:
      return "end of file";
    case TokenKind::Identifier:
      return "'" + t.text + "'";
    case TokenKind::Integer:
    case TokenKind::Float:
      return "number '" + t.text + "'";
    default:
      return "'" + t.text + "'";
    }
  }

  bool expectPunct(char c, const char *context) {
    if (token.isPunct(c)) {
      consume();
      return true;
    }
    return failHere(std::string("expected '") + c + "' " + context +
                    ", found " + describe(token));
  }

  bool expectIdentifier(std::string &name, SourceLocation &loc,
                        const char *what) {
    if (!token.is(TokenKind::Identifier))
      return failHere(std::string("expected ") + what + ", found " +
                      describe(token));
    name = token.text;
    loc = token.loc;
    consume();
    return true;
  }

  bool parseInputRef(InputRef &ref, const char *what) {
    return expectIdentifier(ref.name, ref.loc, what);
  }

  /// An integer, optionally negative (so that `chunk = -4` reports the
  /// value rather than a syntax error). \p what describes the expected token,
  /// \p subject names the setting in "must be an integer".
  bool parseInteger(int64_t &value, SourceLocation &loc, const char *what,
                    const std::string &subject) {
    loc = token.loc;
    bool negative = false;
    if (token.isPunct('-')) {
      negative = true;
      consume();
    }
    if (token.is(TokenKind::Float))
      return failHere(subject + " must be an integer, found " +
                      describe(token));
    if (!token.is(TokenKind::Integer))
      return failHere(std::string("expected ") + what + ", found " +
                      describe(token));
    value = negative ? -token.integer : token.integer;
    consume();
    return true;
  }

  bool parseNumber(double &value, SourceLocation &loc, const char *what) {
    loc = token.loc;
    bool negative = false;
    if (token.isPunct('-')) {
      negative = true;
      consume();
    }
    if (!token.is(TokenKind::Integer) && !token.is(TokenKind::Float))
      return failHere(std::string("expected ") + what + " (a number), found " +
                      describe(token));
    value = negative ? -token.number : token.number;
    consume();
    return true;
  }

  /// A `{` block closed by `}`: reports a block left open at its `{`.
  template <typename ItemFn>
  bool parseBlock(const char *what, ItemFn parseItem) {
    SourceLocation open = token.loc;
    if (!expectPunct('{', (std::string("to open ") + what).c_str()))
      return false;
    while (!token.isPunct('}')) {
      if (token.is(TokenKind::EndOfFile))
        return fail(open, std::string("unterminated ") + what +
                              ": '}' missing before the end of the file");
      if (token.isPunct(';')) {
        consume();
        continue;
      }
      if (!parseItem())
        return false;
    }
    consume();
    return true;
  }

  //===--------------------------------------------------------------------===//
  // Grammar
  //===--------------------------------------------------------------------===//

  bool parseSpecBody(Spec &spec) {
    if (!token.isIdent("attention"))
      return failHere("a spec starts with 'attention NAME {', found " +
                      describe(token));
    spec.loc = token.loc;
    consume();
    if (!expectIdentifier(spec.name, spec.loc, "the spec's name"))
      return false;
    if (!parseBlock("'attention' block", [&] { return parseItem(spec); }))
      return false;
    if (!token.is(TokenKind::EndOfFile))
      return failHere("unexpected " + describe(token) +
                      " after the 'attention' block");
    return true;
  }

  bool parseItem(Spec &spec) {
    if (!token.is(TokenKind::Identifier))
      return failHere("expected a declaration (dim, input, term, value, "
                      "gate or output), found " +
                      describe(token));
    if (token.isIdent("dim"))
      return parseDim(spec);
    if (token.isIdent("input"))
      return parseInput(spec);
    if (token.isIdent("term"))
      return parseTerm(spec);
    if (token.isIdent("value") || token.isIdent("gate")) {
      bool isValue = token.isIdent("value");
      InputRef &ref = isValue ? spec.value : spec.gate;
      if (ref.isSet())
        return failHere(std::string("duplicate '") + token.text + "'");
      consume();
      return expectPunct('=', isValue ? "after 'value'" : "after 'gate'") &&
             parseInputRef(ref, "an input name");
    }
    if (token.isIdent("output")) {
      SourceLocation loc = token.loc;
      consume();
      if (token.is(TokenKind::Identifier))
        if (std::optional<ElementType> type = parseElementType(token.text)) {
          if (spec.outputType)
            return failHere("duplicate output element type '" + token.text +
                            "'");
          spec.outputType = type;
          spec.outputTypeLoc = loc;
          consume();
          return true;
        }
      bool state = token.isIdent("state");
      if (!state && !token.isIdent("lse"))
        return failHere("expected 'state' (the final state of the spec's "
                        "term), 'lse' (its log-sum-exp) or an element type "
                        "(f32, f16, bf16) after 'output', found " +
                        describe(token));
      bool &seen = state ? spec.outputState : spec.outputLse;
      if (seen)
        return failHere(std::string("duplicate 'output ") +
                        (state ? "state" : "lse") + "'");
      consume();
      seen = true;
      (state ? spec.outputStateLoc : spec.outputLseLoc) = loc;
      return true;
    }
    return failHere("unknown declaration '" + token.text + "'" +
                    suggest(token.text, {"dim", "input", "term", "value",
                                         "gate", "output"}));
  }

  bool parseDim(Spec &spec) {
    consume();
    DimDecl dim;
    if (!expectIdentifier(dim.name, dim.loc, "a size name after 'dim'"))
      return false;
    if (token.isPunct('=')) {
      consume();
      if (token.isPunct('?')) {
        consume();
      } else {
        int64_t value;
        SourceLocation loc;
        if (!parseInteger(value, loc, "a size or '?'",
                          "size '" + dim.name + "'"))
          return false;
        if (value <= 0)
          return fail(loc, "size '" + dim.name + "' must be positive, got " +
                               std::to_string(value));
        dim.value = value;
      }
    }
    spec.dims.push_back(std::move(dim));
    return true;
  }

  bool parseInput(Spec &spec) {
    consume();
    InputDecl input;
    if (!expectIdentifier(input.name, input.loc, "an input name after 'input'"))
      return false;
    if (!expectPunct(':', "after the input name"))
      return false;
    if (token.is(TokenKind::Identifier)) {
      std::optional<ElementType> type = parseElementType(token.text);
      if (!type)
        return failHere("unknown element type '" + token.text +
                        "' (expected f32, f16 or bf16)" +
                        suggest(token.text, {"f32", "f16", "bf16"}));
      input.elementType = *type;
      input.elementTypeLoc = token.loc;
      consume();
    }
    if (!expectPunct('[', "to open the input's shape"))
      return false;
    do {
      ShapeEntry entry;
      entry.loc = token.loc;
      if (token.is(TokenKind::Identifier)) {
        entry.name = token.text;
        consume();
      } else {
        if (!parseInteger(entry.value, entry.loc, "a size (integer or name)",
                          "a size"))
          return false;
        if (entry.value <= 0)
          return fail(entry.loc, "sizes must be positive, got " +
                                     std::to_string(entry.value));
      }
      input.shape.push_back(std::move(entry));
    } while (token.isPunct(',') && (consume(), true));
    if (!expectPunct(']', "to close the input's shape"))
      return false;
    spec.inputs.push_back(std::move(input));
    return true;
  }

  bool parseTerm(Spec &spec) {
    TermDecl term;
    term.loc = token.loc;
    consume();
    if (token.is(TokenKind::Identifier)) {
      term.name = token.text;
      consume();
    }
    std::vector<std::string> seen;
    if (!parseBlock("term block",
                    [&] { return parseTermItem(term, seen); }))
      return false;
    spec.terms.push_back(std::move(term));
    return true;
  }

  static const std::vector<std::string> &termSettings() {
    static const std::vector<std::string> keywords = {
        "query",   "key",   "score",      "mask",        "normalizer",
        "scale",   "eps",   "order",      "chunk",       "omega",
        "project", "decay", "key_weight", "state",       "softcap",
        "bias",    "sink",  "lengths",    "key_lengths", "query_lengths"};
    return keywords;
  }
  static bool isTermSetting(const std::string &word) {
    const std::vector<std::string> &keywords = termSettings();
    return std::find(keywords.begin(), keywords.end(), word) != keywords.end();
  }

  bool parseTermItem(TermDecl &term, std::vector<std::string> &seen) {
    const std::vector<std::string> &keywords = termSettings();
    if (!token.is(TokenKind::Identifier))
      return failHere("expected a term setting (" +
                      listChoices(keywords) + "), found " +
                      describe(token));
    std::string keyword = token.text;
    SourceLocation keywordLoc = token.loc;
    if (!isTermSetting(keyword))
      return failHere("unknown term setting '" + keyword + "'" +
                      suggest(keyword, keywords));
    // `lengths` is key_lengths and query_lengths at once.
    auto sets = [&](const std::string &setting) {
      return std::find(seen.begin(), seen.end(), setting) != seen.end();
    };
    if ((keyword == "lengths" &&
         (sets("key_lengths") || sets("query_lengths"))) ||
        (keyword != "lengths" &&
         keyword.find("_lengths") != std::string::npos && sets("lengths")))
      return fail(keywordLoc, "'lengths' sets both 'key_lengths' and "
                              "'query_lengths'; give either it or them");
    if (std::find(seen.begin(), seen.end(), keyword) != seen.end())
      return fail(keywordLoc,
                  "duplicate '" + keyword + "' in " +
                      (term.name.empty() ? std::string("this term")
                                         : "term '" + term.name + "'"));
    seen.push_back(keyword);
    consume();
    if (!expectPunct('=', ("after '" + keyword + "'").c_str()))
      return false;

    if (keyword == "query")
      return parseInputRef(term.query, "an input name");
    if (keyword == "key")
      return parseInputRef(term.key, "an input name");
    if (keyword == "omega")
      return parseInputRef(term.omega, "an input name");
    if (keyword == "key_weight")
      return parseInputRef(term.keyWeight, "an input name");
    if (keyword == "sink")
      return parseInputRef(term.sinks, "an input name");
    if (keyword == "key_lengths")
      return parseInputRef(term.keyLengths, "an input name");
    if (keyword == "query_lengths")
      return parseInputRef(term.queryLengths, "an input name");
    if (keyword == "lengths") {
      if (!parseInputRef(term.keyLengths, "an input name"))
        return false;
      term.queryLengths = term.keyLengths;
      return true;
    }
    if (keyword == "bias")
      return parseBias(term);
    if (keyword == "softcap")
      return parsePositive(term.softcap, term.softcapLoc, "a soft-cap",
                           "softcap");
    if (keyword == "state") {
      if (!parseInputRef(term.stateIn, "the state input S0"))
        return false;
      if (!token.isPunct(','))
        return true;
      consume();
      return parseInputRef(term.normIn, "the normaliser state input z0");
    }
    if (keyword == "decay") {
      term.decayLoc = token.loc;
      if (token.is(TokenKind::Identifier))
        return parseInputRef(term.decay, "an input name or a number");
      double value;
      if (!parseNumber(value, term.decayLoc, "a decay"))
        return false;
      if (!std::isfinite(value) || value <= 0 || value > 1)
        return fail(term.decayLoc,
                    "decay must be in (0, 1], got " + formatNumber(value));
      term.decayRate = value;
      return true;
    }
    if (keyword == "project")
      return parseInputRef(term.projectKeys, "the key projection input E") &&
             expectPunct(',', "between the projections E and F") &&
             parseInputRef(term.projectValues,
                           "the value projection input F");
    if (keyword == "score")
      return parseScore(term);
    if (keyword == "mask")
      return parseMask(term);
    if (keyword == "normalizer")
      return parseNormalizer(term);
    if (keyword == "order")
      return parseOrder(term);
    if (keyword == "scale")
      return parsePositive(term.scale, term.scaleLoc, "a scale", "scale");
    if (keyword == "eps") {
      double value;
      if (!parseNumber(value, term.epsLoc, "eps"))
        return false;
      if (!std::isfinite(value) || value < 0)
        return fail(term.epsLoc, "eps must not be negative, got " +
                                     formatNumber(value));
      term.eps = value;
      return true;
    }
    // chunk
    term.chunkLoc = token.loc;
    if (token.isIdent("auto")) {
      consume();
      return true;
    }
    int64_t chunk;
    if (!parseInteger(chunk, term.chunkLoc, "a chunk size or 'auto'",
                      "chunk"))
      return false;
    if (chunk <= 0)
      return fail(term.chunkLoc,
                  "chunk must be positive, got " + std::to_string(chunk));
    term.chunk = chunk;
    return true;
  }

  /// A finite positive number for the setting \p name (`scale`, `softcap`).
  bool parsePositive(std::optional<double> &result, SourceLocation &loc,
                     const char *what, const std::string &name) {
    double value;
    if (!parseNumber(value, loc, what))
      return false;
    if (!std::isfinite(value) || value <= 0)
      return fail(loc, name + " must be positive, got " + formatNumber(value));
    result = value;
    return true;
  }

  static std::string formatNumber(double value) {
    char buffer[32];
    std::snprintf(buffer, sizeof(buffer), "%g", value);
    return buffer;
  }

  bool parseScore(TermDecl &term) {
    term.scoreLoc = token.loc;
    if (!token.is(TokenKind::Identifier))
      return failHere("expected a score (softmax, relu2 or kernel), found " +
                      describe(token));
    std::string word = token.text;
    if (word == "softmax" || word == "relu2") {
      term.score = word == "softmax" ? Score::Softmax : Score::Relu2;
      consume();
      return true;
    }
    if (word != "kernel")
      return failHere("unknown score '" + word + "'" +
                      suggest(word, {"softmax", "relu2", "kernel"}));
    term.score = Score::Kernel;
    consume();
    if (!token.is(TokenKind::Identifier))
      return failHere("'kernel' needs a feature map (identity, relu, elu1, "
                      "favor+, cosformer or rfa), found " +
                      describe(token));
    std::string map = token.text;
    SourceLocation mapLoc = token.loc;
    if (isTermSetting(map))
      return failHere("'kernel' needs a feature map (identity, relu, elu1, "
                      "favor+, cosformer or rfa), found '" +
                      map + "'");
    consume();
    if (map == "favor" && token.isPunct('+')) {
      consume();
      map = "favor+";
    }
    static const std::vector<std::pair<const char *, FeatureMap>> maps = {
        {"identity", FeatureMap::Identity},
        {"relu", FeatureMap::Relu},
        {"elu1", FeatureMap::Elu1},
        {"favor+", FeatureMap::FavorPlus},
        {"favor_plus", FeatureMap::FavorPlus},
        {"cosformer", FeatureMap::CosFormer},
        {"rfa", FeatureMap::Rfa}};
    for (const auto &[name, value] : maps) {
      if (map == name) {
        term.featureMap = value;
        return true;
      }
    }
    return fail(mapLoc, "unknown feature map '" + map + "'" +
                            suggest(map, {"identity", "relu", "elu1", "favor+",
                                          "cosformer", "rfa"}));
  }

  /// `bias = alibi` or `bias = alibi(NAME)`.
  bool parseBias(TermDecl &term) {
    term.biasLoc = token.loc;
    if (!token.is(TokenKind::Identifier))
      return failHere("expected a bias (alibi or alibi(SLOPES)), found " +
                      describe(token));
    if (!token.isIdent("alibi"))
      return failHere("unknown bias '" + token.text + "'" +
                      suggest(token.text, {"alibi"}));
    consume();
    term.alibi = true;
    if (!token.isPunct('('))
      return true;
    consume();
    return parseInputRef(term.alibiSlopes, "the input of ALiBi slopes [H]") &&
           expectPunct(')', "after the ALiBi slopes");
  }

  bool parseMask(TermDecl &term) {
    term.maskLoc = token.loc;
    if (!token.is(TokenKind::Identifier))
      return failHere("expected a mask, found " + describe(token));
    static const std::vector<std::pair<const char *, MaskKind>> kinds = {
        {"none", MaskKind::None},
        {"causal", MaskKind::Causal},
        {"block", MaskKind::Block},
        {"block_causal", MaskKind::BlockCausal},
        {"prior_blocks", MaskKind::PriorBlocks},
        {"window", MaskKind::Window}};
    std::string word = token.text;
    auto it = std::find_if(kinds.begin(), kinds.end(),
                           [&](const auto &k) { return word == k.first; });
    if (it == kinds.end())
      return failHere("unknown mask '" + word + "'" +
                      suggest(word, {"none", "causal", "block", "block_causal",
                                     "prior_blocks", "window"}));
    consume();
    term.mask.kind = it->second;
    if (it->second == MaskKind::Window)
      return parseWindow(term);
    bool needsBlock = it->second == MaskKind::Block ||
                      it->second == MaskKind::BlockCausal ||
                      it->second == MaskKind::PriorBlocks;
    if (!needsBlock) {
      if (token.isPunct('('))
        return failHere("mask '" + word + "' takes no block size");
      return true;
    }
    if (!token.isPunct('('))
      return fail(term.maskLoc, "mask '" + word + "' needs a block size: " +
                                    word + "(c)");
    consume();
    SourceLocation loc;
    if (!parseInteger(term.mask.chunk, loc, "a block size", "the block size"))
      return false;
    if (term.mask.chunk <= 0)
      return fail(loc, "block size must be positive, got " +
                           std::to_string(term.mask.chunk));
    return expectPunct(')', "after the block size");
  }

  /// `window(w)` (= window(w - 1, 0), w keys up to the query's own) or
  /// `window(left, right)`, after the word.
  bool parseWindow(TermDecl &term) {
    if (!token.isPunct('('))
      return fail(term.maskLoc, "mask 'window' needs its size: window(w) or "
                                "window(left, right)");
    consume();
    SourceLocation loc;
    int64_t first;
    if (!parseInteger(first, loc, "a window size", "the window size"))
      return false;
    if (!token.isPunct(',')) {
      if (first <= 0)
        return fail(loc, "window size must be positive, got " +
                             std::to_string(first));
      term.mask.left = first - 1;
      term.mask.right = 0;
      return expectPunct(')', "after the window size");
    }
    consume();
    int64_t second;
    SourceLocation secondLoc;
    if (!parseInteger(second, secondLoc, "the window's right size",
                      "the window's right size"))
      return false;
    if (first < 0)
      return fail(loc, "window sizes must not be negative, got " +
                           std::to_string(first));
    if (second < 0)
      return fail(secondLoc, "window sizes must not be negative, got " +
                                 std::to_string(second));
    term.mask.left = first;
    term.mask.right = second;
    return expectPunct(')', "after the window's right size");
  }

  bool parseNormalizer(TermDecl &term) {
    term.normalizerLoc = token.loc;
    static const std::vector<std::pair<const char *, Normalizer>> values = {
        {"rows", Normalizer::Rows},
        {"length", Normalizer::Length},
        {"none", Normalizer::None}};
    for (const auto &[name, value] : values) {
      if (token.isIdent(name)) {
        term.normalizer = value;
        consume();
        return true;
      }
    }
    if (token.is(TokenKind::Identifier))
      return failHere("unknown normalizer '" + token.text + "'" +
                      suggest(token.text, {"rows", "length", "none"}));
    return failHere("expected a normalizer (rows, length or none), found " +
                    describe(token));
  }

  bool parseOrder(TermDecl &term) {
    term.orderLoc = token.loc;
    static const std::vector<std::pair<const char *, Order>> values = {
        {"auto", Order::Auto},
        {"qk_first", Order::QkFirst},
        {"kv_first", Order::KvFirst},
        {"recurrent", Order::Recurrent}};
    for (const auto &[name, value] : values) {
      if (token.isIdent(name)) {
        term.order = value;
        consume();
        return true;
      }
    }
    if (token.is(TokenKind::Identifier))
      return failHere(
          "unknown order '" + token.text + "'" +
          suggest(token.text, {"auto", "qk_first", "kv_first", "recurrent"}));
    return failHere(
        "expected an order (auto, qk_first, kv_first or recurrent), found " +
        describe(token));
  }

  Lexer lexer;
  Token token;
  Diagnostic &error;
  bool failed = false;
};

} // namespace

std::optional<Spec> attn::frontend::parseSpec(const SourceFile &source,
                                              Diagnostic &error) {
  Parser parser(source, error);
  return parser.parse();
}
