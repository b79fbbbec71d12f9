#include "core/accuracy.h"

#include "core/dispatch.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

namespace polyinfer {

namespace {

std::vector<double> as_doubles(const Tensor& t, const char* which) {
  const Tensor host = t.to(Device::cpu());
  std::vector<double> out(static_cast<size_t>(host.numel()));
  const std::string who = std::string("compare: ") + which + " output";
  dispatch(NumericTypes{}, host.dtype(), who.c_str(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = host.data<T>();
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = static_cast<double>(static_cast<compute_t<T>>(p[i]));
  });
  return out;
}

// Indices of the k largest scores, largest first (ties: lower index first). NaN ranks below
// every number: a comparison with NaN would break the sort's ordering (undefined behaviour).
std::vector<int64_t> top_k(const double* row, int64_t c, int64_t k) {
  std::vector<int64_t> idx(static_cast<size_t>(c));
  std::iota(idx.begin(), idx.end(), int64_t{0});
  k = std::min(k, c);
  auto score = [&](int64_t i) {
    return std::isnan(row[i]) ? -std::numeric_limits<double>::infinity() : row[i];
  };
  std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), [&](int64_t a, int64_t b) {
    return score(a) > score(b) || (score(a) == score(b) && a < b);
  });
  idx.resize(static_cast<size_t>(k));
  return idx;
}

}  // namespace

void ErrorStats::add(const Tensor& got, const Tensor& ref) {
  PI_CHECK(got.shape() == ref.shape(), ShapeMismatch, "compare: output shapes differ, ",
           shape_str(got.shape()), " against the reference's ", shape_str(ref.shape()));
  const std::vector<double> g = as_doubles(got, "the compared"),
                            r = as_doubles(ref, "the reference");
  for (size_t i = 0; i < g.size(); ++i) {
    // A reference that is not finite has nothing to be close to; a non-finite value where the
    // reference is finite is counted, not folded into the sums (it would make them all NaN).
    if (!std::isfinite(r[i])) continue;
    if (!std::isfinite(g[i])) {
      ++non_finite_;
      continue;
    }
    const double e = std::abs(g[i] - r[i]);
    if (std::isfinite(e)) {
      max_abs_ = std::max(max_abs_, e);
      sum_abs_ += e;
      err_sq_ += e * e;
    }
    dot_ += g[i] * r[i];
    got_sq_ += g[i] * g[i];
    ref_sq_ += r[i] * r[i];
  }
  n_ += static_cast<int64_t>(g.size());
  ++samples_;
  // Scores: [N, C] or [C], C >= 2.
  const Shape& s = ref.shape();
  if ((s.size() == 2 || s.size() == 1) && s.back() >= 2) {
    const int64_t c = s.back(), rows = s.size() == 2 ? s[0] : 1;
    for (int64_t i = 0; i < rows; ++i) {
      const int64_t want = top_k(r.data() + i * c, c, 1)[0];
      const auto five = top_k(g.data() + i * c, c, 5);
      top1_ += five[0] == want ? 1 : 0;
      top5_ += std::find(five.begin(), five.end(), want) != five.end() ? 1 : 0;
      ++rows_;
    }
  }
}

double ErrorStats::cosine() const {
  if (got_sq_ == 0 && ref_sq_ == 0) return 1;
  if (got_sq_ == 0 || ref_sq_ == 0) return 0;
  return dot_ / (std::sqrt(got_sq_) * std::sqrt(ref_sq_));
}

double ErrorStats::relative_rms() const {
  if (err_sq_ == 0) return 0;
  if (ref_sq_ == 0) return std::numeric_limits<double>::infinity();
  return std::sqrt(err_sq_ / ref_sq_);
}

double ErrorStats::snr_db() const {
  if (err_sq_ == 0) return std::numeric_limits<double>::infinity();
  return 10 * std::log10(ref_sq_ / err_sq_);
}

}  // namespace polyinfer
