// The oracle harness for fast kernels: run one operator on the `cpu` provider (fast tier first)
// and on `cpu-ref` (reference kernels only), compare the outputs, and report which
// implementation `cpu` picked — so a test can assert both "same answer" and "the fast path ran".
//
//   #include "oracle.h"
//   using polyinfer::test::OracleOp;
//   TEST(FastBinary, BiasAdd) {
//     auto r = OracleOp("Add", 14).random({2, 7, 768}).random({768}).check();
//     EXPECT_NE(r.impl, "reference");        // the fast tier ran it ("fast:avx512", "onednn:...")
//     // A fast kernel that handed this run's inputs to its reference kernel reports
//     // "reference (fast path declined)": impl is read after the run.
//   }
//   OracleOp("Softmax", 13).attr("axis", int64_t{-1}).random({33, 1003}).check(1e-6, 1e-5);
//   OracleOp("Gather", 13).random({100, 64}).input(Tensor::from_vector<int64_t>({3}, {0, 99, -1}));
//   OracleOp("Gelu", 1, "ai.polyinfer").reference_as("Gelu", 20).random({33}).check();
//
// How it works: a one-node model (ModelBuilder) whose inputs are all run-time inputs (never
// initializers, so nothing is constant-folded; the session also runs at optimization level 0),
// named in0, in1, ... in the order given; an input given as Tensor() is left out (an optional
// input). Outputs out0..out{n-1} (set with outputs(n)) have no declared shape. check() loads the
// model on both providers with `threads` intra-op threads, runs it, and EXPECTs (gtest) equal
// dtypes and shapes and, element by element, |fast - ref| <= atol + rtol * |ref| for floats (NaN
// matches NaN, inf matches the same inf) and equality for other dtypes. It returns the node's
// impl on `cpu` and the largest errors seen, for further assertions or for printing.
//
// Random inputs come from a fixed-seed generator (reproducible): uniform in [lo, hi).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>

#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "model_builder.h"
#include "polyinfer/session.h"

namespace polyinfer::test {

// A float32 tensor of `shape`, uniform in [lo, hi), from a generator seeded with `seed`.
inline Tensor random_tensor(const Shape& shape, uint32_t seed = 1, float lo = -3.0f,
                            float hi = 3.0f) {
  return Tensor::from_vector<float>(shape, random_values(shape_numel(shape), seed, lo, hi));
}

// `t` (float32) rounded to float16: inputs for the float16 kernels.
inline Tensor to_half(const Tensor& t) {
  const std::vector<float> f = t.to_vector<float>();
  std::vector<Float16> h(f.begin(), f.end());
  return Tensor::from_vector<Float16>(t.shape(), h);
}

// `t` (float32) rounded to bfloat16: inputs for the bfloat16 kernels.
inline Tensor to_bf16(const Tensor& t) {
  const std::vector<float> f = t.to_vector<float>();
  std::vector<BFloat16> h(f.begin(), f.end());
  return Tensor::from_vector<BFloat16>(t.shape(), h);
}

struct OracleResult {
  std::string impl;      // the node's implementation on `cpu` ("reference" if none faster)
  std::string provider;  // the provider that ran the node (the first of providers() that can)
  double max_abs = 0;    // largest |fast - ref| over all float outputs
  double max_rel = 0;    // largest |fast - ref| / |ref| where |ref| > 0
};

class OracleOp {
 public:
  // op in ONNX `domain` ("" is the default domain) at `opset`.
  explicit OracleOp(std::string op, int opset, std::string domain = "")
      : op_(std::move(op)), opset_(opset), domain_(std::move(domain)) {}

  // A run-time input. Tensor() leaves an optional input out.
  OracleOp& input(Tensor t) {
    inputs_.push_back(std::move(t));
    return *this;
  }
  // A random float32 input (seeded from its position unless `seed` is given).
  OracleOp& random(const Shape& shape, float lo = -3.0f, float hi = 3.0f, uint32_t seed = 0) {
    return input(random_tensor(shape, seed ? seed : 17u + 31u * uint32_t(inputs_.size()), lo, hi));
  }
  // The same, rounded to float16 (for the float16 kernels).
  OracleOp& random_half(const Shape& shape, float lo = -3.0f, float hi = 3.0f) {
    return input(to_half(random_tensor(shape, 17u + 31u * uint32_t(inputs_.size()), lo, hi)));
  }
  // The same, rounded to bfloat16.
  OracleOp& random_bf16(const Shape& shape, float lo = -3.0f, float hi = 3.0f) {
    return input(to_bf16(random_tensor(shape, 17u + 31u * uint32_t(inputs_.size()), lo, hi)));
  }
  OracleOp& attr(const std::string& name, int64_t v) {
    auto* a = add_attr(name, onnx::AttributeProto::INT);
    a->set_i(v);
    return *this;
  }
  OracleOp& attr(const std::string& name, float v) {
    auto* a = add_attr(name, onnx::AttributeProto::FLOAT);
    a->set_f(v);
    return *this;
  }
  OracleOp& attr(const std::string& name, const std::string& v) {
    auto* a = add_attr(name, onnx::AttributeProto::STRING);
    a->set_s(v);
    return *this;
  }
  OracleOp& attr(const std::string& name, const std::vector<int64_t>& v) {
    auto* a = add_attr(name, onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
    return *this;
  }
  OracleOp& attr(const std::string& name, const std::vector<float>& v) {
    auto* a = add_attr(name, onnx::AttributeProto::FLOATS);
    for (float x : v) a->add_floats(x);
    return *this;
  }
  OracleOp& outputs(int n) {
    outputs_ = n;
    return *this;
  }
  OracleOp& threads(int n) {
    threads_ = n;
    return *this;
  }
  // The providers under test (default {"cpu"}), e.g. {"vulkan"}: still checked against cpu-ref.
  OracleOp& providers(std::vector<std::string> names) {
    providers_ = std::move(names);
    return *this;
  }
  // The oracle runs this ONNX-domain op instead (same inputs and attributes): for ai.polyinfer
  // ops that are defined as an ONNX op and have no reference kernel of their own.
  OracleOp& reference_as(std::string op, int opset) {
    ref_op_ = std::move(op);
    ref_opset_ = opset;
    return *this;
  }

  // The one-node model, serialized (`for_reference`: the reference_as form, if one is set).
  std::string model(bool for_reference = false) const {
    const bool swap = for_reference && !ref_op_.empty();
    const std::string op = swap ? ref_op_ : op_, domain = swap ? "" : domain_;
    const int opset = swap ? ref_opset_ : opset_;
    ModelBuilder b(domain.empty() ? opset : 17);
    onnx::ModelProto& m = b.proto();
    if (!domain.empty()) {
      auto* imp = m.add_opset_import();
      imp->set_domain(domain);
      imp->set_version(opset);
    }
    auto* g = m.mutable_graph();
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_domain(domain);
    n->set_name("oracle_node");
    for (size_t i = 0; i < inputs_.size(); ++i) {
      if (!inputs_[i].defined()) {
        n->add_input("");
        continue;
      }
      const std::string name = "in" + std::to_string(i);
      n->add_input(name);
      auto* v = g->add_input();
      v->set_name(name);
      auto* tt = v->mutable_type()->mutable_tensor_type();
      tt->set_elem_type(onnx_elem(inputs_[i].dtype()));
      auto* sh = tt->mutable_shape();
      for (int64_t d : inputs_[i].shape()) sh->add_dim()->set_dim_value(d);
    }
    for (int i = 0; i < outputs_; ++i) {
      const std::string name = "out" + std::to_string(i);
      n->add_output(name);
      g->add_output()->set_name(name);
    }
    for (const auto& a : attrs_) *n->add_attribute() = a;
    return m.SerializeAsString();
  }

  // Runs on `cpu` and `cpu-ref` and compares (see the top of the file).
  OracleResult check(double atol = 1e-6, double rtol = 1e-5) const {
    const std::string bytes = model(), ref_bytes = model(true);
    std::map<std::string, Value> feeds;
    for (size_t i = 0; i < inputs_.size(); ++i)
      if (inputs_[i].defined()) feeds["in" + std::to_string(i)] = Value(inputs_[i]);
    SessionOptions fast_o, ref_o;
    fast_o.providers = providers_;
    ref_o.providers = {"cpu-ref"};
    fast_o.threads = ref_o.threads = threads_;
    fast_o.optimization_level = ref_o.optimization_level = 0;
    Session fast = Session::load_bytes(bytes.data(), bytes.size(), fast_o);
    Session ref = Session::load_bytes(ref_bytes.data(), ref_bytes.size(), ref_o);
    OracleResult r;
    const std::vector<Value> got = fast.run(feeds);
    // Read after the run: a fast kernel that handed these inputs to the reference one says so.
    if (!fast.placement().nodes.empty()) {
      r.impl = fast.placement().nodes[0].impl;
      r.provider = fast.placement().nodes[0].provider;
    }
    const std::vector<Value> want = ref.run(feeds);
    EXPECT_EQ(got.size(), want.size());
    for (size_t o = 0; o < got.size() && o < want.size(); ++o) {
      if (!want[o].is_tensor()) continue;
      const Tensor& g = got[o].tensor();
      const Tensor& w = want[o].tensor();
      EXPECT_EQ(g.dtype(), w.dtype()) << op_ << " output " << o;
      EXPECT_EQ(g.shape(), w.shape()) << op_ << " output " << o;
      if (g.dtype() != w.dtype() || g.shape() != w.shape()) continue;
      if (w.dtype() == DType::Float32) {
        compare_floats(g.to_vector<float>(), w.to_vector<float>(), atol, rtol, o, r);
      } else if (w.dtype() == DType::Float16) {
        const auto gh = g.to_vector<Float16>(), wh = w.to_vector<Float16>();
        compare_floats(std::vector<float>(gh.begin(), gh.end()),
                       std::vector<float>(wh.begin(), wh.end()), atol, rtol, o, r);
      } else if (w.dtype() == DType::BFloat16) {
        const auto gh = g.to_vector<BFloat16>(), wh = w.to_vector<BFloat16>();
        compare_floats(std::vector<float>(gh.begin(), gh.end()),
                       std::vector<float>(wh.begin(), wh.end()), atol, rtol, o, r);
      } else if (w.dtype() == DType::Int64) {
        EXPECT_EQ(g.to_vector<int64_t>(), w.to_vector<int64_t>()) << op_ << " output " << o;
      } else if (w.dtype() == DType::UInt8) {
        EXPECT_EQ(g.to_vector<uint8_t>(), w.to_vector<uint8_t>()) << op_ << " output " << o;
      } else if (w.dtype() == DType::Int8) {
        EXPECT_EQ(g.to_vector<int8_t>(), w.to_vector<int8_t>()) << op_ << " output " << o;
      } else if (w.dtype() == DType::Float64) {
        const auto gd = g.to_vector<double>(), wd = w.to_vector<double>();
        compare_floats(std::vector<float>(gd.begin(), gd.end()),
                       std::vector<float>(wd.begin(), wd.end()), atol, rtol, o, r);
      } else if (w.dtype() == DType::String) {
        EXPECT_EQ(g.to_vector<std::string>(), w.to_vector<std::string>()) << op_ << " output " << o;
      } else {
        // Every other type (bool, int32, uint16, ..., the packed ones) must match exactly: an
        // output this harness did not compare would let a wrong kernel pass.
        const Tensor gh = g.to(Device::cpu()), wh = w.to(Device::cpu());
        const auto* gb = static_cast<const uint8_t*>(gh.raw_data());
        const auto* wb = static_cast<const uint8_t*>(wh.raw_data());
        EXPECT_TRUE(std::equal(gb, gb + gh.nbytes(), wb))
            << op_ << " output " << o << " (" << dtype_name(w.dtype()) << ") differs";
      }
    }
    return r;
  }

 private:
  onnx::AttributeProto* add_attr(const std::string& name, onnx::AttributeProto::AttributeType t) {
    attrs_.emplace_back();
    attrs_.back().set_name(name);
    attrs_.back().set_type(t);
    return &attrs_.back();
  }
  static int onnx_elem(DType d) {
    switch (d) {
      case DType::Float32: return onnx::TensorProto::FLOAT;
      case DType::Float16: return onnx::TensorProto::FLOAT16;
      case DType::BFloat16: return onnx::TensorProto::BFLOAT16;
      case DType::Float64: return onnx::TensorProto::DOUBLE;
      case DType::Int64: return onnx::TensorProto::INT64;
      case DType::Int32: return onnx::TensorProto::INT32;
      case DType::Bool: return onnx::TensorProto::BOOL;
      case DType::UInt8: return onnx::TensorProto::UINT8;
      case DType::Int8: return onnx::TensorProto::INT8;
      default: ADD_FAILURE() << "oracle.h: add this dtype to onnx_elem"; return 0;
    }
  }
  void compare_floats(const std::vector<float>& g, const std::vector<float>& w, double atol,
                      double rtol, size_t o, OracleResult& r) const {
    int reported = 0;
    for (size_t i = 0; i < w.size(); ++i) {
      const double a = g[i], b = w[i];
      if (std::isnan(b) || std::isinf(b)) {
        const bool same = std::isnan(b) ? std::isnan(a) : a == b;
        if (!same && reported++ < 5)
          ADD_FAILURE() << op_ << " output " << o << "[" << i << "]: fast " << a << ", ref " << b;
        continue;
      }
      const double err = std::fabs(a - b);
      if (!(err <= r.max_abs)) r.max_abs = std::isnan(err) ? INFINITY : err;
      if (b != 0 && err / std::fabs(b) > r.max_rel) r.max_rel = err / std::fabs(b);
      if (!(err <= atol + rtol * std::fabs(b)) && reported++ < 5)
        ADD_FAILURE() << op_ << " output " << o << "[" << i << "]: fast " << a << ", ref " << b
                      << " (|err| " << err << " > " << atol << " + " << rtol << " * |ref|)";
    }
  }

  std::string op_;
  int opset_;
  std::string domain_;
  std::vector<Tensor> inputs_;
  std::vector<onnx::AttributeProto> attrs_;
  int outputs_ = 1;
  int threads_ = 3;
  std::vector<std::string> providers_ = {"cpu"};
  std::string ref_op_;
  int ref_opset_ = 0;
};

}  // namespace polyinfer::test
