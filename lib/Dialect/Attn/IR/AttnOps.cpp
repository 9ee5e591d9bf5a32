//===- AttnOps.cpp - Operations of the attn dialect -----------------------===//

#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;

#define GET_OP_CLASSES
#include "attn/Dialect/Attn/IR/AttnOps.cpp.inc"

//===----------------------------------------------------------------------===//
// TermOp: accessors
//===----------------------------------------------------------------------===//

MaskKind TermOp::getMaskKind() {
  std::optional<MaskAttr> mask = getMask();
  return mask ? mask->getKind() : MaskKind::None;
}

bool TermOp::hasGroupedHeads() {
  int64_t heads = getQuery().getType().getDimSize(1);
  int64_t keyHeads = getKey().getType().getDimSize(1);
  return !ShapedType::isDynamic(heads) && !ShapedType::isDynamic(keyHeads) &&
         heads != keyHeads;
}

bool TermOp::needsQkFirst() {
  return getMaskKind() == MaskKind::Window || hasGroupedHeads() || hasLengths();
}

int64_t TermOp::getMaskBlock() {
  std::optional<MaskAttr> mask = getMask();
  return mask ? mask->getBlock() : 0;
}

Normalizer TermOp::getEffectiveNormalizer() {
  if (std::optional<Normalizer> normalizer = getNormalizer())
    return *normalizer;
  return getScore() == Score::Relu2 ? Normalizer::Length : Normalizer::Rows;
}

double TermOp::getEffectiveEps() {
  if (getEffectiveNormalizer() != Normalizer::Rows)
    return 0.0;
  if (std::optional<APFloat> eps = getEps())
    return eps->convertToDouble();
  return getScore() == Score::Kernel ? 1e-6 : 0.0;
}

bool TermOp::usesScale() {
  return getScore() != Score::Kernel ||
         getFeatureMap() == std::optional<FeatureMap>(FeatureMap::FavorPlus);
}

std::optional<double> TermOp::getEffectiveScale() {
  if (std::optional<APFloat> scale = getScale())
    return scale->convertToDouble();
  int64_t featureDim = getQuery().getType().getDimSize(3);
  if (ShapedType::isDynamic(featureDim))
    return std::nullopt;
  return 1.0 / std::sqrt(static_cast<double>(featureDim));
}

//===----------------------------------------------------------------------===//
// TermOp: custom assembly
//===----------------------------------------------------------------------===//
//
//   attn.term score [feature_map] (%q, %k, %v) clause* attr-dict
//       : type(q), type(k), type(v) -> type(result)
//
//   clause ::= `omega` `(` %w `:` type `)`
//            | `project` `(` %e `,` %f `:` type `,` type `)`
//            | `mask` mask-body | `normalizer` kw | `order` kw
//            | `scale` float | `eps` float | `chunk` (integer | `auto`)
//            | `crossover` integer
//            | `decay` (float | `(` %g `:` type `)`)
//            | `key_weight` `(` %w `:` type `)`
//            | `state` `(` %s [`,` %z] `:` type [`,` type] `)`
//            | `final_state`
//
//   and `-> type(result) [, type(final_state) [, type(final_norm)]]`.

namespace {
/// Parses `keyword` as the enum \p EnumT via \p symbolize, reporting the
/// accepted spellings on failure.
template <typename EnumT>
ParseResult parseEnumKeyword(OpAsmParser &parser, StringRef what,
                             std::optional<EnumT> (*symbolize)(StringRef),
                             StringRef expected, EnumT &result) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (failed(parser.parseOptionalKeyword(&keyword)))
    return parser.emitError(loc) << "expected " << what << " (" << expected
                                 << ")";
  std::optional<EnumT> value = symbolize(keyword);
  if (!value)
    return parser.emitError(loc) << "unknown " << what << " '" << keyword
                                 << "'; expected " << expected;
  result = *value;
  return success();
}
} // namespace

static constexpr StringLiteral kScoreNames = "softmax, relu2 or kernel";
static constexpr StringLiteral kFeatureMapNames =
    "identity, relu, elu1, favor_plus, cosformer or rfa";
static constexpr StringLiteral kNormalizerNames = "rows, length or none";
static constexpr StringLiteral kOrderNames =
    "auto, qk_first, kv_first or recurrent";

ParseResult TermOp::parse(OpAsmParser &parser, OperationState &result) {
  MLIRContext *context = parser.getContext();
  Builder builder(context);
  Properties &props = result.getOrAddProperties<Properties>();

  Score score;
  if (parseEnumKeyword(parser, "score", symbolizeScore, kScoreNames, score))
    return failure();
  props.score = ScoreAttr::get(context, score);

  if (score == Score::Kernel) {
    FeatureMap featureMap;
    if (parseEnumKeyword(parser, "feature map", symbolizeFeatureMap,
                         kFeatureMapNames, featureMap))
      return failure();
    props.feature_map = FeatureMapAttr::get(context, featureMap);
  }

  OpAsmParser::UnresolvedOperand query, key, value;
  if (parser.parseLParen() || parser.parseOperand(query) ||
      parser.parseComma() || parser.parseOperand(key) || parser.parseComma() ||
      parser.parseOperand(value) || parser.parseRParen())
    return failure();

  std::optional<OpAsmParser::UnresolvedOperand> omega, keyProj, valueProj,
      decay, keyWeight, initialState, initialNorm, alibiSlopes, sinks,
      keyLengths, queryLengths;
  Type omegaType, keyProjType, valueProjType, decayType, keyWeightType,
      initialStateType, initialNormType, alibiSlopesType, sinksType,
      keyLengthsType, queryLengthsType;
  bool finalState = false, lse = false;
  llvm::StringSet<> seen;
  while (true) {
    SMLoc loc = parser.getCurrentLocation();
    StringRef clause;
    if (parser.parseOptionalKeyword(
            &clause, {"omega", "project", "mask", "normalizer", "scale", "eps",
                      "order", "chunk", "crossover", "decay", "key_weight",
                      "state", "final_state", "softcap", "alibi", "sink",
                      "key_lengths", "query_lengths", "lse"}))
      break;
    if (!seen.insert(clause).second)
      return parser.emitError(loc) << "duplicate '" << clause << "' clause";
    if (clause == "omega") {
      omega.emplace();
      if (parser.parseLParen() || parser.parseOperand(*omega) ||
          parser.parseColonType(omegaType) || parser.parseRParen())
        return failure();
    } else if (clause == "decay") {
      if (succeeded(parser.parseOptionalLParen())) {
        decay.emplace();
        if (parser.parseOperand(*decay) || parser.parseColonType(decayType) ||
            parser.parseRParen())
          return failure();
      } else {
        double number;
        if (parser.parseFloat(number))
          return failure();
        props.decay_rate = builder.getF64FloatAttr(number);
      }
    } else if (clause == "softcap") {
      double number;
      if (parser.parseFloat(number))
        return failure();
      props.softcap = builder.getF64FloatAttr(number);
    } else if (clause == "alibi") {
      props.alibi = builder.getUnitAttr();
      if (succeeded(parser.parseOptionalLParen())) {
        alibiSlopes.emplace();
        if (parser.parseOperand(*alibiSlopes) ||
            parser.parseColonType(alibiSlopesType) || parser.parseRParen())
          return failure();
      }
    } else if (clause == "sink") {
      sinks.emplace();
      if (parser.parseLParen() || parser.parseOperand(*sinks) ||
          parser.parseColonType(sinksType) || parser.parseRParen())
        return failure();
    } else if (clause == "key_lengths" || clause == "query_lengths") {
      bool isKey = clause == "key_lengths";
      std::optional<OpAsmParser::UnresolvedOperand> &operand =
          isKey ? keyLengths : queryLengths;
      operand.emplace();
      if (parser.parseLParen() || parser.parseOperand(*operand) ||
          parser.parseColonType(isKey ? keyLengthsType : queryLengthsType) ||
          parser.parseRParen())
        return failure();
    } else if (clause == "final_state") {
      finalState = true;
    } else if (clause == "lse") {
      lse = true;
    } else if (clause == "state") {
      initialState.emplace();
      if (parser.parseLParen() || parser.parseOperand(*initialState))
        return failure();
      if (succeeded(parser.parseOptionalComma())) {
        initialNorm.emplace();
        if (parser.parseOperand(*initialNorm))
          return failure();
      }
      if (parser.parseColonType(initialStateType))
        return failure();
      if (initialNorm &&
          (parser.parseComma() || parser.parseType(initialNormType)))
        return failure();
      if (parser.parseRParen())
        return failure();
    } else if (clause == "key_weight") {
      keyWeight.emplace();
      if (parser.parseLParen() || parser.parseOperand(*keyWeight) ||
          parser.parseColonType(keyWeightType) || parser.parseRParen())
        return failure();
    } else if (clause == "project") {
      keyProj.emplace();
      valueProj.emplace();
      if (parser.parseLParen() || parser.parseOperand(*keyProj) ||
          parser.parseComma() || parser.parseOperand(*valueProj) ||
          parser.parseColon() || parser.parseType(keyProjType) ||
          parser.parseComma() || parser.parseType(valueProjType) ||
          parser.parseRParen())
        return failure();
    } else if (clause == "mask") {
      FailureOr<MaskAttr> mask = parseMaskClause(parser);
      if (failed(mask))
        return failure();
      props.mask = *mask;
    } else if (clause == "normalizer") {
      Normalizer normalizer;
      if (parseEnumKeyword(parser, "normalizer", symbolizeNormalizer,
                           kNormalizerNames, normalizer))
        return failure();
      props.normalizer = NormalizerAttr::get(context, normalizer);
    } else if (clause == "order") {
      Order order;
      if (parseEnumKeyword(parser, "order", symbolizeOrder, kOrderNames,
                           order))
        return failure();
      props.order = OrderAttr::get(context, order);
    } else if (clause == "scale" || clause == "eps") {
      double number;
      if (parser.parseFloat(number))
        return failure();
      FloatAttr attr = builder.getF64FloatAttr(number);
      (clause == "scale" ? props.scale : props.eps) = attr;
    } else if (clause == "crossover") {
      int64_t crossover;
      if (parser.parseInteger(crossover))
        return failure();
      props.crossover = builder.getI64IntegerAttr(crossover);
    } else if (clause == "chunk") {
      if (failed(parser.parseOptionalKeyword("auto"))) {
        int64_t chunk;
        if (parser.parseInteger(chunk))
          return failure();
        props.chunk = builder.getI64IntegerAttr(chunk);
      }
    }
  }

  SMLoc attrLoc = parser.getCurrentLocation();
  if (parser.parseOptionalAttrDict(result.attributes))
    return failure();
  // The clauses are the only spelling of the op's own attributes, so that a
  // stray dictionary entry cannot silently override one.
  for (StringRef name :
       {"score", "feature_map", "mask", "normalizer", "scale", "eps", "order",
        "chunk", "crossover", "decay_rate", "softcap", "alibi",
        "operandSegmentSizes", "resultSegmentSizes"})
    if (result.attributes.get(name))
      return parser.emitError(attrLoc)
             << "'" << name << "' must be written as a clause, not in the "
                "attribute dictionary";

  Type queryType, keyType, valueType;
  SmallVector<Type> resultTypes;
  SMLoc resultsLoc;
  if (parser.parseColonType(queryType) || parser.parseComma() ||
      parser.parseType(keyType) || parser.parseComma() ||
      parser.parseType(valueType) || parser.parseArrow())
    return failure();
  resultsLoc = parser.getCurrentLocation();
  if (parser.parseTypeList(resultTypes))
    return failure();
  // The output, then with `final_state` the state and (rows) its norm, then
  // with `lse` the log-sum-exp.
  size_t stateTypes = resultTypes.size() - (lse ? 1 : 0);
  if (lse && resultTypes.size() < 2)
    return parser.emitError(resultsLoc)
           << "'lse' needs the output and the log-sum-exp types, got "
           << resultTypes.size();
  if (finalState ? stateTypes < 2 || stateTypes > 3 : stateTypes != 1)
    return parser.emitError(resultsLoc)
           << (finalState ? "'final_state' needs the output and the final "
                            "state types (and the norm's for rows), got "
                          : "expected one result type (the output), got ")
           << resultTypes.size();

  if (parser.resolveOperand(query, queryType, result.operands) ||
      parser.resolveOperand(key, keyType, result.operands) ||
      parser.resolveOperand(value, valueType, result.operands))
    return failure();
  if (omega && parser.resolveOperand(*omega, omegaType, result.operands))
    return failure();
  if (keyProj &&
      (parser.resolveOperand(*keyProj, keyProjType, result.operands) ||
       parser.resolveOperand(*valueProj, valueProjType, result.operands)))
    return failure();

  if (decay && parser.resolveOperand(*decay, decayType, result.operands))
    return failure();
  if (keyWeight &&
      parser.resolveOperand(*keyWeight, keyWeightType, result.operands))
    return failure();
  if (initialState &&
      parser.resolveOperand(*initialState, initialStateType, result.operands))
    return failure();
  if (initialNorm &&
      parser.resolveOperand(*initialNorm, initialNormType, result.operands))
    return failure();
  if (alibiSlopes &&
      parser.resolveOperand(*alibiSlopes, alibiSlopesType, result.operands))
    return failure();
  if (sinks && parser.resolveOperand(*sinks, sinksType, result.operands))
    return failure();
  if (keyLengths &&
      parser.resolveOperand(*keyLengths, keyLengthsType, result.operands))
    return failure();
  if (queryLengths &&
      parser.resolveOperand(*queryLengths, queryLengthsType, result.operands))
    return failure();

  int32_t hasOmega = omega ? 1 : 0, hasProj = keyProj ? 1 : 0;
  props.operandSegmentSizes = {1,
                               1,
                               1,
                               hasOmega,
                               hasProj,
                               hasProj,
                               decay ? 1 : 0,
                               keyWeight ? 1 : 0,
                               initialState ? 1 : 0,
                               initialNorm ? 1 : 0,
                               alibiSlopes ? 1 : 0,
                               sinks ? 1 : 0,
                               keyLengths ? 1 : 0,
                               queryLengths ? 1 : 0};
  int32_t extra = static_cast<int32_t>(stateTypes) - 1;
  props.resultSegmentSizes = {1, extra > 0 ? 1 : 0, extra > 1 ? 1 : 0,
                              lse ? 1 : 0};
  result.addTypes(resultTypes);
  return success();
}

void TermOp::print(OpAsmPrinter &printer) {
  printer << " " << stringifyScore(getScore());
  if (std::optional<FeatureMap> featureMap = getFeatureMap())
    printer << " " << stringifyFeatureMap(*featureMap);
  printer << " (" << getQuery() << ", " << getKey() << ", " << getValue()
          << ")";
  if (Value omega = getOmega())
    printer << " omega(" << omega << " : " << omega.getType() << ")";
  if (isProjected())
    printer << " project(" << getKeyProjection() << ", "
            << getValueProjection() << " : " << getKeyProjection().getType()
            << ", " << getValueProjection().getType() << ")";
  if (FloatAttr rate = getDecayRateAttr()) {
    printer << " decay ";
    printer.printFloat(rate.getValue());
  }
  if (Value decay = getDecay())
    printer << " decay(" << decay << " : " << decay.getType() << ")";
  if (Value keyWeight = getKeyWeight())
    printer << " key_weight(" << keyWeight << " : " << keyWeight.getType()
            << ")";
  if (Value state = getInitialState()) {
    printer << " state(" << state;
    if (Value norm = getInitialNorm())
      printer << ", " << norm;
    printer << " : " << state.getType();
    if (Value norm = getInitialNorm())
      printer << ", " << norm.getType();
    printer << ")";
  }
  if (getFinalState())
    printer << " final_state";
  if (getLse())
    printer << " lse";
  if (FloatAttr softcap = getSoftcapAttr()) {
    printer << " softcap ";
    printer.printFloat(softcap.getValue());
  }
  if (getAlibi()) {
    printer << " alibi";
    if (Value slopes = getAlibiSlopes())
      printer << "(" << slopes << " : " << slopes.getType() << ")";
  }
  if (Value sinks = getSinks())
    printer << " sink(" << sinks << " : " << sinks.getType() << ")";
  if (Value lengths = getKeyLengths())
    printer << " key_lengths(" << lengths << " : " << lengths.getType() << ")";
  if (Value lengths = getQueryLengths())
    printer << " query_lengths(" << lengths << " : " << lengths.getType()
            << ")";
  if (std::optional<MaskAttr> mask = getMask()) {
    printer << " mask ";
    printMaskClause(printer, *mask);
  }
  if (std::optional<Normalizer> normalizer = getNormalizer())
    printer << " normalizer " << stringifyNormalizer(*normalizer);
  if (FloatAttr scale = getScaleAttr()) {
    printer << " scale ";
    printer.printFloat(scale.getValue());
  }
  if (FloatAttr eps = getEpsAttr()) {
    printer << " eps ";
    printer.printFloat(eps.getValue());
  }
  if (getOrder() != Order::Auto)
    printer << " order " << stringifyOrder(getOrder());
  if (std::optional<int64_t> chunk = getChunk())
    printer << " chunk " << *chunk;
  if (std::optional<int64_t> crossover = getCrossover())
    printer << " crossover " << *crossover;

  printer.printOptionalAttrDict(
      (*this)->getAttrs(),
      {getScoreAttrName(), getFeatureMapAttrName(), getMaskAttrName(),
       getNormalizerAttrName(), getScaleAttrName(), getEpsAttrName(),
       getOrderAttrName(), getChunkAttrName(), getCrossoverAttrName(),
       getDecayRateAttrName(), getSoftcapAttrName(), getAlibiAttrName(),
       "operandSegmentSizes", "resultSegmentSizes"});
  printer << " : " << getQuery().getType() << ", " << getKey().getType() << ", "
          << getValue().getType() << " -> " << getResult().getType();
  if (Value state = getFinalState())
    printer << ", " << state.getType();
  if (Value norm = getFinalNorm())
    printer << ", " << norm.getType();
  if (Value lse = getLse())
    printer << ", " << lse.getType();
}

//===----------------------------------------------------------------------===//
// TermOp: verifier
//===----------------------------------------------------------------------===//

namespace {
/// Compares one dimension of two tensors where both are static.
struct DimChecker {
  Operation *op;
  bool failed = false;

  void check(StringRef lhsName, RankedTensorType lhs, unsigned lhsDim,
             StringRef rhsName, RankedTensorType rhs, unsigned rhsDim,
             StringRef dimName) {
    if (failed)
      return;
    int64_t a = lhs.getDimSize(lhsDim), b = rhs.getDimSize(rhsDim);
    if (ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b)
      return;
    op->emitOpError() << lhsName << " has " << dimName << " = " << a
                      << " but " << rhsName << " has " << dimName << " = "
                      << b;
    failed = true;
  }
};

bool staticallyDifferent(int64_t a, int64_t b) {
  return !ShapedType::isDynamic(a) && !ShapedType::isDynamic(b) && a != b;
}
} // namespace

/// Fails (at \p op) if the static sizes of \p type times its element size
/// in bytes do not fit in int64: every pass that sizes buffers, tiles or
/// loops from the type computes that product.
static LogicalResult verifyByteSize(Operation *op, StringRef name,
                                    ShapedType type) {
  int64_t bytes = llvm::divideCeil(type.getElementTypeBitWidth(), 8);
  for (int64_t size : type.getShape())
    if (!ShapedType::isDynamic(size) && llvm::MulOverflow(bytes, size, bytes))
      return op->emitOpError() << name << " is too large: " << type
                               << " has more bytes than fit in a 64-bit size";
  return success();
}

LogicalResult TermOp::verify() {
  // ODS checks that each optional group has at most one value, not that q,
  // k and v are one value each: the generic form can give a group 0 or 3
  // (operandSegmentSizes), and the accessors below would read past it.
  static const char *const required[] = {"query", "key", "value"};
  for (auto [index, name] : llvm::enumerate(required))
    if (unsigned count = getODSOperandIndexAndLength(index).second;
        count != 1)
      return emitOpError() << "needs exactly one " << name
                           << " operand, got " << count;
  if (unsigned count = getODSResultIndexAndLength(0).second; count != 1)
    return emitOpError() << "needs exactly one output result, got " << count;
  RankedTensorType queryType = getQuery().getType();
  RankedTensorType keyType = getKey().getType();
  RankedTensorType valueType = getValue().getType();
  RankedTensorType resultType = getResult().getType();

  // (C19) One element type for q, k and v (ODS allows f32, f16 and bf16
  // for each of them and for the result).
  if (keyType.getElementType() != queryType.getElementType() ||
      valueType.getElementType() != queryType.getElementType())
    return emitOpError("query, key and value must have one element type, "
                       "got ")
           << queryType.getElementType() << ", " << keyType.getElementType()
           << " and " << valueType.getElementType();

  // (C1) Operand shapes: Q [B,H,N,D], K [B,H,M,D], V [B,H,M,E], with
  // positive sizes: an empty sequence or feature has no attention to compute.
  for (auto [name, type] :
       {std::pair<StringRef, RankedTensorType>{"query", queryType},
        {"key", keyType},
        {"value", valueType},
        {"result", resultType}})
    for (int64_t size : type.getShape())
      if (size == 0)
        return emitOpError() << name << " has a zero size: " << type;
  // (C1) ... whose byte sizes fit in int64 (also omega and the projections).
  for (auto [name, value] : {std::pair<StringRef, Value>{"query", getQuery()},
                             {"key", getKey()},
                             {"value", getValue()},
                             {"omega", getOmega()},
                             {"key projection E", getKeyProjection()},
                             {"value projection F", getValueProjection()},
                             {"decay", getDecay()},
                             {"key weight", getKeyWeight()},
                             {"state", getInitialState()},
                             {"normaliser state", getInitialNorm()},
                             {"ALiBi slopes", getAlibiSlopes()},
                             {"sinks", getSinks()},
                             {"key lengths", getKeyLengths()},
                             {"query lengths", getQueryLengths()},
                             {"final state", getFinalState()},
                             {"final normaliser state", getFinalNorm()},
                             {"log-sum-exp", getLse()},
                             {"result", getResult()}})
    if (value && failed(verifyByteSize(getOperation(), name,
                                       cast<ShapedType>(value.getType()))))
      return failure();
  DimChecker dims{getOperation()};
  dims.check("key", keyType, 0, "query", queryType, 0, "batch size B");
  dims.check("value", valueType, 0, "query", queryType, 0, "batch size B");
  dims.check("value", valueType, 1, "key", keyType, 1,
             "key/value head count H_kv");
  dims.check("key", keyType, 3, "query", queryType, 3, "feature size D");
  dims.check("value", valueType, 2, "key", keyType, 2, "key length M");
  // (C2) Result shape [B,H,N,E].
  dims.check("result", resultType, 0, "query", queryType, 0, "batch size B");
  dims.check("result", resultType, 1, "query", queryType, 1, "head count H");
  dims.check("result", resultType, 2, "query", queryType, 2,
             "query length N");
  dims.check("result", resultType, 3, "value", valueType, 3,
             "value size E");
  if (dims.failed)
    return failure();
  // (C1) Grouped heads: H_kv = H, or both static and H_kv divides H (the
  // lowering and the entry point's checks need the group size r = H / H_kv
  // when they are built).
  {
    int64_t heads = queryType.getDimSize(1), keyHeads = keyType.getDimSize(1);
    bool staticHeads =
        !ShapedType::isDynamic(heads) && !ShapedType::isDynamic(keyHeads);
    if (staticHeads && heads % keyHeads != 0)
      return emitOpError("key/value head count H_kv = ")
             << keyHeads << " must divide the query head count H = " << heads;
    if (!staticHeads && heads != keyHeads)
      return emitOpError("grouped heads need static head counts, but the "
                         "query has H = ")
             << (ShapedType::isDynamic(heads) ? std::string("?")
                                              : std::to_string(heads))
             << " and the key H_kv = "
             << (ShapedType::isDynamic(keyHeads) ? std::string("?")
                                                 : std::to_string(keyHeads));
  }

  int64_t queryLen = queryType.getDimSize(2), keyLen = keyType.getDimSize(2);
  int64_t featureDim = queryType.getDimSize(3);
  Score score = getScore();
  std::optional<FeatureMap> featureMap = getFeatureMap();

  // (C3) Feature maps belong to kernel terms.
  if (score == Score::Kernel && !featureMap)
    return emitOpError("score 'kernel' needs a feature map (")
           << kFeatureMapNames << ")";
  if (score != Score::Kernel && featureMap)
    return emitOpError("score '")
           << stringifyScore(score) << "' takes no feature map, got '"
           << stringifyFeatureMap(*featureMap) << "'";

  // (C4) FAVOR+ and RFA take ω [m, D].
  bool takesOmega =
      featureMap == std::optional<FeatureMap>(FeatureMap::FavorPlus) ||
      featureMap == std::optional<FeatureMap>(FeatureMap::Rfa);
  if (takesOmega && !getOmega())
    return emitOpError("feature map '")
           << stringifyFeatureMap(*featureMap)
           << "' needs the random features omega [m, D]";
  if (!takesOmega && getOmega())
    return emitOpError(
        "omega is only used by feature maps 'favor_plus' and 'rfa'");
  if (Value omega = getOmega()) {
    auto omegaType = cast<RankedTensorType>(omega.getType());
    if (omegaType.getDimSize(0) == 0)
      return emitOpError("omega needs at least one feature row (m > 0)");
    if (staticallyDifferent(omegaType.getDimSize(1), featureDim))
      return emitOpError("omega has ")
             << omegaType.getDimSize(1)
             << " columns but the feature size D = " << featureDim;
  }

  // (C5) Only the product form can be associated kv-first or run as a
  // recurrence, and the recurrence is the causal one.
  if ((getOrder() == Order::KvFirst || getOrder() == Order::Recurrent) &&
      score != Score::Kernel)
    return emitOpError("order '")
           << stringifyOrder(getOrder())
           << "' needs the product form of a 'kernel' term, but the score is '"
           << stringifyScore(score) << "'";
  if (getOrder() == Order::Recurrent && getMaskKind() != MaskKind::Causal)
    return emitOpError("order 'recurrent' needs mask 'causal', but the mask "
                       "is '")
           << stringifyMaskKind(getMaskKind()) << "'";
  if (getOrder() == Order::Recurrent && isProjected())
    return emitOpError("order 'recurrent' is not allowed with 'project'");

  // (C6) block_causal compares blocks of one sequence, and the kernel
  // lowerings of causal terms walk one sequence; softmax and relu2 align a
  // shorter query block bottom-right (p_i = M - N + i).
  std::optional<MaskAttr> mask = getMask();
  bool needsSameLength =
      mask && (mask->getKind() == MaskKind::BlockCausal ||
               (mask->getKind() == MaskKind::Causal && score == Score::Kernel));
  if (needsSameLength && staticallyDifferent(queryLen, keyLen))
    return emitOpError("mask '")
           << stringifyMaskKind(mask->getKind())
           << "' needs as many queries as keys, but N = " << queryLen
           << " and M = " << keyLen;

  // (C7) Linformer projection: E, F [k, M], no mask.
  if (!getKeyProjection() != !getValueProjection())
    return emitOpError(
        "projection needs both E (for the keys) and F (for the values)");
  if (isProjected()) {
    auto keyProjType = cast<RankedTensorType>(getKeyProjection().getType());
    auto valueProjType =
        cast<RankedTensorType>(getValueProjection().getType());
    if (keyProjType.getDimSize(0) == 0 || valueProjType.getDimSize(0) == 0)
      return emitOpError("projection needs at least one row (k > 0)");
    if (staticallyDifferent(keyProjType.getDimSize(0),
                            valueProjType.getDimSize(0)))
      return emitOpError("key projection E has ")
             << keyProjType.getDimSize(0)
             << " rows but value projection F has "
             << valueProjType.getDimSize(0);
    if (staticallyDifferent(keyProjType.getDimSize(1), keyLen))
      return emitOpError("key projection E has ")
             << keyProjType.getDimSize(1)
             << " columns but the key length M = " << keyLen;
    if (staticallyDifferent(valueProjType.getDimSize(1), keyLen))
      return emitOpError("value projection F has ")
             << valueProjType.getDimSize(1)
             << " columns but the key length M = " << keyLen;
    if (getMaskKind() != MaskKind::None)
      return emitOpError("projection is not allowed with mask '")
             << stringifyMaskKind(getMaskKind()) << "'";
  }

  // (C8) Scale.
  if (std::optional<APFloat> scale = getScale()) {
    double s = scale->convertToDouble();
    if (!std::isfinite(s) || s <= 0.0)
      return emitOpError("scale must be finite and positive, got ") << s;
    if (!usesScale())
      return emitOpError("scale is not used by a 'kernel' term with feature "
                         "map '")
             << stringifyFeatureMap(*featureMap) << "'";
  }

  // (C9) eps.
  if (std::optional<APFloat> eps = getEps()) {
    double e = eps->convertToDouble();
    if (!std::isfinite(e) || e < 0.0)
      return emitOpError("eps must be finite and non-negative, got ") << e;
    if (getEffectiveNormalizer() != Normalizer::Rows)
      return emitOpError("eps is only used by the 'rows' normalizer, but "
                         "the normalizer is '")
             << stringifyNormalizer(getEffectiveNormalizer()) << "'";
  }

  // (C10) Chunk.
  if (std::optional<int64_t> chunk = getChunk(); chunk && *chunk <= 0)
    return emitOpError("chunk must be positive, got ") << *chunk;

  // (C11) Crossover.
  if (std::optional<int64_t> crossover = getCrossover()) {
    if (*crossover <= 0)
      return emitOpError("crossover must be positive, got ") << *crossover;
    if (score != Score::Kernel)
      return emitOpError("crossover needs the product form of a 'kernel' "
                         "term, but the score is '")
             << stringifyScore(score) << "'";
    if (getOrder() != Order::Auto)
      return emitOpError("crossover is only meaningful with order 'auto', "
                         "but the order is '")
             << stringifyOrder(getOrder()) << "'";
  }

  // (C12) Decay: a number in (0, 1] or g [H] / [B, H, N], on a kernel term
  // under a causal mask with the rows or none normaliser.
  if (getDecayRate() && getDecay())
    return emitOpError("decay is either a number or an operand, not both");
  if (std::optional<APFloat> rate = getDecayRate()) {
    double g = rate->convertToDouble();
    if (!std::isfinite(g) || g <= 0.0 || g > 1.0)
      return emitOpError("decay must be in (0, 1], got ") << g;
  }
  if (Value decay = getDecay()) {
    auto decayType = cast<RankedTensorType>(decay.getType());
    if (decayType.getRank() == 1) {
      if (staticallyDifferent(decayType.getDimSize(0), queryType.getDimSize(1)))
        return emitOpError("decay [H] has ")
               << decayType.getDimSize(0)
               << " entries but the head count H = " << queryType.getDimSize(1);
    } else {
      DimChecker decayDims{getOperation()};
      decayDims.check("decay [B, H, N]", decayType, 0, "query", queryType, 0,
                      "batch size B");
      decayDims.check("decay [B, H, N]", decayType, 1, "query", queryType, 1,
                      "head count H");
      decayDims.check("decay [B, H, N]", decayType, 2, "query", queryType, 2,
                      "query length N");
      if (decayDims.failed)
        return failure();
    }
  }
  if (hasDecay()) {
    if (score != Score::Kernel)
      return emitOpError("decay needs a 'kernel' term, but the score is '")
             << stringifyScore(score) << "'";
    MaskKind kind = getMaskKind();
    if (kind != MaskKind::Causal && kind != MaskKind::BlockCausal)
      return emitOpError("decay needs mask 'causal' or 'block_causal', but "
                         "the mask is '")
             << stringifyMaskKind(kind) << "'";
    if (getEffectiveNormalizer() == Normalizer::Length)
      return emitOpError("decay needs the 'rows' or 'none' normalizer, but "
                         "the normalizer is 'length'");
  }

  // (C13) Key weight κ [B, H, M] on a kernel term without projection.
  if (Value keyWeight = getKeyWeight()) {
    auto weightType = cast<RankedTensorType>(keyWeight.getType());
    DimChecker weightDims{getOperation()};
    weightDims.check("key_weight [B, H, M]", weightType, 0, "key", keyType, 0,
                     "batch size B");
    weightDims.check("key_weight [B, H, M]", weightType, 1, "key", keyType, 1,
                     "head count H");
    weightDims.check("key_weight [B, H, M]", weightType, 2, "key", keyType, 2,
                     "key length M");
    if (weightDims.failed)
      return failure();
    if (score != Score::Kernel)
      return emitOpError("key_weight needs a 'kernel' term, but the score is '")
             << stringifyScore(score) << "'";
    if (isProjected())
      return emitOpError("key_weight is not allowed with 'project'");
  }

  // (C14) State in and out: a causal kernel term, not qk-first; S is
  // [B, H, F, E], z [B, H, F] exactly for rows.
  if (hasState()) {
    if (score != Score::Kernel || getMaskKind() != MaskKind::Causal ||
        isProjected())
      return emitOpError("a state needs a 'kernel' term with mask 'causal' "
                         "and no projection");
    if (getOrder() == Order::QkFirst)
      return emitOpError("a state needs order 'kv_first' or 'recurrent' "
                         "(or 'auto'), not 'qk_first'");
    bool rows = getEffectiveNormalizer() == Normalizer::Rows;
    std::optional<int64_t> width = getStaticFeatureWidth();
    auto checkState = [&](StringRef what, Value state, Value norm,
                          bool isInput) -> LogicalResult {
      if (!state)
        return success();
      if (rows != (norm != nullptr))
        return emitOpError() << what << (rows ? " needs" : " takes no")
                             << " the normaliser state z [B, H, F] with the '"
                             << stringifyNormalizer(getEffectiveNormalizer())
                             << "' normalizer";
      DimChecker checks{getOperation()};
      auto stateType = cast<RankedTensorType>(state.getType());
      std::string name = (what + " S").str();
      checks.check(name, stateType, 0, "query", queryType, 0, "batch size B");
      checks.check(name, stateType, 1, "query", queryType, 1, "head count H");
      checks.check(name, stateType, 3, "value", valueType, 3, "value size E");
      if (norm) {
        auto normType = cast<RankedTensorType>(norm.getType());
        std::string normName = (what + " z").str();
        checks.check(normName, normType, 0, "query", queryType, 0,
                     "batch size B");
        checks.check(normName, normType, 1, "query", queryType, 1,
                     "head count H");
        checks.check(normName, normType, 2, name, stateType, 2,
                     "feature width F");
      }
      if (checks.failed)
        return failure();
      if (width && staticallyDifferent(stateType.getDimSize(2), *width))
        return emitOpError()
               << what << " S has feature width F = " << stateType.getDimSize(2)
               << " but the feature map gives " << *width;
      (void)isInput;
      return success();
    };
    if (failed(
            checkState("state", getInitialState(), getInitialNorm(), true)) ||
        failed(
            checkState("final_state", getFinalState(), getFinalNorm(), false)))
      return failure();
  }
  if (getInitialNorm() && !getInitialState())
    return emitOpError("a normaliser state needs the state S");

  // (C15, C17) Only qk-first evaluates windows, grouped heads and lengths
  // of kernel terms.
  StringRef qkFirstReason = getMaskKind() == MaskKind::Window
                                ? "a 'window' mask"
                            : hasGroupedHeads() ? "grouped heads"
                                                : "lengths";
  if (needsQkFirst() && getOrder() != Order::Auto &&
      getOrder() != Order::QkFirst)
    return emitOpError("order '")
           << stringifyOrder(getOrder()) << "' is not legal with "
           << qkFirstReason << " (only 'qk_first')";
  if (hasGroupedHeads() && (hasDecay() || getKeyWeight()))
    return emitOpError("decay and key_weight are not allowed with grouped "
                       "heads");
  if (needsQkFirst() && hasState())
    return emitOpError("a state is not allowed with ") << qkFirstReason;

  // (C16) Score modifications and sinks.
  if (std::optional<APFloat> softcap = getSoftcap()) {
    double c = softcap->convertToDouble();
    if (!std::isfinite(c) || c <= 0.0)
      return emitOpError("softcap must be finite and positive, got ") << c;
  }
  if (modifiesScores() && score == Score::Kernel)
    return emitOpError(getSoftcap() ? "softcap" : "alibi")
           << " needs a 'softmax' or 'relu2' term, but the score is 'kernel'";
  if (getAlibiSlopes() && !getAlibi())
    return emitOpError("ALiBi slopes need the 'alibi' clause");
  if (getAlibi() && isProjected())
    return emitOpError("alibi is not allowed with 'project'");
  if (getSinks() && score != Score::Softmax)
    return emitOpError("sink needs a 'softmax' term, but the score is '")
           << stringifyScore(score) << "'";
  // A vector operand of one entry per batch element or head.
  auto checkEntries = [&](StringRef name, Value operand, unsigned dim,
                          StringRef letter, StringRef size) -> LogicalResult {
    if (!operand)
      return success();
    int64_t entries = cast<RankedTensorType>(operand.getType()).getDimSize(0);
    if (!staticallyDifferent(entries, queryType.getDimSize(dim)))
      return success();
    return emitOpError() << name << " [" << letter << "] has " << entries
                         << " entries but the " << size << " " << letter
                         << " = " << queryType.getDimSize(dim);
  };
  if (failed(checkEntries("alibi slopes", getAlibiSlopes(), 1, "H",
                          "head count")) ||
      failed(checkEntries("sink", getSinks(), 1, "H", "head count")))
    return failure();
  if (getFinalNorm() && !getFinalState())
    return emitOpError("a final normaliser state needs the final state S");

  // (C18) The log-sum-exp.
  if (Value lse = getLse()) {
    if (score != Score::Softmax ||
        getEffectiveNormalizer() != Normalizer::Rows ||
        getEffectiveEps() != 0.0)
      return emitOpError("lse needs a 'softmax' term with the 'rows' "
                         "normalizer and eps 0");
    auto lseType = cast<RankedTensorType>(lse.getType());
    for (int d = 0; d < 3; ++d)
      if (staticallyDifferent(lseType.getDimSize(d), queryType.getDimSize(d)))
        return emitOpError("lse must be [B, H, N] = ")
               << "[" << queryType.getDimSize(0) << ", "
               << queryType.getDimSize(1) << ", " << queryType.getDimSize(2)
               << "], got " << lseType;
  }

  // (C17) Lengths.
  for (auto [name, operand] :
       {std::pair<StringRef, Value>{"key_lengths", getKeyLengths()},
        {"query_lengths", getQueryLengths()}}) {
    if (!operand)
      continue;
    if (failed(checkEntries(name, operand, 0, "B", "batch size")))
      return failure();
    if (isProjected())
      return emitOpError() << name << " is not allowed with 'project'";
    if (hasState())
      return emitOpError() << name
                           << " is not allowed with a state or final_state";
  }

  return success();
}

std::optional<int64_t> TermOp::getStaticFeatureWidth() {
  int64_t d = getQuery().getType().getDimSize(3);
  std::optional<FeatureMap> map = getFeatureMap();
  auto known = [](int64_t size, int64_t factor) -> std::optional<int64_t> {
    if (ShapedType::isDynamic(size))
      return std::nullopt;
    return size * factor;
  };
  if (!map)
    return known(d, 1);
  switch (*map) {
  case FeatureMap::FavorPlus:
  case FeatureMap::Rfa:
    if (!getOmega())
      return std::nullopt;
    return known(cast<RankedTensorType>(getOmega().getType()).getDimSize(0),
                 *map == FeatureMap::Rfa ? 2 : 1);
  case FeatureMap::CosFormer:
    return known(d, 2);
  default:
    return known(d, 1);
  }
}

//===----------------------------------------------------------------------===//
// CombineOp
//===----------------------------------------------------------------------===//

LogicalResult CombineOp::verify() {
  // (C1) At least one term; (C2) one shape for all, f32 operands; (C3) a
  // byte size that fits in int64; (C4) is the result's type constraint.
  if (getTerms().empty())
    return emitOpError("needs at least one term");
  auto resultType = cast<RankedTensorType>(getType());
  Type operandType = resultType.clone(Float32Type::get(getContext()));
  // Static and dynamic sizes would be compatible, but the custom form prints
  // a single operand type: require equality.
  for (Value operand : getOperation()->getOperands())
    if (operand.getType() != operandType)
      return emitOpError("every term and the gate must have the type ")
             << operandType << " (the result's shape, f32), got "
             << operand.getType();
  return verifyByteSize(getOperation(), "result", getType());
}

ParseResult CombineOp::parse(OpAsmParser &parser, OperationState &result) {
  SmallVector<OpAsmParser::UnresolvedOperand> terms;
  OpAsmParser::UnresolvedOperand gate;
  bool hasGate = false;
  if (parser.parseOperandList(terms))
    return failure();
  if (succeeded(parser.parseOptionalKeyword("gate"))) {
    hasGate = true;
    if (parser.parseLParen() || parser.parseOperand(gate) ||
        parser.parseRParen())
      return failure();
  }
  Type operandType, resultType;
  if (parser.parseOptionalAttrDict(result.attributes) ||
      parser.parseColonType(operandType))
    return failure();
  resultType = operandType;
  if (succeeded(parser.parseOptionalArrow()) && parser.parseType(resultType))
    return failure();
  if (parser.resolveOperands(terms, operandType, result.operands) ||
      (hasGate && parser.resolveOperand(gate, operandType, result.operands)))
    return failure();
  result.getOrAddProperties<Properties>().operandSegmentSizes = {
      static_cast<int32_t>(terms.size()), hasGate ? 1 : 0};
  result.addTypes(resultType);
  return success();
}

void CombineOp::print(OpAsmPrinter &printer) {
  printer << ' ' << getTerms();
  if (Value gate = getGate())
    printer << " gate(" << gate << ')';
  printer.printOptionalAttrDict((*this)->getAttrs(),
                                /*elidedAttrs=*/{"operandSegmentSizes"});
  Type operandType = getTerms().front().getType();
  printer << " : " << operandType;
  if (getType() != operandType)
    printer << " -> " << getType();
}
