#include "quant/calibration.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "onnx/export.h"

namespace polyinfer::quant {

Method parse_method(const std::string& name) {
  if (name == "minmax") return Method::MinMax;
  if (name == "percentile") return Method::Percentile;
  PI_CHECK(name == "entropy", InvalidArgument, "unknown calibration method '", name,
           "': use minmax, percentile or entropy");
  return Method::Entropy;
}

const char* method_name(Method m) {
  switch (m) {
    case Method::MinMax: return "minmax";
    case Method::Percentile: return "percentile";
    case Method::Entropy: return "entropy";
  }
  return "?";
}

float TensorStats::absmax() const { return std::max(std::fabs(min), std::fabs(max)); }

namespace {

// Zero must lie inside every range: padding and ReLU produce exact zeros that int8 must keep.
Range with_zero(float lo, float hi) { return {std::min(lo, 0.0f), std::max(hi, 0.0f)}; }

// The extremes clipped to [-t, t]: a threshold on |x| applied to a possibly one-sided tensor.
Range clipped(const TensorStats& s, float t) {
  return with_zero(std::max(s.min, -t), std::min(s.max, t));
}

double bin_width(const TensorStats& s) {
  return s.histogram.empty() ? 0 : double(s.absmax()) / double(s.histogram.size());
}

}  // namespace

Range minmax_range(const TensorStats& s) { return with_zero(s.min, s.max); }

Range percentile_range(const TensorStats& s, double percentile) {
  double total = 0;
  for (double c : s.histogram) total += c;
  if (total == 0) return minmax_range(s);
  // The upper edge of the bin where the cumulative count reaches the percentile.
  const double want = total * percentile / 100.0;
  double seen = 0;
  size_t i = 0;
  for (; i < s.histogram.size(); ++i) {
    seen += s.histogram[i];
    if (seen >= want) break;
  }
  return clipped(s, float(double(std::min(i + 1, s.histogram.size())) * bin_width(s)));
}

// TensorRT's calibration rule ("8-bit inference with TensorRT", Migacz 2017): for each candidate
// threshold i (in bins), the reference P is the histogram up to i with everything beyond added
// to its last bin (clipping), and the candidate Q is the same bins merged into `levels` groups and
// spread back evenly over each group's non-empty bins (what int8 can represent). The threshold
// with the smallest KL(P || Q) loses the least information.
Range entropy_range(const TensorStats& s, int levels) {
  // Exact zeros (half of a ReLU's outputs) pile up in bin 0. They are represented exactly by
  // every candidate, yet merged into Q's first group that spike dominates the divergence and
  // drags the threshold down (ReLU(N(0,1)) clipped 3% of its values at 37% of its maximum).
  // Bin 0 counts as its neighbour, as NVIDIA's pytorch-quantization entropy calibrator does.
  std::vector<double> h = s.histogram;
  if (h.size() > 1) h[0] = h[1];
  const size_t n = h.size();
  if (n <= size_t(levels)) return minmax_range(s);
  double total = 0;
  for (double c : h) total += c;
  if (total == 0) return minmax_range(s);
  std::vector<double> suffix(n + 1, 0);  // suffix[i] = Σ h[i..n)
  for (size_t i = n; i-- > 0;) suffix[i] = suffix[i + 1] + h[i];

  double best_kl = std::numeric_limits<double>::infinity();
  size_t best = n;
  std::vector<double> p, q;
  for (size_t i = size_t(levels); i <= n; ++i) {
    p.assign(h.begin(), h.begin() + long(i));
    p[i - 1] += suffix[i];
    q.assign(i, 0);
    for (int g = 0; g < levels; ++g) {
      const size_t b = i * size_t(g) / size_t(levels), e = i * size_t(g + 1) / size_t(levels);
      double sum = 0;
      int nonzero = 0;
      for (size_t k = b; k < e; ++k) {
        sum += h[k];
        nonzero += h[k] > 0;
      }
      if (nonzero == 0) continue;
      for (size_t k = b; k < e; ++k)
        if (h[k] > 0) q[k] = sum / nonzero;
    }
    // P's clipped mass may sit in a bin Q left empty: give Q's empty bins a small share so the
    // divergence stays finite (the smoothing ONNX Runtime's and ncnn's calibrators apply too).
    double psum = 0, qsum = 0;
    for (size_t k = 0; k < i; ++k) {
      psum += p[k];
      qsum += q[k];
    }
    if (psum == 0 || qsum == 0) continue;
    const double eps = 1e-4 * qsum / double(i);
    double qsmooth = 0;
    for (size_t k = 0; k < i; ++k) qsmooth += q[k] > 0 ? q[k] : (p[k] > 0 ? eps : 0);
    double kl = 0;
    for (size_t k = 0; k < i; ++k) {
      if (p[k] <= 0) continue;
      const double pk = p[k] / psum, qk = (q[k] > 0 ? q[k] : eps) / qsmooth;
      kl += pk * std::log(pk / qk);
    }
    if (kl < best_kl) {
      best_kl = kl;
      best = i;
    }
  }
  return clipped(s, float(double(best) * bin_width(s)));
}

Calibrator::Calibrator(const Model& model, std::vector<std::string> tensors, int threads, int bins)
    : tensors_(std::move(tensors)), bins_(bins) {
  std::set<std::string> inputs, outputs;
  for (const auto& v : model.graph->inputs) inputs.insert(v.name);
  for (const auto& v : model.graph->outputs) outputs.insert(v.name);
  SessionOptions o;
  o.optimization_level = 0;
  o.threads = threads;
  for (const auto& t : tensors_)
    if (!inputs.count(t) && !outputs.count(t)) o.keep_values.push_back(t);
  const std::string bytes = export_onnx_bytes(model);
  session_ = std::make_shared<Session>(Session::load_bytes(bytes.data(), bytes.size(), o));
  for (const auto& t : tensors_) stats_[t];
}

std::vector<std::pair<std::string, Value>> Calibrator::values(
    const std::map<std::string, Value>& feed) {
  std::vector<Value> out = session_->run(feed);
  std::map<std::string, Value> by_name = feed;
  for (size_t i = 0; i < out.size(); ++i) by_name[session_->outputs()[i].name] = out[i];
  std::vector<std::pair<std::string, Value>> wanted;
  for (const auto& t : tensors_) {
    auto it = by_name.find(t);
    PI_CHECK(it != by_name.end() && it->second.is_tensor(), Internal, "calibration: tensor '", t,
             "' was not produced");
    PI_CHECK(it->second.tensor().dtype() == DType::Float32, InvalidArgument, "calibration: '", t,
             "' is ", dtype_name(it->second.tensor().dtype()), ", not float32");
    wanted.emplace_back(t, it->second);
  }
  return wanted;
}

void Calibrator::observe_range(const std::map<std::string, Value>& feed) {
  for (const auto& [name, v] : values(feed)) {
    const Tensor& t = v.tensor();
    const float* x = t.data<float>();
    TensorStats& s = stats_[name];
    float lo = std::numeric_limits<float>::infinity(), hi = -lo;
    for (int64_t i = 0; i < t.numel(); ++i) {
      PI_CHECK(std::isfinite(x[i]), InvalidArgument, "calibration: tensor '", name, "' holds ",
               x[i], " at element ", i, " (NaN or infinity): check the calibration data");
      lo = std::min(lo, x[i]);
      hi = std::max(hi, x[i]);
    }
    if (t.numel() == 0) continue;
    if (s.values == 0) {
      s.min = lo;
      s.max = hi;
    } else {
      s.min = std::min(s.min, lo);
      s.max = std::max(s.max, hi);
    }
    s.values += t.numel();
  }
}

void Calibrator::observe_histogram(const std::map<std::string, Value>& feed) {
  for (const auto& [name, v] : values(feed)) {
    const Tensor& t = v.tensor();
    const float* x = t.data<float>();
    TensorStats& s = stats_[name];
    if (s.histogram.empty()) s.histogram.assign(size_t(bins_), 0);
    const float m = s.absmax();
    if (m <= 0) continue;
    const double scale = double(bins_) / double(m);
    for (int64_t i = 0; i < t.numel(); ++i) {
      // Values beyond pass 1's maximum (a sample seen again differs only by rounding) land in
      // the last bin.
      const auto b =
          static_cast<size_t>(std::min(double(bins_ - 1), std::fabs(double(x[i])) * scale));
      s.histogram[b] += 1;
    }
  }
}

std::map<std::string, Range> Calibrator::ranges(Method method, double percentile) const {
  std::map<std::string, Range> r;
  for (const auto& [name, s] : stats_) {
    switch (method) {
      case Method::MinMax: r[name] = minmax_range(s); break;
      case Method::Percentile: r[name] = percentile_range(s, percentile); break;
      case Method::Entropy: r[name] = entropy_range(s, s.min >= 0 ? 255 : 127); break;
    }
  }
  return r;
}

}  // namespace polyinfer::quant
