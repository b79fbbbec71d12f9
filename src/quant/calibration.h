// Calibration for static INT8 quantization: run the float model over sample inputs, record the
// values each activation tensor takes, and choose the range [lo, hi] its int8 levels will cover.
//
//   quant::Calibrator c(model_bytes, {"conv1_out", "relu3_out"}, opts);
//   for (const auto& feed : samples) c.observe_range(feed);     // pass 1: min / max
//   if (needs_histograms(method)) for (...) c.observe_histogram(feed);  // pass 2
//   std::map<std::string, Range> r = c.ranges(method, 99.999);
//
// Why two passes: percentile and entropy work on a histogram of |x|, whose bins must be fixed
// before the first value lands in them; the first pass finds each tensor's largest |x|, so the
// second bins every sample into the same [0, max|x|] grid (no re-binning, no lost resolution).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "onnx/import.h"
#include "polyinfer/session.h"

namespace polyinfer::quant {

enum class Method {
  MinMax,      // the extremes seen: nothing clipped, coarser steps when outliers are rare
  Percentile,  // |x| at a percentile of all values seen: clips the rarest outliers
  Entropy,     // the |x| threshold whose int8 histogram is closest (KL divergence) to the float one
};
// "minmax", "percentile", "entropy" → Method; InvalidArgument naming the choices otherwise.
Method parse_method(const std::string& name);
const char* method_name(Method m);
inline bool needs_histograms(Method m) { return m != Method::MinMax; }

// The range an activation's int8 levels cover; lo <= 0 <= hi (zero must be exact in int8).
struct Range {
  float lo = 0, hi = 0;
};

// What was seen of one tensor.
struct TensorStats {
  float min = 0, max = 0;  // over every sample (pass 1)
  int64_t values = 0;      // elements seen in pass 1
  // Pass 2: counts of |x| in `bins` equal bins over [0, absmax()].
  std::vector<double> histogram;
  float absmax() const;
};

// Range choice from statistics, exposed for tests. `levels` is how many int8 steps cover the
// positive side (127 when the range is symmetric around zero, 255 for a tensor never negative,
// whose asymmetric range spends every level on [0, hi]).
Range minmax_range(const TensorStats& s);
Range percentile_range(const TensorStats& s, double percentile);
Range entropy_range(const TensorStats& s, int levels);

class Calibrator {
 public:
  // Every name of `tensors` is a graph input or a node's output in `model`, which runs
  // unoptimized (so each of them exists) on `threads` threads (0: one per core).
  Calibrator(const Model& model, std::vector<std::string> tensors, int threads, int bins = 2048);

  // Pass 1 over one sample. Throws (InvalidArgument / ShapeMismatch) as Session::run does for a
  // feed that does not fit the model, and InvalidArgument naming the tensor when a calibrated
  // value holds NaN or infinity (its range would be meaningless).
  void observe_range(const std::map<std::string, Value>& feed);
  // Pass 2 over one sample (after every sample went through pass 1).
  void observe_histogram(const std::map<std::string, Value>& feed);

  // The chosen range of every tensor.
  std::map<std::string, Range> ranges(Method method, double percentile = 99.999) const;
  const std::map<std::string, TensorStats>& stats() const { return stats_; }

 private:
  // The calibrated tensors' values for one feed, in the order given to the constructor.
  std::vector<std::pair<std::string, Value>> values(const std::map<std::string, Value>& feed);

  std::shared_ptr<Session> session_;
  std::vector<std::string> tensors_;
  std::map<std::string, TensorStats> stats_;
  int bins_;
};

}  // namespace polyinfer::quant
