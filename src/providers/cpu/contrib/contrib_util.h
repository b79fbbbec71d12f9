// What the CPU kernels of ONNX Runtime's com.microsoft operators (this folder) share.
//
// These operators are what ONNX Runtime's transformer optimizer and onnxruntime-genai's model
// builder write: SkipLayerNormalization, Attention, GroupQueryAttention, MatMulNBits, ... Their
// semantics are ONNX Runtime's (docs/ContribOperators.md in its repository, and its CPU
// kernels' behaviour, which tests/data/contrib/ pins with outputs ONNX Runtime 1.32 computed).
//
// Each kernel computes in float32: a float32 tensor is read and written in place, a float16 or
// bfloat16 one through a float32 copy (FloatIn, FloatOut) — 16-bit models run, for checking
// rather than speed, as the 16-bit reference kernels do. Loops over rows or heads are split
// over the session's threads (fast/fast_util.h's parallel_for).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/dispatch.h"
#include "runtime/kernel.h"

namespace polyinfer::contrib {

inline constexpr const char* kMsDomain = "com.microsoft";

// True for the float dtypes the contrib kernels compute (in float32).
inline bool is_contrib_float(DType t) {
  return t == DType::Float32 || t == DType::Float16 || t == DType::BFloat16;
}

// Throws UnsupportedOp unless `t` is float32, float16 or bfloat16; `what` names the input.
inline void check_contrib_float(const Tensor& t, const std::string& who, const char* what) {
  PI_CHECK(is_contrib_float(t.dtype()), UnsupportedOp, who, ": ", what, " of dtype ",
           dtype_name(t.dtype()), " is not supported (float, float16 or bfloat16)");
}

// The elements of a float tensor as float32: the tensor's own memory for float32, a converted
// copy for float16 and bfloat16.
class FloatIn {
 public:
  FloatIn() = default;
  FloatIn(const Tensor& t, const std::string& who, const char* what) {
    check_contrib_float(t, who, what);
    if (t.dtype() == DType::Float32) {
      p_ = t.data<float>();
      return;
    }
    own_.resize(static_cast<size_t>(t.numel()));
    dispatch(TypeList<Float16, BFloat16>{}, t.dtype(), who.c_str(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* s = t.data<T>();
      for (size_t i = 0; i < own_.size(); ++i) own_[i] = static_cast<float>(s[i]);
    });
    p_ = own_.data();
  }
  // FloatIn of ctx's input i when it is given, else an empty one (data() null).
  static FloatIn optional(const KernelContext& ctx, size_t i, const std::string& who,
                          const char* what) {
    return ctx.has_input(i) ? FloatIn(ctx.input(i), who, what) : FloatIn();
  }
  const float* data() const { return p_; }
  explicit operator bool() const { return p_ != nullptr; }

 private:
  std::vector<float> own_;
  const float* p_ = nullptr;
};

// Output i of `dtype` and `shape` written as float32: in place for float32; for float16 and
// bfloat16 into a float32 buffer that done() rounds into the output.
class FloatOut {
 public:
  FloatOut(KernelContext& ctx, size_t i, DType dtype, const Shape& shape)
      : t_(&ctx.output(i, dtype, shape)) {
    if (dtype == DType::Float32) {
      p_ = t_->data<float>();
    } else {
      own_.resize(static_cast<size_t>(t_->numel()));
      p_ = own_.data();
    }
  }
  FloatOut(const FloatOut&) = delete;
  FloatOut& operator=(const FloatOut&) = delete;
  float* data() { return p_; }
  void done() {
    if (own_.empty()) return;
    dispatch(TypeList<Float16, BFloat16>{}, t_->dtype(), "FloatOut", [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* d = t_->data<T>();
      for (size_t i = 0; i < own_.size(); ++i) d[i] = T(own_[i]);
    });
  }

 private:
  Tensor* t_;
  std::vector<float> own_;
  float* p_ = nullptr;
};

// A float tensor's values as float32, read through peek_bytes(): for a constant input at kernel
// creation, whose bytes may still be in the model file at any alignment (also fine for any
// other host tensor).
inline std::vector<float> peek_floats(const Tensor& t, const std::string& who, const char* what) {
  check_contrib_float(t, who, what);
  const auto* p = static_cast<const unsigned char*>(t.peek_bytes());
  std::vector<float> v(static_cast<size_t>(t.numel()));
  if (t.dtype() == DType::Float32) {
    if (!v.empty()) std::memcpy(v.data(), p, v.size() * sizeof(float));
    return v;
  }
  for (size_t i = 0; i < v.size(); ++i) {
    uint16_t bits;
    std::memcpy(&bits, p + 2 * i, 2);
    if (t.dtype() == DType::Float16) {
      v[i] = Float16::to_float(bits);
    } else {
      BFloat16 h;
      h.bits = bits;
      v[i] = static_cast<float>(h);
    }
  }
  return v;
}

// The values of an int32 or int64 tensor as int64 (position ids, sequence lengths, masks).
inline std::vector<int64_t> read_index_values(const Tensor& t, const std::string& who,
                                              const char* what) {
  std::vector<int64_t> v(static_cast<size_t>(t.numel()));
  if (t.dtype() == DType::Int32) {
    const int32_t* p = t.data<int32_t>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = p[i];
  } else if (t.dtype() == DType::Int64) {
    const int64_t* p = t.data<int64_t>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = p[i];
  } else {
    fail(ErrorCode::InvalidArgument, who, ": ", what, " must be int32 or int64, got ",
         dtype_name(t.dtype()));
  }
  return v;
}

}  // namespace polyinfer::contrib

// Registers kernel K for the com.microsoft operator OP (opset 1, the only version ONNX Runtime
// has of each) on the CPU provider, reference tier; PI_MS_FAST_KERNEL for a fast one.
#define PI_MS_KERNEL(OP, K) PI_REGISTER_KERNEL("cpu", "com.microsoft", OP, 1, 1, K)
#define PI_MS_FAST_KERNEL(OP, K) PI_CPU_FAST_KERNEL("com.microsoft", OP, 1, 1, K)
