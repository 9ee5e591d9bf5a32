//===- AST.cpp - The syntax tree of an .attn spec -------------------------===//

#include "attn/Frontend/AST.h"

using namespace attn::frontend;

const DimDecl *Spec::findDim(const std::string &name) const {
  for (const DimDecl &dim : dims)
    if (dim.name == name)
      return &dim;
  return nullptr;
}

const InputDecl *Spec::findInput(const std::string &name) const {
  for (const InputDecl &input : inputs)
    if (input.name == name)
      return &input;
  return nullptr;
}

const char *attn::frontend::toString(Order order) {
  switch (order) {
  case Order::Auto:
    return "auto";
  case Order::QkFirst:
    return "qk_first";
  case Order::KvFirst:
    return "kv_first";
  case Order::Recurrent:
    return "recurrent";
  }
  return "?";
}

static std::ostream &operator<<(std::ostream &os, SourceLocation loc) {
  return os << "@" << loc.line << ":" << loc.column;
}

void attn::frontend::printAST(const Spec &spec, std::ostream &os) {
  os << "Spec " << spec.name << " " << spec.loc << "\n";
  for (const DimDecl &dim : spec.dims) {
    os << "  Dim " << dim.name << " = ";
    if (dim.value)
      os << *dim.value;
    else
      os << "?";
    os << " " << dim.loc << "\n";
  }
  for (const InputDecl &input : spec.inputs) {
    os << "  Input " << input.name << " ";
    if (input.elementType != ElementType::F32)
      os << toString(input.elementType);
    os << "[";
    for (size_t i = 0; i < input.shape.size(); ++i) {
      if (i)
        os << ", ";
      const ShapeEntry &entry = input.shape[i];
      if (entry.isLiteral())
        os << entry.value;
      else
        os << entry.name;
    }
    os << "] " << input.loc << "\n";
  }
  for (const TermDecl &term : spec.terms) {
    os << "  Term " << term.name << " " << term.loc << "\n";
    os << "    query " << term.query.name << "\n";
    os << "    key " << term.key.name << "\n";
    os << "    score " << (term.score ? toString(*term.score) : "?");
    if (term.featureMap != FeatureMap::None)
      os << " " << toString(term.featureMap);
    os << "\n    mask " << toString(term.mask.kind);
    if (term.mask.kind == MaskKind::Block ||
        term.mask.kind == MaskKind::BlockCausal ||
        term.mask.kind == MaskKind::PriorBlocks)
      os << "(" << term.mask.chunk << ")";
    if (term.mask.kind == MaskKind::Window)
      os << "(" << term.mask.left << ", " << term.mask.right << ")";
    os << "\n    normalizer " << toString(term.normalizer) << "\n";
    if (term.scale)
      os << "    scale " << *term.scale << "\n";
    if (term.eps)
      os << "    eps " << *term.eps << "\n";
    os << "    order " << toString(term.order) << "\n";
    os << "    chunk ";
    if (term.chunk)
      os << *term.chunk;
    else
      os << "auto";
    os << "\n";
    if (term.omega.isSet())
      os << "    omega " << term.omega.name << "\n";
    if (term.decayRate)
      os << "    decay " << *term.decayRate << "\n";
    if (term.decay.isSet())
      os << "    decay " << term.decay.name << "\n";
    if (term.keyWeight.isSet())
      os << "    key_weight " << term.keyWeight.name << "\n";
    if (term.stateIn.isSet())
      os << "    state " << term.stateIn.name
         << (term.normIn.isSet() ? ", " + term.normIn.name : "") << "\n";
    if (term.softcap)
      os << "    softcap " << *term.softcap << "\n";
    if (term.alibi)
      os << "    bias alibi"
         << (term.alibiSlopes.isSet() ? "(" + term.alibiSlopes.name + ")" : "")
         << "\n";
    if (term.sinks.isSet())
      os << "    sink " << term.sinks.name << "\n";
    if (term.keyLengths.isSet())
      os << "    key_lengths " << term.keyLengths.name << "\n";
    if (term.queryLengths.isSet())
      os << "    query_lengths " << term.queryLengths.name << "\n";
    if (term.projectKeys.isSet())
      os << "    project " << term.projectKeys.name << ", "
         << term.projectValues.name << "\n";
  }
  os << "  Value " << spec.value.name << "\n";
  if (spec.gate.isSet())
    os << "  Gate " << spec.gate.name << "\n";
  if (spec.outputState)
    os << "  Output state\n";
  if (spec.outputLse)
    os << "  Output lse\n";
  if (spec.outputType)
    os << "  Output " << toString(*spec.outputType) << "\n";
}
