// How far one model's outputs are from another's: the figures `polyinfer compare` reports (and
// the INT8 work will judge quantized models by). Accumulated over samples, so a report covers a
// whole data set, not one input.
#pragma once

#include <cstdint>

#include "polyinfer/tensor.h"

namespace polyinfer {

class ErrorStats {
 public:
  // Adds one sample: `got` against the reference `ref` (same shape; any float or integer dtype,
  // compared in double). Throws ShapeMismatch naming both shapes when they differ.
  void add(const Tensor& got, const Tensor& ref);

  int64_t samples() const { return samples_; }
  int64_t elements() const { return n_; }
  double max_abs() const { return max_abs_; }
  double mean_abs() const { return n_ ? sum_abs_ / static_cast<double>(n_) : 0; }
  // Cosine similarity of the two outputs seen as long vectors (1 when both are all zeros).
  double cosine() const;
  // Signal-to-noise ratio of `got` as a copy of `ref`, in dB: 10 log10(Σ ref² / Σ (got-ref)²);
  // +infinity when they are identical.
  double snr_db() const;
  // RMS error relative to the reference's RMS, sqrt(Σ (got-ref)² / Σ ref²): 0 when identical,
  // infinity when the reference is all zeros and `got` is not. Comparable across layers.
  double relative_rms() const;
  // Classifier outputs ([N, C] or [C] with C >= 2): the share of rows whose top-1 class agrees,
  // and whose top-1 class of `ref` is among the top 5 of `got`; -1 when the output is not shaped
  // like scores.
  double top1() const { return rows_ ? static_cast<double>(top1_) / rows_ : -1; }
  double top5() const { return rows_ ? static_cast<double>(top5_) / rows_ : -1; }
  // NaN or infinity in `got` where `ref` is finite.
  int64_t non_finite() const { return non_finite_; }

 private:
  int64_t samples_ = 0, n_ = 0, rows_ = 0, top1_ = 0, top5_ = 0, non_finite_ = 0;
  double max_abs_ = 0, sum_abs_ = 0, dot_ = 0, got_sq_ = 0, ref_sq_ = 0, err_sq_ = 0;
};

}  // namespace polyinfer
