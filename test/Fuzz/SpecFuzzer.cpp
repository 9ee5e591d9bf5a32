//===- SpecFuzzer.cpp - libFuzzer target for the .attn front end ----------===//
//
// Feeds arbitrary bytes to the spec front end as attnc does (parseSpec, then
// checkSpec, then bindSizes and printAST), renders every diagnostic with
// SourceFile::render, and checks the invariants the front end promises:
//
//  * every diagnostic has a non-empty, one-line, printable message;
//  * a parse or check diagnostic has a location, and every location (in a
//    diagnostic or in the syntax tree) is inside the file: 1 <= line <= the
//    number of lines, 1 <= column <= the line's length + 1, and it points at
//    the first byte of a token (never at white space or a comment), or just
//    past the end of the file;
//  * what the parser accepts is well formed (positive sizes, a feature map
//    exactly for `kernel`, positive block sizes, finite scale and eps, ...),
//    parsing is deterministic, and checkSpec's postconditions hold (unique
//    names, resolved references of the right rank, every input used);
//  * bindSizes binds exactly the declared sizes and rejects bad overrides.
//
// Built with -fsanitize=fuzzer,address by test/Fuzz/CMakeLists.txt; run by
// test/Fuzz/spec-fuzzer.test with examples/*.attn as the seed corpus and
// attn.dict as the dictionary.
//
//===----------------------------------------------------------------------===//

#include "FuzzCheck.h"

#include "attn/Frontend/AST.h"
#include "attn/Frontend/Diagnostics.h"
#include "attn/Frontend/Parser.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace attn::frontend;
using attn::fuzz::escape;
using attn::fuzz::isOnePrintableLine;

namespace {

const char *const kFileName = "fuzz.attn";

std::string show(SourceLocation loc) {
  return std::to_string(loc.line) + ":" + std::to_string(loc.column);
}

/// Knows the lines of the input, to check locations against them.
class Locations {
public:
  explicit Locations(const std::string &text) : text(text) {
    lineStarts.push_back(0);
    for (size_t i = 0; i < text.size(); ++i)
      if (text[i] == '\n')
        lineStarts.push_back(i + 1);
  }

  int lineCount() const { return static_cast<int>(lineStarts.size()); }

  /// The length of 1-based \p line without its '\n' (a '\r' counts).
  size_t rawLength(int line) const {
    size_t begin = lineStarts[line - 1];
    size_t end = static_cast<size_t>(line) < lineStarts.size()
                     ? lineStarts[line] - 1
                     : text.size();
    return end - begin;
  }

  /// \p loc is inside the file and at a token or the end of the file.
  void check(SourceLocation loc, const std::string &what) const {
    std::string where = what + " at " + show(loc) + " (file has " +
                        std::to_string(lineCount()) + " lines)";
    FUZZ_CHECK(loc.isValid(), "missing location: " + where);
    FUZZ_CHECK(loc.line >= 1 && loc.line <= lineCount(),
               "line out of range: " + where);
    FUZZ_CHECK(loc.column >= 1, "column < 1: " + where);
    size_t length = rawLength(loc.line);
    FUZZ_CHECK(static_cast<size_t>(loc.column) <= length + 1,
               "column past the end of its line (length " +
                   std::to_string(length) + "): " + where);
    size_t offset = lineStarts[loc.line - 1] + loc.column - 1;
    if (offset == text.size())
      return; // the end of the file
    unsigned char c = text[offset];
    FUZZ_CHECK(c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != '#',
               "location is not at a token (byte '" +
                   escape(std::string(1, static_cast<char>(c))) +
                   "'): " + where);
  }

private:
  const std::string &text;
  std::vector<size_t> lineStarts;
};

/// Checks \p render's output for \p loc and \p message.
void checkRendered(const SourceFile &source, SourceLocation loc,
                   const std::string &message, const std::string &rendered) {
  std::string head = std::string(kFileName);
  if (loc.isValid())
    head += ":" + std::to_string(loc.line) + ":" + std::to_string(loc.column);
  head += ": error: " + message + "\n";
  FUZZ_CHECK(rendered.compare(0, head.size(), head) == 0,
             "rendered diagnostic does not start with '" + escape(head) +
                 "': '" + escape(rendered) + "'");
  if (!loc.isValid()) {
    FUZZ_CHECK(rendered.size() == head.size(),
               "a diagnostic without location has more than one line: '" +
                   escape(rendered) + "'");
    return;
  }
  // Then the source line and a caret line.
  std::string line = source.getLine(loc.line);
  FUZZ_CHECK(line.find('\n') == std::string::npos,
             "getLine returned a line break: '" + escape(line) + "'");
  std::string rest = rendered.substr(head.size());
  FUZZ_CHECK(rest.compare(0, line.size() + 1, line + "\n") == 0,
             "rendered source line is not getLine(" +
                 std::to_string(loc.line) + "): '" + escape(rendered) + "'");
  std::string caretLine = rest.substr(line.size() + 1);
  size_t indent = loc.column < 1 ? 0
                                 : std::min(static_cast<size_t>(loc.column - 1),
                                            line.size());
  FUZZ_CHECK(caretLine.size() == indent + 2 &&
                 caretLine.compare(indent, 2, "^\n") == 0 &&
                 caretLine.find_first_not_of(" \t") == indent,
             "bad caret line for column " + std::to_string(loc.column) +
                 ": '" + escape(caretLine) + "'");
}

/// The invariants of any diagnostic; \p needsLocation for parse and check
/// errors, which always point into the file.
void checkDiagnostic(const SourceFile &source, const Locations &locations,
                     const Diagnostic &error, const char *stage,
                     bool needsLocation) {
  std::string what = std::string(stage) + " diagnostic '" +
                     escape(error.message) + "'";
  FUZZ_CHECK(!error.message.empty(),
             std::string(stage) + " failed with an empty message at " +
                 show(error.loc));
  FUZZ_CHECK(isOnePrintableLine(error.message),
             what + " is not one line of printable ASCII");
  if (needsLocation || error.loc.isValid())
    locations.check(error.loc, what);
  std::string rendered = source.render(error.loc, error.message);
  checkRendered(source, error.loc, error.message, rendered);
}

int64_t literalOrMinusOne(const ShapeEntry &entry) {
  return entry.isLiteral() ? entry.value : -1;
}

/// What the parser guarantees about a tree it accepts.
void checkParsed(const Spec &spec, const Locations &locations) {
  FUZZ_CHECK(!spec.name.empty(), "spec without a name");
  locations.check(spec.loc, "spec '" + spec.name + "'");
  for (const DimDecl &dim : spec.dims) {
    FUZZ_CHECK(!dim.name.empty(), "dim without a name");
    locations.check(dim.loc, "dim '" + dim.name + "'");
    FUZZ_CHECK(!dim.value || *dim.value > 0,
               "dim '" + dim.name + "' = " + std::to_string(*dim.value));
  }
  for (const InputDecl &input : spec.inputs) {
    FUZZ_CHECK(!input.name.empty(), "input without a name");
    locations.check(input.loc, "input '" + input.name + "'");
    FUZZ_CHECK(!input.shape.empty(), "input '" + input.name + "' has rank 0");
    for (const ShapeEntry &entry : input.shape) {
      locations.check(entry.loc, "a size of input '" + input.name + "'");
      FUZZ_CHECK(!entry.isLiteral() || entry.value > 0,
                 "input '" + input.name + "' has size " +
                     std::to_string(literalOrMinusOne(entry)));
    }
  }
  for (const TermDecl &term : spec.terms) {
    // Unnamed terms get their t0, t1, ... names from checkSpec.
    std::string of = " of term '" + term.name + "'";
    locations.check(term.loc, "term '" + term.name + "'");
    if (term.score) {
      locations.check(term.scoreLoc, "score" + of);
      FUZZ_CHECK((*term.score == Score::Kernel) ==
                     (term.featureMap != FeatureMap::None),
                 "score " + std::string(toString(*term.score)) +
                     " with feature map " + toString(term.featureMap) + of);
    } else {
      FUZZ_CHECK(term.featureMap == FeatureMap::None,
                 "feature map without a score" + of);
    }
    bool blockMask = term.mask.kind == MaskKind::Block ||
                     term.mask.kind == MaskKind::BlockCausal ||
                     term.mask.kind == MaskKind::PriorBlocks;
    if (blockMask)
      FUZZ_CHECK(term.mask.chunk > 0,
                 "block size " + std::to_string(term.mask.chunk) + of);
    if (term.mask.kind != MaskKind::None || term.maskLoc.isValid())
      locations.check(term.maskLoc, "mask" + of);
    if (term.normalizerLoc.isValid())
      locations.check(term.normalizerLoc, "normalizer" + of);
    if (term.orderLoc.isValid())
      locations.check(term.orderLoc, "order" + of);
    if (term.scale) {
      locations.check(term.scaleLoc, "scale" + of);
      FUZZ_CHECK(std::isfinite(*term.scale) && *term.scale > 0,
                 "scale " + std::to_string(*term.scale) + of);
    }
    if (term.eps) {
      locations.check(term.epsLoc, "eps" + of);
      FUZZ_CHECK(std::isfinite(*term.eps) && *term.eps >= 0,
                 "eps " + std::to_string(*term.eps) + of);
    }
    if (term.chunk) {
      locations.check(term.chunkLoc, "chunk" + of);
      FUZZ_CHECK(*term.chunk > 0,
                 "chunk " + std::to_string(*term.chunk) + of);
    }
    FUZZ_CHECK(term.projectKeys.isSet() == term.projectValues.isSet(),
               "only one of the projections is set" + of);
    if (term.decayRate) {
      locations.check(term.decayLoc, "decay" + of);
      FUZZ_CHECK(std::isfinite(*term.decayRate) && *term.decayRate > 0 &&
                     *term.decayRate <= 1,
                 "decay " + std::to_string(*term.decayRate) + of);
      FUZZ_CHECK(!term.decay.isSet(), "decay both a number and an input" + of);
    }
    for (const InputRef *ref :
         {&term.query, &term.key, &term.omega, &term.projectKeys,
          &term.projectValues, &term.decay, &term.keyWeight, &term.stateIn,
          &term.normIn})
      if (ref->isSet())
        locations.check(ref->loc, "reference '" + ref->name + "'" + of);
  }
  for (const InputRef *ref : {&spec.value, &spec.gate})
    if (ref->isSet())
      locations.check(ref->loc, "reference '" + ref->name + "'");
}

/// checkSpec's postconditions.
void checkChecked(const Spec &spec, const Locations &locations) {
  std::set<std::string> dims, inputs, terms, used;
  for (const DimDecl &dim : spec.dims)
    FUZZ_CHECK(dims.insert(dim.name).second,
               "dim '" + dim.name + "' declared twice but accepted");
  for (const InputDecl &input : spec.inputs) {
    FUZZ_CHECK(inputs.insert(input.name).second,
               "input '" + input.name + "' declared twice but accepted");
    for (const ShapeEntry &entry : input.shape)
      FUZZ_CHECK(entry.isLiteral() || spec.findDim(entry.name),
                 "unknown size '" + entry.name + "' accepted");
  }
  auto resolved = [&](const InputRef &ref, size_t rank,
                      const std::string &role) {
    FUZZ_CHECK(ref.isSet(), role + " left unresolved");
    locations.check(ref.loc, role + " '" + ref.name + "'");
    const InputDecl *input = spec.findInput(ref.name);
    FUZZ_CHECK(input, role + " names unknown input '" + ref.name + "'");
    FUZZ_CHECK(input->shape.size() == rank,
               role + " '" + ref.name + "' has rank " +
                   std::to_string(input->shape.size()) + ", not " +
                   std::to_string(rank));
    used.insert(ref.name);
  };
  FUZZ_CHECK(!spec.terms.empty(), "a spec without terms was accepted");
  for (const TermDecl &term : spec.terms) {
    std::string of = " of term '" + term.name + "'";
    FUZZ_CHECK(!term.name.empty(), "term without a name after checkSpec");
    FUZZ_CHECK(terms.insert(term.name).second,
               "term '" + term.name + "' declared twice but accepted");
    FUZZ_CHECK(term.score.has_value(), "no score" + of);
    resolved(term.query, 4, "the query" + of);
    resolved(term.key, 4, "the key" + of);
    if (term.omega.isSet())
      resolved(term.omega, 2, "omega" + of);
    if (term.decay.isSet()) {
      const InputDecl *g = spec.findInput(term.decay.name);
      resolved(term.decay, g && g->shape.size() == 3 ? 3 : 1, "decay" + of);
    }
    if (term.keyWeight.isSet())
      resolved(term.keyWeight, 3, "key weight" + of);
    if (term.alibiSlopes.isSet())
      resolved(term.alibiSlopes, 1, "ALiBi slopes" + of);
    if (term.sinks.isSet())
      resolved(term.sinks, 1, "sinks" + of);
    if (term.keyLengths.isSet())
      resolved(term.keyLengths, 1, "key lengths" + of);
    if (term.queryLengths.isSet())
      resolved(term.queryLengths, 1, "query lengths" + of);
    if (term.stateIn.isSet())
      resolved(term.stateIn, 4, "state" + of);
    if (term.normIn.isSet())
      resolved(term.normIn, 3, "normaliser state" + of);
    if (term.projectKeys.isSet()) {
      resolved(term.projectKeys, 2, "E" + of);
      resolved(term.projectValues, 2, "F" + of);
    }
  }
  resolved(spec.value, 4, "the value");
  if (spec.gate.isSet())
    resolved(spec.gate, 4, "the gate");
  for (const InputDecl &input : spec.inputs)
    FUZZ_CHECK(used.count(input.name),
               "unused input '" + input.name + "' accepted");
}

void checkShapes(const Spec &spec, const SizeBindings &sizes,
                 bool allowUnbound) {
  for (const InputDecl &input : spec.inputs) {
    std::vector<int64_t> shape = concreteShape(input, sizes);
    FUZZ_CHECK(shape.size() == input.shape.size(),
               "concreteShape changed the rank of '" + input.name + "'");
    for (int64_t size : shape)
      FUZZ_CHECK(size > 0 || (allowUnbound && size == -1),
                 "input '" + input.name + "' gets size " +
                     std::to_string(size));
  }
}

/// bindSizes with no override, with every dynamic dim overridden, and with
/// two bad overrides.
void checkBindings(const Spec &spec, const SourceFile &source,
                   const Locations &locations, uint8_t seed) {
  Diagnostic error;
  SizeBindings sizes;
  bool anyDynamic = false;
  for (const DimDecl &dim : spec.dims)
    anyDynamic |= !dim.value.has_value();

  // No overrides, unbound allowed: always succeeds, binds the static dims.
  FUZZ_CHECK(bindSizes(spec, {}, /*allowUnbound=*/true, sizes, error),
             "bindSizes with allowUnbound failed: " + escape(error.message));
  for (const DimDecl &dim : spec.dims) {
    auto it = sizes.find(dim.name);
    FUZZ_CHECK(dim.value ? it != sizes.end() && it->second == *dim.value
                         : it == sizes.end(),
               "bindSizes bound '" + dim.name + "' wrongly");
  }
  for (const auto &[name, value] : sizes)
    FUZZ_CHECK(spec.findDim(name) && value > 0,
               "bindSizes bound undeclared or bad size '" + name + "'");
  checkShapes(spec, sizes, /*allowUnbound=*/true);

  // No overrides, unbound not allowed: fails exactly if a dim is dynamic.
  error = Diagnostic();
  bool bound = bindSizes(spec, {}, /*allowUnbound=*/false, sizes, error);
  FUZZ_CHECK(bound == !anyDynamic,
             "bindSizes without overrides returned " +
                 std::string(bound ? "true" : "false"));
  if (!bound)
    checkDiagnostic(source, locations, error, "bindSizes",
                    /*needsLocation=*/true);
  else
    checkShapes(spec, sizes, /*allowUnbound=*/false);

  // Every dynamic dim and the first dim overridden: always succeeds.
  SizeBindings overrides;
  for (const DimDecl &dim : spec.dims)
    if (!dim.value)
      overrides[dim.name] = 1 + seed;
  if (!spec.dims.empty())
    overrides[spec.dims.front().name] = 7;
  error = Diagnostic();
  FUZZ_CHECK(bindSizes(spec, overrides, /*allowUnbound=*/false, sizes, error),
             "bindSizes with every dynamic dim set failed: " +
                 escape(error.message));
  // checkSpec made the names unique.
  FUZZ_CHECK(sizes.size() == spec.dims.size(),
             "bindSizes did not bind every dim");
  for (const auto &[name, value] : overrides)
    FUZZ_CHECK(sizes.at(name) == value, "override of '" + name + "' lost");
  checkShapes(spec, sizes, /*allowUnbound=*/false);

  // An override of a size the spec does not declare fails without location.
  std::string unknown = "no_such_size";
  while (spec.findDim(unknown))
    unknown += "_";
  error = Diagnostic();
  FUZZ_CHECK(!bindSizes(spec, {{unknown, 3}}, true, sizes, error),
             "bindSizes accepted an override of an undeclared size");
  FUZZ_CHECK(!error.loc.isValid(), "override error with a location");
  checkDiagnostic(source, locations, error, "bindSizes",
                  /*needsLocation=*/false);

  // A non-positive override fails.
  if (!spec.dims.empty()) {
    error = Diagnostic();
    FUZZ_CHECK(!bindSizes(spec, {{spec.dims.back().name, -int64_t(seed)}},
                          true, sizes, error),
               "bindSizes accepted a non-positive override");
    checkDiagnostic(source, locations, error, "bindSizes",
                    /*needsLocation=*/false);
  }
}

/// render() must survive any location, valid or not.
void renderArbitrary(const SourceFile &source, const Locations &locations,
                     const uint8_t *data, size_t size) {
  auto byte = [&](size_t i) -> int { return i < size ? data[i] : 0; };
  int lines = locations.lineCount();
  const SourceLocation locs[] = {
      {byte(0) % (lines + 2), byte(1) % 200 - 50},
      {lines, INT_MAX},
      {lines + 1, 1},
      {INT_MAX, INT_MAX},
      {1, INT_MIN},
      {-1, 5},
      {INT_MIN, 0},
  };
  for (SourceLocation loc : locs) {
    std::string rendered = source.render(loc, "m", "error");
    checkRendered(source, loc, "m", rendered);
    (void)source.render(loc, "", "note");
  }
}

std::string printed(const Spec &spec) {
  std::ostringstream os;
  printAST(spec, os);
  return os.str();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  SourceFile source(kFileName, text);
  Locations locations(source.getText());
  renderArbitrary(source, locations, data, size);

  Diagnostic error;
  std::optional<Spec> spec = parseSpec(source, error);
  if (!spec) {
    checkDiagnostic(source, locations, error, "parseSpec",
                    /*needsLocation=*/true);
    return 0;
  }
  checkParsed(*spec, locations);
  std::string ast = printed(*spec);
  FUZZ_CHECK(ast.compare(0, 5 + spec->name.size(), "Spec " + spec->name) == 0,
             "printAST output starts with '" + escape(ast.substr(0, 40)) + "'");

  // Parsing is deterministic.
  Diagnostic again;
  std::optional<Spec> reparsed = parseSpec(source, again);
  FUZZ_CHECK(reparsed && printed(*reparsed) == ast,
             "parsing the same text twice gave different trees");

  // The suggestion helpers on a word from the input.
  std::string word = spec->name;
  std::string suggestion = suggest(word, {"dim", "input", "term", "value"});
  FUZZ_CHECK(suggestion.compare(0, 2, "; ") == 0 &&
                 isOnePrintableLine(suggestion),
             "suggest gave '" + escape(suggestion) + "'");

  error = Diagnostic();
  if (!checkSpec(*spec, error)) {
    checkDiagnostic(source, locations, error, "checkSpec",
                    /*needsLocation=*/true);
    return 0;
  }
  checkParsed(*spec, locations);
  checkChecked(*spec, locations);
  FUZZ_CHECK(!printed(*spec).empty(), "printAST printed nothing");

  // checkSpec is idempotent on a checked spec.
  Spec copy = *spec;
  error = Diagnostic();
  FUZZ_CHECK(checkSpec(copy, error) && printed(copy) == printed(*spec),
             "checkSpec rejected or changed a checked spec: " +
                 escape(error.message));

  checkBindings(*spec, source, locations, size ? data[size - 1] : 0);
  return 0;
}
