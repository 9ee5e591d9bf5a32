//===- CostPlot.cpp - Predicted time against N, as SVG --------------------===//

#include "attn/Analysis/CostPlot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <sstream>

using namespace attn;
using namespace attn::cost;

static const int64_t kPlotChunks[] = {16, 32, 64, 128, 256};

std::vector<std::string> cost::plotStrategyNames(const TermShape &shape) {
  std::vector<std::string> names = {"qk_first"};
  if (!shape.hasProductForm())
    return names;
  if (shape.isCausal() && shape.projectedLength <= 0) {
    for (int64_t chunk : kPlotChunks)
      names.push_back("kv_first c=" + std::to_string(chunk));
    names.push_back("kv_first best chunk");
  } else {
    names.push_back("kv_first");
  }
  if (shape.hasRecurrentForm())
    names.push_back("recurrent");
  return names;
}

double cost::plotPredictedSeconds(const TermShape &shape,
                                  const std::string &strategy,
                                  const Target &target) {
  if (strategy == "qk_first")
    return estimateQkFirst(shape, target).seconds;
  if (strategy == "recurrent")
    return estimateRecurrent(shape, target).seconds;
  if (strategy == "kv_first best chunk")
    return estimateKvFirst(shape, target, bestChunk(shape, target)).seconds;
  if (strategy.rfind("kv_first c=", 0) == 0)
    return estimateKvFirst(shape, target, std::stoll(strategy.substr(11)))
        .seconds;
  return estimateKvFirst(shape, target, std::nullopt).seconds;
}

static TermShape atLength(TermShape shape, int64_t length) {
  bool selfAttention = shape.queries == shape.keys;
  shape.queries = length;
  if (selfAttention)
    shape.keys = length;
  return shape;
}

static std::string escape(const std::string &text) {
  std::string out;
  for (char c : text) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else if (c == '"')
      out += "&quot;";
    else
      out += c;
  }
  return out;
}

static std::string number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.1f", value);
  return buffer;
}

std::string cost::plotStrategies(const std::vector<PlotTerm> &terms,
                                 const Target &target,
                                 const std::vector<MeasuredPoint> &measured,
                                 const std::string &title, int64_t minLength,
                                 int64_t maxLength) {
  static const char *const colors[] = {"#1f77b4", "#d62728", "#2ca02c",
                                       "#ff7f0e", "#9467bd", "#8c564b",
                                       "#e377c2", "#17becf", "#7f7f7f"};
  std::vector<int64_t> lengths;
  for (int64_t n = std::max<int64_t>(1, minLength); n <= maxLength; n *= 2)
    lengths.push_back(n);
  if (lengths.empty())
    lengths.push_back(std::max<int64_t>(1, minLength));

  struct Curve {
    std::string term, strategy;
    std::vector<double> seconds;
  };
  std::vector<Curve> curves;
  double low = INFINITY, high = 0;
  for (const PlotTerm &term : terms) {
    for (const std::string &strategy : plotStrategyNames(term.shape)) {
      Curve curve{term.name, strategy, {}};
      for (int64_t n : lengths) {
        double seconds =
            plotPredictedSeconds(atLength(term.shape, n), strategy, target);
        curve.seconds.push_back(seconds);
        low = std::min(low, seconds);
        high = std::max(high, seconds);
      }
      curves.push_back(std::move(curve));
    }
  }
  for (const MeasuredPoint &point : measured) {
    if (point.seconds <= 0 || point.length < lengths.front() ||
        point.length > lengths.back())
      continue;
    low = std::min(low, point.seconds);
    high = std::max(high, point.seconds);
  }
  if (!(low > 0) || !(high > low)) {
    low = 1e-6;
    high = 1;
  }
  double yLow = std::floor(std::log10(low)),
         yHigh = std::ceil(std::log10(high));
  if (yHigh <= yLow)
    yHigh = yLow + 1;
  double xLow = std::log2(static_cast<double>(lengths.front()));
  double xHigh = std::log2(static_cast<double>(lengths.back()));
  if (xHigh <= xLow)
    xHigh = xLow + 1;

  const double width = 760, height = 480, left = 70, right = 220, top = 40,
               bottom = 50;
  double plotWidth = width - left - right, plotHeight = height - top - bottom;
  auto x = [&](double n) {
    return left + (std::log2(n) - xLow) / (xHigh - xLow) * plotWidth;
  };
  auto y = [&](double seconds) {
    return top + (yHigh - std::log10(seconds)) / (yHigh - yLow) * plotHeight;
  };

  std::ostringstream svg;
  svg << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width
      << "\" height=\"" << height << "\" viewBox=\"0 0 " << width << " "
      << height << "\" font-family=\"sans-serif\" font-size=\"11\">\n"
      << "<title>" << escape(title) << "</title>\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"" << left << "\" y=\"22\" font-size=\"14\">"
      << escape(title) << "</text>\n";
  // Axes, with a tick per power of two and per decade.
  svg << "<g class=\"axes\" stroke=\"#888\">\n"
      << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << plotWidth
      << "\" height=\"" << plotHeight << "\" fill=\"none\"/>\n";
  for (int64_t n : lengths)
    svg << "<line x1=\"" << number(x(n)) << "\" y1=\"" << top + plotHeight
        << "\" x2=\"" << number(x(n)) << "\" y2=\"" << top
        << "\" stroke=\"#eee\"/>\n";
  for (double decade = yLow; decade <= yHigh; ++decade)
    svg << "<line x1=\"" << left << "\" y1=\""
        << number(y(std::pow(10, decade))) << "\" x2=\"" << left + plotWidth
        << "\" y2=\"" << number(y(std::pow(10, decade)))
        << "\" stroke=\"#eee\"/>\n";
  svg << "</g>\n<g class=\"labels\">\n";
  for (int64_t n : lengths)
    svg << "<text x=\"" << number(x(n)) << "\" y=\"" << top + plotHeight + 16
        << "\" text-anchor=\"middle\">" << n << "</text>\n";
  for (double decade = yLow; decade <= yHigh; ++decade)
    svg << "<text x=\"" << left - 6 << "\" y=\""
        << number(y(std::pow(10, decade)) + 4) << "\" text-anchor=\"end\">"
        << escape(formatSeconds(std::pow(10, decade), 0)) << "</text>\n";
  svg << "<text x=\"" << left + plotWidth / 2 << "\" y=\"" << height - 12
      << "\" text-anchor=\"middle\">N (sequence length; M = N for "
         "self-attention)</text>\n"
      << "<text x=\"16\" y=\"" << top + plotHeight / 2
      << "\" transform=\"rotate(-90 16 " << top + plotHeight / 2
      << ")\" text-anchor=\"middle\">predicted time on " << escape(target.name)
      << "</text>\n</g>\n";

  // Crossovers.
  for (const PlotTerm &term : terms) {
    const std::optional<int64_t> &crossover = term.crossover;
    if (!crossover || *crossover < lengths.front() ||
        *crossover > lengths.back())
      continue;
    double at = x(static_cast<double>(*crossover));
    svg << "<g class=\"crossover\" data-term=\"" << escape(term.name)
        << "\" data-n=\"" << *crossover << "\">\n<line x1=\"" << number(at)
        << "\" y1=\"" << top << "\" x2=\"" << number(at) << "\" y2=\""
        << top + plotHeight
        << "\" stroke=\"black\" stroke-dasharray=\"4 3\"/>\n<text x=\""
        << number(at + 3) << "\" y=\"" << top + 12 << "\">" << escape(term.name)
        << ": kv-first from N = " << *crossover << "</text>\n</g>\n";
  }

  // Curves, their legend, and the measured points in the curve's colour.
  for (size_t i = 0; i < curves.size(); ++i) {
    const Curve &curve = curves[i];
    const char *color = colors[i % (sizeof(colors) / sizeof(colors[0]))];
    std::string name = curve.term + ": " + curve.strategy;
    svg << "<polyline class=\"curve\" data-term=\"" << escape(curve.term)
        << "\" data-strategy=\"" << escape(curve.strategy)
        << "\" fill=\"none\" stroke=\"" << color << "\" stroke-width=\""
        << (curve.strategy.find(" c=") == std::string::npos ? 2 : 1)
        << "\" points=\"";
    for (size_t k = 0; k < lengths.size(); ++k)
      svg << (k ? " " : "") << number(x(lengths[k])) << ","
          << number(y(curve.seconds[k]));
    svg << "\"/>\n";
    double legendY = top + 12 + 16 * static_cast<double>(i);
    svg << "<line x1=\"" << left + plotWidth + 12 << "\" y1=\""
        << number(legendY - 4) << "\" x2=\"" << left + plotWidth + 32
        << "\" y2=\"" << number(legendY - 4) << "\" stroke=\"" << color
        << "\" stroke-width=\"2\"/>\n<text x=\"" << left + plotWidth + 36
        << "\" y=\"" << number(legendY) << "\">" << escape(name) << "</text>\n";
    for (const MeasuredPoint &point : measured) {
      if (point.term != curve.term || point.strategy != curve.strategy ||
          point.seconds <= 0 || point.length < lengths.front() ||
          point.length > lengths.back())
        continue;
      svg << "<circle class=\"measured\" data-term=\"" << escape(point.term)
          << "\" data-strategy=\"" << escape(point.strategy) << "\" cx=\""
          << number(x(static_cast<double>(point.length))) << "\" cy=\""
          << number(y(point.seconds)) << "\" r=\"3.5\" fill=\"" << color
          << "\"/>\n";
    }
  }
  svg << "</svg>\n";
  return svg.str();
}
