//===- Sema.cpp - Name resolution and size binding for .attn specs --------===//
//
// Only what the language itself defines is checked here (names, ranks,
// defaults). The math's constraints live in one place, the attn dialect's
// verifier, and attnc reports its messages at the term they come from.
//
//===----------------------------------------------------------------------===//

#include "attn/Frontend/Parser.h"

#include <set>

using namespace attn::frontend;

namespace {

class Checker {
public:
  Checker(Spec &spec, Diagnostic &error) : spec(spec), error(error) {}

  bool run() {
    return checkDims() && checkInputs() && checkTerms() &&
           checkValueAndGate() && checkElementTypes() && checkOutputs() &&
           checkAllInputsUsed();
  }

private:
  bool fail(SourceLocation loc, std::string message) {
    error.loc = loc;
    error.message = std::move(message);
    return false;
  }

  std::vector<std::string> inputNames() const {
    std::vector<std::string> names;
    for (const InputDecl &input : spec.inputs)
      names.push_back(input.name);
    return names;
  }

  bool checkDims() {
    std::set<std::string> seen;
    for (const DimDecl &dim : spec.dims)
      if (!seen.insert(dim.name).second)
        return fail(dim.loc, "size '" + dim.name + "' is declared twice");
    return true;
  }

  bool checkInputs() {
    std::set<std::string> seen;
    std::vector<std::string> dimNames;
    for (const DimDecl &dim : spec.dims)
      dimNames.push_back(dim.name);
    for (const InputDecl &input : spec.inputs) {
      if (!seen.insert(input.name).second)
        return fail(input.loc, "input '" + input.name + "' is declared twice");
      for (const ShapeEntry &entry : input.shape)
        if (!entry.isLiteral() && !spec.findDim(entry.name))
          return fail(entry.loc,
                      "unknown size '" + entry.name + "'" +
                          (dimNames.empty()
                               ? "; declare it with 'dim " + entry.name +
                                     "' (dynamic) or 'dim " + entry.name +
                                     " = 64'"
                               : suggest(entry.name, dimNames)));
    }
    return true;
  }

  /// Resolves \p ref (defaulting to \p defaultName at \p defaultLoc) to an
  /// input of rank \p rank; \p role and \p layout explain the rank.
  bool resolve(InputRef &ref, const std::string &defaultName,
               SourceLocation defaultLoc, size_t rank, const std::string &role,
               const char *layout) {
    bool defaulted = !ref.isSet();
    if (defaulted) {
      ref.name = defaultName;
      ref.loc = defaultLoc;
      if (!spec.findInput(defaultName))
        return fail(defaultLoc, role + " defaults to '" + defaultName +
                                    "', but there is no input '" +
                                    defaultName + "'");
    }
    const InputDecl *input = spec.findInput(ref.name);
    if (!input)
      return fail(ref.loc, "unknown input '" + ref.name + "'" +
                               (spec.inputs.empty()
                                    ? std::string()
                                    : suggest(ref.name, inputNames())));
    if (input->shape.size() != rank)
      return fail(defaulted ? input->loc : ref.loc,
                  "input '" + ref.name + "' is " + role +
                               " and needs " + std::to_string(rank) +
                               " sizes " + layout + ", but has " +
                               std::to_string(input->shape.size()));
    used.insert(ref.name);
    return true;
  }

  /// Unnamed terms are called t0, t1, ... by position, skipping names that
  /// another term already has.
  void nameUnnamedTerms() {
    std::set<std::string> taken;
    for (const TermDecl &term : spec.terms)
      if (!term.name.empty())
        taken.insert(term.name);
    for (size_t index = 0; index < spec.terms.size(); ++index) {
      TermDecl &term = spec.terms[index];
      if (!term.name.empty())
        continue;
      std::string name = "t" + std::to_string(index);
      while (taken.count(name))
        name += "_";
      term.name = name;
      taken.insert(name);
    }
  }

  bool checkTerms() {
    if (spec.terms.empty())
      return fail(spec.loc, "spec '" + spec.name +
                                "' has no term; add 'term { score = softmax }'");
    nameUnnamedTerms();
    std::set<std::string> seen;
    for (TermDecl &term : spec.terms) {
      if (!seen.insert(term.name).second)
        return fail(term.loc, "term '" + term.name + "' is declared twice");
      if (!term.score)
        return fail(term.loc, "term '" + term.name +
                                  "' has no score; add 'score = softmax', "
                                  "'score = relu2' or 'score = kernel elu1'");
      std::string of = " of term '" + term.name + "'";
      if (!resolve(term.query, "q", term.loc, 4, "the query" + of,
                   "[B, H, N, D]") ||
          !resolve(term.key, "k", term.loc, 4, "the key" + of,
                   "[B, H, M, D]"))
        return false;
      if (term.omega.isSet() &&
          !resolve(term.omega, "", term.loc, 2, "omega" + of, "[m, D]"))
        return false;
      if (term.decay.isSet()) {
        // [H] (one g per head) or [B, H, N] (one per token): rank 1 or 3.
        const InputDecl *input = spec.findInput(term.decay.name);
        size_t rank = input && input->shape.size() == 3 ? 3 : 1;
        if (!resolve(term.decay, "", term.loc, rank, "the decay" + of,
                     rank == 3 ? "[B, H, N]" : "[H] (or 3 sizes [B, H, N])"))
          return false;
      }
      if (term.alibiSlopes.isSet() &&
          !resolve(term.alibiSlopes, "", term.loc, 1, "the ALiBi slopes" + of,
                   "[H]"))
        return false;
      if (term.sinks.isSet() &&
          !resolve(term.sinks, "", term.loc, 1, "the sinks" + of, "[H]"))
        return false;
      if (term.keyLengths.isSet() && !resolve(term.keyLengths, "", term.loc, 1,
                                              "the key lengths" + of, "[B]"))
        return false;
      if (term.queryLengths.isSet() &&
          !resolve(term.queryLengths, "", term.loc, 1, "the query lengths" + of,
                   "[B]"))
        return false;
      if (term.keyWeight.isSet() &&
          !resolve(term.keyWeight, "", term.loc, 3, "the key weight" + of,
                   "[B, H, M]"))
        return false;
      if (term.stateIn.isSet() && !resolve(term.stateIn, "", term.loc, 4,
                                           "the state S0" + of, "[B, H, F, E]"))
        return false;
      if (term.normIn.isSet() &&
          !resolve(term.normIn, "", term.loc, 3, "the normaliser state z0" + of,
                   "[B, H, F]"))
        return false;
      if (term.projectKeys.isSet() &&
          (!resolve(term.projectKeys, "", term.loc, 2,
                    "the key projection E" + of, "[k, M]") ||
           !resolve(term.projectValues, "", term.loc, 2,
                    "the value projection F" + of, "[k, M]")))
        return false;
    }
    return true;
  }

  bool checkValueAndGate() {
    if (!resolve(spec.value, "v", spec.loc, 4, "the value input",
                 "[B, H, M, E]"))
      return false;
    if (spec.gate.isSet() &&
        !resolve(spec.gate, "", spec.loc, 4, "the gate input", "[B, H, N, E]"))
      return false;
    return true;
  }

  /// Only the query, key and value may be f16 or bf16 (DESIGN §1.1), and
  /// they share one type: V is shared, so every term's q and k have its type.
  bool checkElementTypes() {
    const InputDecl &value = *spec.findInput(spec.value.name);
    auto typeLoc = [](const InputDecl &input) {
      return input.elementTypeLoc.isValid() ? input.elementTypeLoc : input.loc;
    };
    for (const TermDecl &term : spec.terms)
      for (const InputRef *ref : {&term.query, &term.key}) {
        const InputDecl &input = *spec.findInput(ref->name);
        if (input.elementType != value.elementType)
          return fail(typeLoc(input),
                      "input '" + input.name + "' is " +
                          toString(input.elementType) + " but the value '" +
                          value.name + "' is " + toString(value.elementType) +
                          ": the query, key and value of a term share one "
                          "element type");
      }
    auto requireF32 = [&](const InputRef &ref, const std::string &role) {
      if (!ref.isSet())
        return true;
      const InputDecl &input = *spec.findInput(ref.name);
      if (input.elementType == ElementType::F32)
        return true;
      return fail(typeLoc(input),
                  "input '" + input.name + "' is " +
                      toString(input.elementType) + ", but it is " + role +
                      ", which must be f32 (only the query, key and value may "
                      "be f16 or bf16)");
    };
    if (!requireF32(spec.gate, "the gate"))
      return false;
    for (const TermDecl &term : spec.terms) {
      std::string of = " of term '" + term.name + "'";
      if (!requireF32(term.omega, "omega" + of) ||
          !requireF32(term.decay, "the decay" + of) ||
          !requireF32(term.alibiSlopes, "the ALiBi slopes" + of) ||
          !requireF32(term.sinks, "the sinks" + of) ||
          !requireF32(term.keyLengths, "the key lengths" + of) ||
          !requireF32(term.queryLengths, "the query lengths" + of) ||
          !requireF32(term.keyWeight, "the key weight" + of) ||
          !requireF32(term.stateIn, "the state S0" + of) ||
          !requireF32(term.normIn, "the normaliser state z0" + of) ||
          !requireF32(term.projectKeys, "the key projection E" + of) ||
          !requireF32(term.projectValues, "the value projection F" + of))
        return false;
    }
    return true;
  }

  /// `output state` returns one term's state: the spec has exactly one
  /// term and no gate (the state is the term's, not the combination's).
  bool checkOutputs() {
    if (spec.outputLse) {
      if (spec.terms.size() != 1)
        return fail(spec.outputLseLoc,
                    "'output lse' needs a spec with one term, but it has " +
                        std::to_string(spec.terms.size()));
      if (spec.gate.isSet())
        return fail(spec.outputLseLoc,
                    "'output lse' is not allowed with a gate");
      const TermDecl &term = spec.terms.front();
      if (term.score && *term.score != Score::Softmax)
        return fail(spec.outputLseLoc,
                    std::string("'output lse' needs a softmax term, but "
                                "term '") +
                        term.name + "' has score '" + toString(*term.score) +
                        "'");
      if (spec.outputState)
        return fail(spec.outputLseLoc,
                    "'output lse' and 'output state' exclude each other (a "
                    "state needs a kernel term, lse a softmax one)");
    }
    if (!spec.outputState)
      return true;
    if (spec.terms.size() != 1)
      return fail(spec.outputStateLoc,
                  "'output state' needs a spec with one term, but it has " +
                      std::to_string(spec.terms.size()));
    if (spec.gate.isSet())
      return fail(spec.outputStateLoc,
                  "'output state' is not allowed with a gate");
    return true;
  }

  bool checkAllInputsUsed() {
    for (const InputDecl &input : spec.inputs)
      if (!used.count(input.name))
        return fail(input.loc,
                    "input '" + input.name +
                        "' is not used by any term, the value or the gate");
    return true;
  }

  Spec &spec;
  Diagnostic &error;
  std::set<std::string> used;
};

} // namespace

bool attn::frontend::checkSpec(Spec &spec, Diagnostic &error) {
  return Checker(spec, error).run();
}

bool attn::frontend::bindSizes(const Spec &spec,
                               const SizeBindings &overrides,
                               bool allowUnbound, SizeBindings &result,
                               Diagnostic &error) {
  result.clear();
  for (const auto &[name, value] : overrides) {
    if (!spec.findDim(name)) {
      std::vector<std::string> names;
      for (const DimDecl &dim : spec.dims)
        names.push_back(dim.name);
      error.loc = {};
      error.message = "--set " + name + ": the spec has no size '" + name +
                      "'" + (names.empty() ? "" : suggest(name, names));
      return false;
    }
    if (value <= 0) {
      error.loc = {};
      error.message = "--set " + name + "=" + std::to_string(value) +
                      ": sizes must be positive";
      return false;
    }
  }
  for (const DimDecl &dim : spec.dims) {
    auto it = overrides.find(dim.name);
    if (it != overrides.end()) {
      result[dim.name] = it->second;
    } else if (dim.value) {
      result[dim.name] = *dim.value;
    } else if (!allowUnbound) {
      error.loc = dim.loc;
      error.message = "size '" + dim.name + "' is dynamic; give it with --set " +
                      dim.name + "=VALUE";
      return false;
    }
  }
  return true;
}

namespace {
/// The value of a shape entry under \p sizes, or -1 when it is unbound.
int64_t entryValue(const ShapeEntry &entry, const SizeBindings &sizes) {
  if (entry.isLiteral())
    return entry.value;
  auto it = sizes.find(entry.name);
  return it == sizes.end() ? -1 : it->second;
}

std::string entryText(const ShapeEntry &entry, const SizeBindings &sizes) {
  int64_t value = entryValue(entry, sizes);
  if (entry.isLiteral() || value < 0)
    return entry.isLiteral() ? std::to_string(entry.value) : entry.name;
  return entry.name + " = " + std::to_string(value);
}

/// True when two entries are certainly different sizes.
bool knownDifferent(const ShapeEntry &a, const ShapeEntry &b,
                    const SizeBindings &sizes) {
  int64_t x = entryValue(a, sizes), y = entryValue(b, sizes);
  return x >= 0 && y >= 0 && x != y;
}
} // namespace

bool attn::frontend::checkShapes(const Spec &spec, const SizeBindings &sizes,
                                 Diagnostic &error) {
  static const char *const names[] = {"B", "H", "N", "E"};
  const TermDecl &first = spec.terms.front();
  const InputDecl &query = *spec.findInput(first.query.name);
  const InputDecl &value = *spec.findInput(spec.value.name);
  for (const TermDecl &term : spec.terms) {
    const InputDecl &other = *spec.findInput(term.query.name);
    for (size_t dim = 0; dim < 3; ++dim) {
      if (!knownDifferent(other.shape[dim], query.shape[dim], sizes))
        continue;
      error.loc = term.query.loc;
      error.message = "term '" + term.name + "': its query '" + other.name +
                      "' has " + names[dim] + " = " +
                      entryText(other.shape[dim], sizes) +
                      " but the first term's query '" + query.name +
                      "' has " + names[dim] + " = " +
                      entryText(query.shape[dim], sizes) +
                      "; all terms share the output's B, H and N";
      return false;
    }
  }
  if (spec.gate.isSet()) {
    const InputDecl &gate = *spec.findInput(spec.gate.name);
    const ShapeEntry *output[] = {&query.shape[0], &query.shape[1],
                                  &query.shape[2], &value.shape[3]};
    for (size_t dim = 0; dim < 4; ++dim) {
      if (!knownDifferent(gate.shape[dim], *output[dim], sizes))
        continue;
      error.loc = spec.gate.loc;
      error.message = std::string("the gate '") + gate.name + "' has " +
                      names[dim] + " = " + entryText(gate.shape[dim], sizes) +
                      " but the output has " + names[dim] + " = " +
                      entryText(*output[dim], sizes) +
                      " (the output is [B, H, N, E] of the first query and "
                      "the value input)";
      return false;
    }
  }
  return true;
}

std::vector<int64_t> attn::frontend::concreteShape(const InputDecl &input,
                                                   const SizeBindings &sizes) {
  std::vector<int64_t> shape;
  for (const ShapeEntry &entry : input.shape) {
    if (entry.isLiteral()) {
      shape.push_back(entry.value);
      continue;
    }
    auto it = sizes.find(entry.name);
    shape.push_back(it == sizes.end() ? -1 : it->second);
  }
  return shape;
}
