// The scaled dot-product attention of one query row, shared by com.microsoft Attention,
// MultiHeadAttention (attention.cpp) and GroupQueryAttention (gqa.cpp); and the masks of the
// first two (mask_index, key_padding_mask).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "polyinfer/tensor.h"

namespace polyinfer::contrib {

// How a row's softmax departs from the plain one.
struct SoftmaxForm {
  float softcap = 0;      // > 0: scores become softcap * tanh(scores / softcap) before the bias
  bool smooth = false;    // an extra logit of 0 in the denominator (smooth_softmax)
  bool has_sink = false;  // an extra logit `sink` in the denominator (head_sink)
  float sink = 0;
};

// out[0, hv) = sum over keys j in [lo, hi) of p_j v_j, p = softmax(scale * q . k_j (softcapped)
// + add[j]) over those keys; keys outside [lo, hi) take no part. k and v hold rows of h and hv
// floats, key j at k + j * h and v + j * hv; add (may be null) is indexed by j. `scores` is
// scratch of at least hi floats. A row whose scores are all -inf attends to nothing (out = 0).
inline void attend_row(const float* q, const float* k, const float* v, int64_t h, int64_t hv,
                       int64_t lo, int64_t hi, float scale, const float* add,
                       const SoftmaxForm& form, float* scores, float* out) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  float m = kNegInf;
  for (int64_t j = lo; j < hi; ++j) {
    const float* kj = k + j * h;
    float dot = 0;
#pragma omp simd reduction(+ : dot)
    for (int64_t d = 0; d < h; ++d) dot += q[d] * kj[d];
    float s = dot * scale;
    if (form.softcap > 0) s = form.softcap * std::tanh(s / form.softcap);
    if (add) s += add[j];
    scores[j] = s;
    m = std::max(m, s);
  }
  if (form.smooth) m = std::max(m, 0.0f);
  if (form.has_sink) m = std::max(m, form.sink);
  std::fill(out, out + hv, 0.0f);
  if (m == kNegInf) return;
  float denom = 0;
  for (int64_t j = lo; j < hi; ++j) {
    scores[j] = std::exp(scores[j] - m);
    denom += scores[j];
  }
  if (form.smooth) denom += std::exp(-m);
  if (form.has_sink) denom += std::exp(form.sink - m);
  const float inv = 1.0f / denom;
  for (int64_t j = lo; j < hi; ++j) {
    const float p = scores[j] * inv;
    const float* vj = v + j * hv;
#pragma omp simd
    for (int64_t d = 0; d < hv; ++d) out[d] += p * vj[d];
  }
}

// The additive mask of com.microsoft Attention's mask_index and MultiHeadAttention's
// key_padding_mask (int32): masked keys get `filter` (mask_filter_value, -10000 by default)
// added to their scores, as ONNX Runtime does — not -inf, so a row with every key masked
// attends to all of them equally. Forms, for B batch entries, S queries and T keys:
//   [B]            keys at or past mask[b] are masked (right padding)
//   [2B]           keys at or past mask[b] and before mask[B + b] (left padding)
//   [B, T]         key j masked where mask[b, j] == 0
//   [B, S, T]      key j masked for query i where mask[b, i, j] == 0
class KeyMask {
 public:
  KeyMask() = default;
  // Checks the form against B, S and T; throws ShapeMismatch naming `who` otherwise.
  KeyMask(const Tensor& mask, int64_t B, int64_t S, int64_t T, float filter, const std::string& who,
          const char* what)
      : B_(B), S_(S), T_(T), filter_(filter) {
    PI_CHECK(mask.dtype() == DType::Int32, InvalidArgument, who, ": ", what, " must be int32, got ",
             dtype_name(mask.dtype()));
    const Shape& s = mask.shape();
    if (s.size() == 1 && s[0] == B) {
      form_ = Form::Lengths;
    } else if (s.size() == 1 && s[0] == 2 * B) {
      form_ = Form::EndStart;
    } else if (s.size() == 2 && s[0] == B && s[1] == T) {
      form_ = Form::Raw2;
    } else if (s.size() == 3 && s[0] == B && s[1] == S && s[2] == T) {
      form_ = Form::Raw3;
    } else {
      fail(ErrorCode::ShapeMismatch, who, ": ", what, " has shape ", shape_str(s),
           "; the forms taken are [", B, "], [", 2 * B, "], [", B, ", ", T, "] and [", B, ", ", S,
           ", ", T, "]");
    }
    const int32_t* p = mask.data<int32_t>();
    values_.assign(p, p + mask.numel());
  }
  explicit operator bool() const { return form_ != Form::None; }

  // row[j] for the T keys of query i of batch entry b: 0 or the filter value.
  void fill(int64_t b, int64_t i, float* row) const {
    std::fill(row, row + T_, 0.0f);
    switch (form_) {
      case Form::None: return;
      case Form::Lengths:
        for (int64_t j = std::max<int64_t>(0, values_[b]); j < T_; ++j) row[j] = filter_;
        return;
      case Form::EndStart: {
        const int64_t end = values_[b], start = values_[B_ + b];
        for (int64_t j = 0; j < T_; ++j)
          if (j >= end || j < start) row[j] = filter_;
        return;
      }
      case Form::Raw2:
        for (int64_t j = 0; j < T_; ++j)
          if (values_[b * T_ + j] == 0) row[j] = filter_;
        return;
      case Form::Raw3:
        for (int64_t j = 0; j < T_; ++j)
          if (values_[(b * S_ + i) * T_ + j] == 0) row[j] = filter_;
        return;
    }
  }

 private:
  enum class Form { None, Lengths, EndStart, Raw2, Raw3 };
  Form form_ = Form::None;
  int64_t B_ = 0, S_ = 0, T_ = 0;
  float filter_ = 0;
  std::vector<int32_t> values_;
};

// attention_bias [B or 1, N or 1, S, T] read as float32 rows.
class BiasRows {
 public:
  BiasRows() = default;
  BiasRows(const float* p, const Shape& s, int64_t B, int64_t N, int64_t S, int64_t T,
           const std::string& who)
      : p_(p), S_(S), T_(T) {
    PI_CHECK(s.size() == 4 && (s[0] == B || s[0] == 1) && (s[1] == N || s[1] == 1) && s[2] == S &&
                 s[3] == T,
             ShapeMismatch, who, ": attention_bias has shape ", shape_str(s), "; it must be [", B,
             " or 1, ", N, " or 1, ", S, ", ", T, "]");
    per_b_ = s[0] != 1;
    per_n_ = s[1] != 1;
    N_ = s[1];
  }
  explicit operator bool() const { return p_ != nullptr; }
  const float* row(int64_t b, int64_t n, int64_t i) const {
    return p_ + (((per_b_ ? b : 0) * N_ + (per_n_ ? n : 0)) * S_ + i) * T_;
  }

 private:
  const float* p_ = nullptr;
  int64_t S_ = 0, T_ = 0, N_ = 1;
  bool per_b_ = false, per_n_ = false;
};

}  // namespace polyinfer::contrib
