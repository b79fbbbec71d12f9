// `compare --html FILE`: one static HTML file (inline SVG, no scripts, nothing fetched) with the
// output figures and the per-layer error chart, to read in a browser or attach to a review.
#pragma once

#include <string>
#include <vector>

namespace polyinfer::cli {

struct ReportOutput {
  std::string name;
  double max_abs = 0, mean_abs = 0, cosine = 0, snr_db = 0, top1 = -1, top5 = -1;
};

struct ReportLayer {
  std::string node, op;
  double relative_rms = 0, growth = 0;
  bool keep_in_float = false;
};

struct CompareReport {
  std::string reference, compared;
  int samples = 0;
  double latency_ms_reference = 0, latency_ms_compared = 0;  // 0: not timed (--time)
  std::vector<ReportOutput> outputs;
  std::vector<ReportLayer> layers;  // in the reference's node order; empty without --per-layer
};

// The report as a complete HTML document.
std::string compare_html(const CompareReport& r);

}  // namespace polyinfer::cli
