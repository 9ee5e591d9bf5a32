//===- Report.cpp - The cost model's reasoning per term (attnc report) ----===//

#include "attn/Compiler/Compiler.h"

#include "attn/Analysis/CostModel.h"
#include "attn/Analysis/CostPlot.h"
#include "attn/Dialect/Attn/Transforms/TermCost.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <cmath>
#include <cstdio>

using namespace attn;
using namespace attn::compiler;
using namespace attn::frontend;

/// Sizes a report assumes for dynamic dims the user did not bind: a common
/// long-context length, so that the strategies have concrete numbers.
static constexpr int64_t kReportAssumedSize = 4096;

using attn::cost::formatNumber;

static std::string formatTime(double seconds) {
  return attn::cost::formatSeconds(seconds, 3);
}


/// The points of a --measured file; false with \p why set.
static bool parseMeasured(const std::string &text,
                          std::vector<attn::cost::MeasuredPoint> &points,
                          std::string &why) {
  llvm::Expected<llvm::json::Value> value = llvm::json::parse(text);
  if (!value) {
    why = llvm::toString(value.takeError());
    return false;
  }
  const llvm::json::Object *object = value->getAsObject();
  const llvm::json::Array *list = object ? object->getArray("points") : nullptr;
  if (!list) {
    why = "expected an object with a \"points\" array";
    return false;
  }
  for (auto [index, entry] : llvm::enumerate(*list)) {
    const llvm::json::Object *point = entry.getAsObject();
    std::optional<llvm::StringRef> term =
        point ? point->getString("term") : std::nullopt;
    std::optional<llvm::StringRef> strategy =
        point ? point->getString("strategy") : std::nullopt;
    std::optional<int64_t> length =
        point ? point->getInteger("n") : std::nullopt;
    std::optional<double> seconds =
        point ? point->getNumber("seconds") : std::nullopt;
    if (!term || !strategy || !length || !seconds || *length <= 0 ||
        !(*seconds > 0) || !std::isfinite(*seconds)) {
      why = "point " + std::to_string(index) +
            " needs \"term\" and \"strategy\" strings, a positive integer "
            "\"n\" and positive \"seconds\"";
      return false;
    }
    points.push_back({term->str(), strategy->str(), *length, *seconds});
  }
  return true;
}

bool Compiler::report(const SizeBindings &overrides,
                      const ReportOptions &reportOptions, std::string &text,
                      std::string &jsonText, std::string *svg) {
  namespace cost = attn::cost;
  const Spec &spec = *this->spec;
  std::optional<SizeBindings> bound = bindSizes(overrides, true);
  if (!bound)
    return false;
  SizeBindings sizes = *bound;
  int64_t layerHeads = reportOptions.heads;
  int64_t layerHeadDim = reportOptions.headDim;
  std::vector<std::string> assumed;
  for (const DimDecl &dim : spec.dims) {
    if (sizes.count(dim.name))
      continue;
    sizes[dim.name] = kReportAssumedSize;
    assumed.push_back(dim.name);
  }
  if ((layerHeads > 0) != (layerHeadDim > 0) || layerHeads < 0 ||
      layerHeadDim < 0)
    return error("--heads and --head-dim go together and must be positive"),
           false;

  cost::Target target;
  std::string targetName = reportOptions.costTarget.empty()
                               ? resolveCostTarget()
                               : reportOptions.costTarget;
  if (std::string why = mlir::attn::resolveTarget(targetName, target);
      !why.empty())
    return error(why), false;

  std::vector<cost::MeasuredPoint> measured;
  if (!reportOptions.measuredJson.empty()) {
    std::string why;
    if (!parseMeasured(reportOptions.measuredJson, measured, why))
      return error("measured times '" + reportOptions.measuredName +
                   "': " + why),
             false;
  }

  mlir::OwningOpRef<mlir::ModuleOp> module = generateModule(sizes);
  if (!module)
    return false;

  std::vector<cost::PlotTerm> plotTerms;
  llvm::json::Array jsonTerms;
  text.clear();
  llvm::raw_string_ostream os(text);
  os << "attnc report: " << spec.name << " on target " << target.name << " ("
     << formatNumber(target.peakFlops / 1e9) << " GFLOP/s, "
     << formatNumber(target.memoryBandwidth / 1e9) << " GB/s)\n";
  if (target.source.empty())
    os << "numbers: the built-in " << target.name
       << " defaults (no calibration; `attnc calibrate` measures this "
          "machine)\n";
  else if (!target.machine.empty())
    os << "numbers: calibration " << target.source << " (" << target.machine
       << (target.calibrated.empty() ? "" : ", " + target.calibrated)
       << ")\n";
  else
    os << "numbers: target file " << target.source << "\n";
  for (const std::string &name : assumed)
    os << "note: size " << name << " is dynamic; assuming " << name << " = "
       << kReportAssumedSize << " (bind it with --set " << name << "=...)\n";

  size_t index = 0;
  module->walk([&](mlir::attn::TermOp op) {
    const TermDecl &decl = spec.terms[index++];
    llvm::SmallVector<std::string> unused;
    cost::TermShape shape = mlir::attn::getTermShape(op, 0, unused);
    cost::TermCost decision = cost::analyzeTerm(shape, target);
    plotTerms.push_back({decl.name, shape, decision.crossoverN});

    os << "\nterm " << decl.name << ": " << toString(*decl.score);
    if (decl.featureMap != FeatureMap::None)
      os << " " << toString(decl.featureMap);
    os << ", mask " << toString(decl.mask.kind);
    if (shape.maskBlock > 0)
      os << "(" << shape.maskBlock << ")";
    if (decl.mask.kind == MaskKind::Window)
      os << "(" << shape.windowLeft << ", " << shape.windowRight << ")";
    os << "; B=" << shape.batch << " H=" << shape.heads;
    if (shape.keyHeads > 0 && shape.keyHeads != shape.heads)
      os << " H_kv=" << shape.keyHeads;
    os << " N=" << shape.queries << " M=" << shape.keys
       << " D=" << shape.featureDim << " E=" << shape.valueDim
       << ", score width " << shape.scoreWidth();
    if (shape.projectedLength)
      os << ", projected to k=" << shape.projectedLength;
    os << "\n";
    os << llvm::formatv("  {0,-9} {1,+6} {2,+10} {3,+10} {4,+10} {5,+12}  {6}\n",
                        "order", "chunk", "FLOPs", "bytes", "extra mem",
                        "predicted", "how");
    llvm::json::Array jsonStrategies;
    for (const cost::Strategy &strategy : decision.strategies) {
      os << llvm::formatv(
          "  {0,-9} {1,+6} {2,+10} {3,+10} {4,+10} {5,+12}  {6}\n",
          cost::toString(strategy.order),
          strategy.chunk ? std::to_string(*strategy.chunk) : "-",
          formatNumber(strategy.flops), formatNumber(strategy.bytes),
          formatNumber(strategy.peakBytes), formatTime(strategy.seconds),
          strategy.description);
      jsonStrategies.push_back(llvm::json::Object{
          {"order", cost::toString(strategy.order)},
          {"chunk", strategy.chunk ? llvm::json::Value(*strategy.chunk)
                                   : llvm::json::Value(nullptr)},
          {"flops", strategy.flops},
          {"bytes", strategy.bytes},
          {"peak_bytes", strategy.peakBytes},
          {"time_s", strategy.seconds},
          {"description", strategy.description}});
    }
    const cost::Strategy &chosen = decision.chosen;
    os << "  chosen: " << cost::toString(chosen.order);
    if (chosen.chunk)
      os << ", chunk " << *chosen.chunk;
    os << ". " << decision.reason << "\n";
    jsonTerms.push_back(llvm::json::Object{
        {"name", decl.name},
        {"strategies", std::move(jsonStrategies)},
        {"chosen",
         llvm::json::Object{{"order", cost::toString(chosen.order)},
                            {"chunk", chosen.chunk
                                          ? llvm::json::Value(*chosen.chunk)
                                          : llvm::json::Value(nullptr)}}},
        {"reason", decision.reason},
        {"crossover_n", decision.crossoverN
                            ? llvm::json::Value(*decision.crossoverN)
                            : llvm::json::Value(nullptr)},
        {"recurrent_crossover_n",
         decision.recurrentCrossoverN
             ? llvm::json::Value(*decision.recurrentCrossoverN)
             : llvm::json::Value(nullptr)}});
  });

  llvm::json::Object result{{"spec", spec.name},
                            {"target", target.name},
                            {"numbers",
                             llvm::json::Object{
                                 {"source", target.source.empty()
                                                ? llvm::json::Value("built-in")
                                                : llvm::json::Value(
                                                      target.source)},
                                 {"calibrated", !target.machine.empty()},
                                 {"machine", target.machine}}},
                            {"terms", std::move(jsonTerms)}};
  if (!assumed.empty()) {
    llvm::json::Object assumedSizes;
    for (const std::string &name : assumed)
      assumedSizes[name] = kReportAssumedSize;
    result["assumed_sizes"] = std::move(assumedSizes);
  }
  if (layerHeads > 0) {
    cost::LayerView view = cost::layerView(layerHeads, layerHeadDim);
    os << "\nlayer view (h = " << layerHeads << ", d = " << layerHeadDim
       << ", hidden " << cost::saturatingMul(layerHeads, layerHeadDim)
       << ", FFN 4x hidden; seed analysis '000'):\n"
       << "  attention FLOPs pass the FFN's at n > "
       << view.attentionExceedsFfnN << " (2hd)\n"
       << "  the quadratic term dominates the layer at n > "
       << view.quadraticDominatesN << " (6hd)\n"
       << "  a linear variant with 4d features beats softmax at n > "
       << view.linearBeatsSoftmaxN << " (16d)\n";
    result["layer"] = llvm::json::Object{
        {"attention_exceeds_ffn_n", view.attentionExceedsFfnN},
        {"quadratic_dominates_n", view.quadraticDominatesN},
        {"linear_beats_softmax_n", view.linearBeatsSoftmaxN}};
  }
  jsonText = llvm::formatv("{0:2}", llvm::json::Value(std::move(result)));
  if (svg) {
    for (const cost::MeasuredPoint &point : measured) {
      bool known = false;
      for (const cost::PlotTerm &term : plotTerms)
        if (term.name == point.term)
          for (const std::string &name : cost::plotStrategyNames(term.shape))
            known |= name == point.strategy;
      if (!known)
        return error("measured times '" + reportOptions.measuredName +
                     "': no term '" + point.term + "' with a strategy '" +
                     point.strategy + "' in '" + spec.name + "'"),
               false;
    }
    *svg = cost::plotStrategies(plotTerms, target, measured,
                                spec.name + ": predicted time per strategy (" +
                                    (target.source.empty()
                                         ? "built-in " + target.name +
                                               " numbers"
                                         : target.source) +
                                    ")");
  }
  return true;
}

double Compiler::countFlops(mlir::ModuleOp module) {
  namespace cost = attn::cost;
  cost::Target target;
  if (!mlir::attn::resolveTarget(resolveCostTarget(), target).empty())
    target = options.target == Target::NVPTX ? cost::nvptxTarget()
                                             : cost::cpuTarget();
  double total = 0;
  module.walk([&](mlir::attn::TermOp op) {
    llvm::SmallVector<std::string> unused;
    cost::TermShape shape = mlir::attn::getTermShape(op, 0, unused);
    cost::TermCost decision = cost::analyzeTerm(shape, target);
    cost::Order order = decision.chosen.order;
    mlir::attn::Order fixed = op.getOrder();
    if (fixed == mlir::attn::Order::QkFirst ||
        options.force == ForceOrder::QkFirst || !shape.hasProductForm())
      order = cost::Order::QkFirst;
    else if (fixed == mlir::attn::Order::KvFirst ||
             options.force == ForceOrder::KvFirst)
      order = cost::Order::KvFirst;
    else if ((fixed == mlir::attn::Order::Recurrent ||
              options.force == ForceOrder::Recurrent) &&
             shape.hasRecurrentForm())
      order = cost::Order::Recurrent;
    for (const cost::Strategy &strategy : decision.strategies)
      if (strategy.order == order)
        total += strategy.flops;
  });
  return total;
}
