//===- CostPlot.h - Predicted time against N, as SVG ------------*- C++ -*-===//
//
// `attnc report --plot FILE.svg`: one curve per strategy of every term
// (log-log axes), the crossovers marked, and measured points on top when
// given. Plain C++ writing plain SVG, so that no plotting library is needed
// at run time.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_ANALYSIS_COSTPLOT_H
#define ATTN_ANALYSIS_COSTPLOT_H

#include "attn/Analysis/CostModel.h"

#include <optional>
#include <string>
#include <vector>

namespace attn {
namespace cost {

/// One term to plot: its name in the spec, its shape at the spec's sizes
/// (N and, for self-attention, M vary along the x axis) and its crossover
/// (TermCost::crossoverN of analyzeTerm on the same target).
struct PlotTerm {
  std::string name;
  TermShape shape;
  std::optional<int64_t> crossover;
};

/// A measured time, drawn on the curve of the same term and strategy.
struct MeasuredPoint {
  std::string term;     ///< PlotTerm::name
  std::string strategy; ///< as plotStrategyNames spells it
  int64_t length = 0;   ///< N
  double seconds = 0;
};

/// The strategies a plot draws for \p shape, one curve each: "qk_first";
/// with a product form "kv_first", or for causal masks "kv_first c=C" for
/// every chunk C in {16, ..., 256} and "kv_first best chunk".
std::vector<std::string> plotStrategyNames(const TermShape &shape);

/// The predicted seconds of \p strategy (a plotStrategyNames name) for
/// \p shape on \p target.
double plotPredictedSeconds(const TermShape &shape, const std::string &strategy,
                            const Target &target);

/// The SVG document: predicted time against N from \p minLength to
/// \p maxLength (powers of two in between), one polyline of class "curve"
/// per strategy of every term, a dashed line at every crossover, the
/// measured points as circles of class "measured".
std::string plotStrategies(const std::vector<PlotTerm> &terms,
                           const Target &target,
                           const std::vector<MeasuredPoint> &measured,
                           const std::string &title, int64_t minLength = 16,
                           int64_t maxLength = 65536);

} // namespace cost
} // namespace attn

#endif // ATTN_ANALYSIS_COSTPLOT_H
