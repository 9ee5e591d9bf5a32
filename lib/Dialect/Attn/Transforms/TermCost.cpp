//===- TermCost.cpp - Feed attn.term ops to the cost model ----------------===//

#include "attn/Dialect/Attn/Transforms/TermCost.h"

using namespace mlir;
using namespace mlir::attn;
namespace cost = ::attn::cost;

static cost::Score toCost(Score score) {
  switch (score) {
  case Score::Softmax:
    return cost::Score::Softmax;
  case Score::Relu2:
    return cost::Score::Relu2;
  case Score::Kernel:
    return cost::Score::Kernel;
  }
  return cost::Score::Softmax;
}

static cost::FeatureMap toCost(std::optional<FeatureMap> featureMap) {
  if (!featureMap)
    return cost::FeatureMap::None;
  switch (*featureMap) {
  case FeatureMap::Identity:
    return cost::FeatureMap::Identity;
  case FeatureMap::Relu:
    return cost::FeatureMap::Relu;
  case FeatureMap::Elu1:
    return cost::FeatureMap::Elu1;
  case FeatureMap::FavorPlus:
    return cost::FeatureMap::FavorPlus;
  case FeatureMap::CosFormer:
    return cost::FeatureMap::CosFormer;
  case FeatureMap::Rfa:
    return cost::FeatureMap::Rfa;
  }
  return cost::FeatureMap::None;
}

static cost::MaskKind toCost(MaskKind mask) {
  switch (mask) {
  case MaskKind::None:
    return cost::MaskKind::None;
  case MaskKind::Causal:
    return cost::MaskKind::Causal;
  case MaskKind::Block:
    return cost::MaskKind::Block;
  case MaskKind::BlockCausal:
    return cost::MaskKind::BlockCausal;
  case MaskKind::PriorBlocks:
    return cost::MaskKind::PriorBlocks;
  case MaskKind::Window:
    return cost::MaskKind::Window;
  }
  return cost::MaskKind::None;
}

cost::TermShape
mlir::attn::getTermShape(TermOp term, int64_t assumedLength,
                         llvm::SmallVectorImpl<std::string> &assumptions) {
  auto sizeOr = [&](int64_t size, int64_t assumed, const char *what) {
    if (!ShapedType::isDynamic(size))
      return size;
    if (assumed != 1)
      assumptions.push_back(std::string(what) + " is dynamic; assuming " +
                            std::to_string(assumed));
    return assumed;
  };
  RankedTensorType query = term.getQuery().getType();
  RankedTensorType key = term.getKey().getType();
  RankedTensorType value = term.getValue().getType();
  cost::TermShape shape;
  shape.score = toCost(term.getScore());
  shape.featureMap = toCost(term.getFeatureMap());
  shape.mask = toCost(term.getMaskKind());
  shape.maskBlock = term.getMaskBlock();
  if (std::optional<MaskAttr> mask = term.getMask()) {
    shape.windowLeft = mask->getLeft();
    shape.windowRight = mask->getRight();
  }
  shape.qkFirstOnly = term.needsQkFirst();
  shape.batch = sizeOr(query.getDimSize(0), 1, "B");
  shape.heads = sizeOr(query.getDimSize(1), 1, "H");
  shape.keyHeads = sizeOr(key.getDimSize(1), shape.heads, "H_kv");
  // Causal masks tie N and M (C6): where one is static, so is the other.
  int64_t queries = query.getDimSize(2), keys = key.getDimSize(2);
  if (term.getMask() && term.getMask()->isCausal()) {
    if (ShapedType::isDynamic(keys))
      keys = queries;
    else if (ShapedType::isDynamic(queries))
      queries = keys;
  }
  shape.queries = sizeOr(queries, assumedLength, "N");
  shape.staticQueries = !ShapedType::isDynamic(queries);
  shape.staticKeys = !ShapedType::isDynamic(keys);
  shape.keys = sizeOr(keys, assumedLength, "M");
  shape.featureDim = sizeOr(query.getDimSize(3), 64, "D");
  shape.valueDim = sizeOr(value.getDimSize(3), 64, "E");
  if (Value omega = term.getOmega())
    shape.numFeatures = sizeOr(
        cast<RankedTensorType>(omega.getType()).getDimSize(0), 256, "m");
  shape.decay = term.hasDecay();
  shape.state = term.hasState();
  if (Value projection = term.getKeyProjection()) {
    int64_t projected =
        cast<RankedTensorType>(projection.getType()).getDimSize(0);
    shape.projectedLength = sizeOr(projected, 256, "k");
    shape.staticKeys = !ShapedType::isDynamic(projected);
  }
  return shape;
}

std::string mlir::attn::resolveTarget(const std::string &name,
                                      cost::Target &target) {
  if (name == "cpu") {
    target = cost::cpuTarget();
    return "";
  }
  if (name == "nvptx") {
    target = cost::nvptxTarget();
    return "";
  }
  target = cost::cpuTarget();
  return cost::loadTarget(name, target);
}
