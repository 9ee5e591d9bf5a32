//===- MLIRGen.cpp - Lower a checked .attn spec to the attn dialect -------===//

#include "attn/Frontend/MLIRGen.h"

#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

#include <map>

using namespace attn::frontend;
namespace dialect = mlir::attn;

namespace {

dialect::Score convert(Score score) {
  switch (score) {
  case Score::Softmax:
    return dialect::Score::Softmax;
  case Score::Relu2:
    return dialect::Score::Relu2;
  case Score::Kernel:
    return dialect::Score::Kernel;
  }
  return dialect::Score::Softmax;
}

dialect::FeatureMap convert(FeatureMap featureMap) {
  switch (featureMap) {
  case FeatureMap::Identity:
  case FeatureMap::None:
    return dialect::FeatureMap::Identity;
  case FeatureMap::Relu:
    return dialect::FeatureMap::Relu;
  case FeatureMap::Elu1:
    return dialect::FeatureMap::Elu1;
  case FeatureMap::FavorPlus:
    return dialect::FeatureMap::FavorPlus;
  case FeatureMap::CosFormer:
    return dialect::FeatureMap::CosFormer;
  case FeatureMap::Rfa:
    return dialect::FeatureMap::Rfa;
  }
  return dialect::FeatureMap::Identity;
}

dialect::MaskKind convert(MaskKind kind) {
  switch (kind) {
  case MaskKind::None:
    return dialect::MaskKind::None;
  case MaskKind::Causal:
    return dialect::MaskKind::Causal;
  case MaskKind::Block:
    return dialect::MaskKind::Block;
  case MaskKind::BlockCausal:
    return dialect::MaskKind::BlockCausal;
  case MaskKind::PriorBlocks:
    return dialect::MaskKind::PriorBlocks;
  case MaskKind::Window:
    return dialect::MaskKind::Window;
  }
  return dialect::MaskKind::None;
}

std::optional<dialect::Normalizer> convert(Normalizer normalizer) {
  switch (normalizer) {
  case Normalizer::Default:
    return std::nullopt;
  case Normalizer::Rows:
    return dialect::Normalizer::Rows;
  case Normalizer::Length:
    return dialect::Normalizer::Length;
  case Normalizer::None:
    return dialect::Normalizer::None;
  }
  return std::nullopt;
}

dialect::Order convert(Order order) {
  switch (order) {
  case Order::Auto:
    return dialect::Order::Auto;
  case Order::QkFirst:
    return dialect::Order::QkFirst;
  case Order::KvFirst:
    return dialect::Order::KvFirst;
  case Order::Recurrent:
    return dialect::Order::Recurrent;
  }
  return dialect::Order::Auto;
}

class Generator {
public:
  Generator(mlir::MLIRContext &context, const Spec &spec,
            const SourceFile &source, const SizeBindings &sizes)
      : context(context), builder(&context), spec(spec), source(source),
        sizes(sizes) {}

  mlir::OwningOpRef<mlir::ModuleOp> run() {
    mlir::OwningOpRef<mlir::ModuleOp> module =
        mlir::ModuleOp::create(location(spec.loc));
    builder.setInsertionPointToEnd(module->getBody());

    llvm::SmallVector<mlir::Type> argTypes;
    for (const InputDecl &input : spec.inputs)
      argTypes.push_back(tensorType(input));
    const InputDecl &query = *spec.findInput(spec.terms.front().query.name);
    const InputDecl &value = *spec.findInput(spec.value.name);
    auto resultType = mlir::RankedTensorType::get(
        {dim(query, 0), dim(query, 1), dim(query, 2), dim(value, 3)},
        builder.getF32Type());
    // `output bf16`: the last op (the term, or attn.combine when there is
    // one) rounds the f32 result; terms feeding attn.combine stay f32.
    bool combined = spec.terms.size() > 1 || spec.gate.isSet();
    mlir::RankedTensorType outputType = resultType.clone(
        elementType(spec.outputType.value_or(ElementType::F32)));

    // `output state`: the final state (and, for rows, its norm) after O.
    llvm::SmallVector<mlir::Type> resultTypes = {outputType};
    if (spec.outputState)
      for (mlir::Type type : stateTypes(spec.terms.front(), query, value))
        resultTypes.push_back(type);
    // `output lse`: lse [B, H, N] after O.
    if (spec.outputLse)
      resultTypes.push_back(mlir::RankedTensorType::get(
          {dim(query, 0), dim(query, 1), dim(query, 2)}, builder.getF32Type()));

    auto func = mlir::func::FuncOp::create(
        builder, location(spec.loc), spec.name,
        builder.getFunctionType(argTypes, resultTypes));
    mlir::Block *entry = func.addEntryBlock();
    for (auto [index, input] : llvm::enumerate(spec.inputs)) {
      func.setArgAttr(index, "attn.input", builder.getStringAttr(input.name));
      arguments[input.name] = entry->getArgument(index);
    }
    builder.setInsertionPointToStart(entry);

    llvm::SmallVector<mlir::Value> terms;
    llvm::SmallVector<mlir::Value> finalStates;
    for (const TermDecl &term : spec.terms) {
      llvm::SmallVector<mlir::Type> types = {combined ? resultType
                                                      : outputType};
      if (spec.outputState || spec.outputLse)
        types.append(resultTypes.begin() + 1, resultTypes.end());
      mlir::Operation *op = emitTerm(term, types);
      terms.push_back(op->getResult(0));
      for (mlir::Value state : op->getResults().drop_front())
        finalStates.push_back(state);
    }

    mlir::Value output = terms.front();
    if (combined) {
      mlir::Value gate;
      if (spec.gate.isSet()) {
        gate = arguments.at(spec.gate.name);
        // A gate whose sizes are dynamic where the output's are static (or
        // the reverse) is cast: attn.combine wants one type for all.
        if (gate.getType() != resultType)
          gate = mlir::tensor::CastOp::create(builder, location(spec.loc),
                                              resultType, gate);
      }
      output = dialect::CombineOp::create(builder, location(spec.loc),
                                          outputType, terms, gate);
    }
    llvm::SmallVector<mlir::Value> returned = {output};
    returned.append(finalStates.begin(), finalStates.end());
    mlir::func::ReturnOp::create(builder, location(spec.loc), returned);
    return module;
  }

private:
  mlir::Location location(SourceLocation loc) {
    return mlir::FileLineColLoc::get(&context, source.getName(), loc.line,
                                     loc.column);
  }

  int64_t dim(const InputDecl &input, size_t index) {
    const ShapeEntry &entry = input.shape[index];
    if (entry.isLiteral())
      return entry.value;
    auto it = sizes.find(entry.name);
    return it == sizes.end() ? mlir::ShapedType::kDynamic : it->second;
  }

  mlir::RankedTensorType tensorType(const InputDecl &input) {
    llvm::SmallVector<int64_t> shape;
    for (size_t i = 0; i < input.shape.size(); ++i)
      shape.push_back(dim(input, i));
    return mlir::RankedTensorType::get(shape, elementType(input.elementType));
  }

  mlir::Type elementType(ElementType type) {
    switch (type) {
    case ElementType::F16:
      return builder.getF16Type();
    case ElementType::BF16:
      return builder.getBF16Type();
    case ElementType::F32:
      break;
    }
    return builder.getF32Type();
  }

  /// The final state's type [B, H, F, E] and, for rows, the norm's [B, H, F]
  /// (F the feature width: D, 2D for cosFormer, m for FAVOR+, 2m for RFA).
  llvm::SmallVector<mlir::Type> stateTypes(const TermDecl &term,
                                           const InputDecl &query,
                                           const InputDecl &value) {
    int64_t d = dim(query, 3), width = d;
    auto twice = [](int64_t x) {
      return mlir::ShapedType::isDynamic(x) ? x : 2 * x;
    };
    if (term.featureMap == FeatureMap::CosFormer)
      width = twice(d);
    if (term.omega.isSet()) {
      int64_t m = dim(*spec.findInput(term.omega.name), 0);
      width = term.featureMap == FeatureMap::Rfa ? twice(m) : m;
    }
    mlir::Type f32 = builder.getF32Type();
    llvm::SmallVector<mlir::Type> types = {mlir::RankedTensorType::get(
        {dim(query, 0), dim(query, 1), width, dim(value, 3)}, f32)};
    if (term.normalizer == Normalizer::Rows ||
        term.normalizer == Normalizer::Default)
      types.push_back(mlir::RankedTensorType::get(
          {dim(query, 0), dim(query, 1), width}, f32));
    return types;
  }

  mlir::Operation *emitTerm(const TermDecl &term, mlir::TypeRange resultTypes) {
    auto lookup = [&](const InputRef &ref) {
      return ref.isSet() ? arguments.at(ref.name) : mlir::Value();
    };
    mlir::Location loc = mlir::NameLoc::get(builder.getStringAttr(term.name),
                                            location(term.loc));
    dialect::FeatureMapAttr featureMap;
    if (*term.score == Score::Kernel)
      featureMap =
          dialect::FeatureMapAttr::get(&context, convert(term.featureMap));
    dialect::MaskAttr mask;
    if (term.mask.kind == MaskKind::Window)
      mask = dialect::MaskAttr::get(&context, dialect::MaskKind::Window, 0,
                                    term.mask.left, term.mask.right);
    else if (term.mask.kind != MaskKind::None)
      mask = dialect::MaskAttr::get(&context, convert(term.mask.kind),
                                    term.mask.chunk);
    dialect::NormalizerAttr normalizer;
    if (std::optional<dialect::Normalizer> value = convert(term.normalizer))
      normalizer = dialect::NormalizerAttr::get(&context, *value);
    auto floatAttr = [&](std::optional<double> value) {
      return value ? builder.getF64FloatAttr(*value) : mlir::FloatAttr();
    };
    mlir::IntegerAttr chunk;
    if (term.chunk)
      chunk = builder.getI64IntegerAttr(*term.chunk);
    auto op = dialect::TermOp::create(
        builder, loc, resultTypes, lookup(term.query), lookup(term.key),
        arguments.at(spec.value.name), lookup(term.omega),
        lookup(term.projectKeys), lookup(term.projectValues),
        lookup(term.decay), lookup(term.keyWeight), lookup(term.stateIn),
        lookup(term.normIn), lookup(term.alibiSlopes), lookup(term.sinks),
        lookup(term.keyLengths), lookup(term.queryLengths),
        dialect::ScoreAttr::get(&context, convert(*term.score)), featureMap,
        mask, normalizer, floatAttr(term.scale), floatAttr(term.eps),
        floatAttr(term.decayRate),
        dialect::OrderAttr::get(&context, convert(term.order)), chunk,
        /*crossover=*/mlir::IntegerAttr(), floatAttr(term.softcap),
        term.alibi ? builder.getUnitAttr() : mlir::UnitAttr());
    int32_t lse = spec.outputLse ? 1 : 0;
    int32_t states = static_cast<int32_t>(resultTypes.size()) - 1 - lse;
    op.getProperties().resultSegmentSizes = {1, states > 0 ? 1 : 0,
                                             states > 1 ? 1 : 0, lse};
    return op.getOperation();
  }

  mlir::MLIRContext &context;
  mlir::OpBuilder builder;
  const Spec &spec;
  const SourceFile &source;
  const SizeBindings &sizes;
  std::map<std::string, mlir::Value> arguments;
};

} // namespace

mlir::OwningOpRef<mlir::ModuleOp>
attn::frontend::generateMLIR(mlir::MLIRContext &context, const Spec &spec,
                             const SourceFile &source,
                             const SizeBindings &sizes) {
  context.loadDialect<mlir::attn::AttnDialect, mlir::func::FuncDialect,
                      mlir::tensor::TensorDialect>();
  return Generator(context, spec, source, sizes).run();
}
