#include "cli/compare_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace polyinfer::cli {

namespace {

std::string esc(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string num(double v, const char* fmt = "%.4g") {
  if (std::isinf(v)) return v > 0 ? "&infin;" : "-&infin;";
  if (std::isnan(v)) return "-";
  char buf[48];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

// Relative error per layer on a log scale, one bar per layer in graph order; the layers to keep
// in float are red. Exact layers (error 0) sit on the axis.
std::string chart(const std::vector<ReportLayer>& layers) {
  const double lo = -8;  // 1e-8: below float32's resolution, drawn as exact
  double hi = -1;
  for (const auto& l : layers)
    if (l.relative_rms > 0 && std::isfinite(l.relative_rms))
      hi = std::max(hi, std::ceil(std::log10(l.relative_rms)));
  const double w = 900, h = 260, left = 50, bottom = 30, top = 10;
  const double bar = (w - left - 10) / std::max<size_t>(layers.size(), 1);
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << w << "\" height=\"" << h
    << "\" role=\"img\" aria-label=\"relative error per layer\">\n";
  auto y_of = [&](double e) {
    const double v = e > 0 ? std::clamp(std::log10(e), lo, hi) : lo;
    return top + (h - top - bottom) * (hi - v) / (hi - lo);
  };
  for (int d = static_cast<int>(lo); d <= static_cast<int>(hi); d += 1) {
    const double y = y_of(std::pow(10.0, d));
    s << "<line x1=\"" << left << "\" x2=\"" << w - 10 << "\" y1=\"" << y << "\" y2=\"" << y
      << "\" stroke=\"#ddd\"/><text x=\"" << left - 5 << "\" y=\"" << y + 4
      << "\" font-size=\"10\" text-anchor=\"end\">1e" << d << "</text>\n";
  }
  for (size_t i = 0; i < layers.size(); ++i) {
    const auto& l = layers[i];
    const double y = y_of(l.relative_rms), base = y_of(0);
    s << "<rect x=\"" << left + i * bar << "\" y=\"" << y << "\" width=\"" << std::max(bar - 1, 1.0)
      << "\" height=\"" << std::max(base - y, 0.5) << "\" fill=\""
      << (l.keep_in_float ? "#c0392b" : "#2c7fb8") << "\"><title>" << esc(l.node) << " ("
      << esc(l.op) << "): relative error " << num(l.relative_rms) << ", added " << num(l.growth)
      << "</title></rect>\n";
  }
  s << "<text x=\"" << left << "\" y=\"" << h - 8 << "\" font-size=\"11\">layers in graph order"
    << " (red: keep in float)</text>\n</svg>\n";
  return s.str();
}

}  // namespace

std::string compare_html(const CompareReport& r) {
  std::ostringstream s;
  s << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>polyinfer compare</title>\n"
       "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
       "td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}td:first-child,"
       "th:first-child{text-align:left}.keep{color:#c0392b;font-weight:bold}</style></head>"
       "<body>\n<h1>"
    << esc(r.compared) << " against " << esc(r.reference) << "</h1>\n<p>" << r.samples << " sample"
    << (r.samples == 1 ? "" : "s") << "; " << esc(r.reference)
    << " is the reference.</p>\n<h2>Outputs</h2>\n<table><tr><th>output</th><th>max abs</th>"
       "<th>mean abs</th><th>cosine</th><th>SNR dB</th><th>top-1</th><th>top-5</th></tr>\n";
  for (const auto& o : r.outputs)
    s << "<tr><td>" << esc(o.name) << "</td><td>" << num(o.max_abs) << "</td><td>"
      << num(o.mean_abs) << "</td><td>" << num(o.cosine, "%.6f") << "</td><td>"
      << num(o.snr_db, "%.1f") << "</td><td>" << (o.top1 < 0 ? "-" : num(o.top1, "%.3f"))
      << "</td><td>" << (o.top5 < 0 ? "-" : num(o.top5, "%.3f")) << "</td></tr>\n";
  s << "</table>\n";
  if (r.latency_ms_reference > 0) {
    // Two bars, same scale: the latency of each model, measured side by side in one run.
    const double big = std::max(r.latency_ms_reference, r.latency_ms_compared);
    s << "<h2>Latency</h2>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"600\" "
         "height=\"70\">\n";
    const std::pair<const char*, double> bars[] = {{"reference", r.latency_ms_reference},
                                                   {"compared", r.latency_ms_compared}};
    for (int i = 0; i < 2; ++i)
      s << "<text x=\"0\" y=\"" << 20 + 30 * i << "\" font-size=\"12\">" << bars[i].first
        << "</text><rect x=\"80\" y=\"" << 8 + 30 * i << "\" height=\"18\" width=\""
        << 400 * bars[i].second / big << "\" fill=\"#2c7fb8\"/><text x=\""
        << 85 + 400 * bars[i].second / big << "\" y=\"" << 21 + 30 * i << "\" font-size=\"12\">"
        << num(bars[i].second, "%.3f") << " ms</text>\n";
    s << "</svg>\n";
  }
  if (!r.layers.empty()) {
    s << "<h2>Per layer</h2>\n<p>Relative RMS error of each value both models produce; "
         "\"added\" is what the node adds to the largest error among its inputs.</p>\n"
      << chart(r.layers)
      << "<table><tr><th>node</th><th>op</th><th>relative error</th>"
         "<th>added</th></tr>\n";
    for (const auto& l : r.layers)
      s << "<tr" << (l.keep_in_float ? " class=\"keep\"" : "") << "><td>" << esc(l.node)
        << "</td><td>" << esc(l.op) << "</td><td>" << num(l.relative_rms) << "</td><td>"
        << num(l.growth) << "</td></tr>\n";
    s << "</table>\n";
  }
  s << "</body></html>\n";
  return s.str();
}

}  // namespace polyinfer::cli
