// Tests that run one body on every device provider (vulkan, opencl): the fixture whose parameter
// is the provider's name and the instantiation that names each (gtest names
// "Vulkan/Fixture.Case/0", "OpenCL/Fixture.Case/0", so a filter "Vulkan*" keeps selecting the
// Vulkan runs); the skip, with the probe's reason (the text `polyinfer providers` and `doctor`
// give), when the provider is not built in or not usable here; the device's dispatch limit; and
// an operator run with constant inputs against cpu-ref (check_with_constants).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "oracle.h"
#include "polyinfer/session.h"
#include "runtime/provider.h"
#if POLYINFER_TEST_VULKAN
#include "providers/vulkan/context.h"
#endif
#if POLYINFER_TEST_OPENCL
#include "providers/opencl/context.h"
#endif

namespace polyinfer::test {

// "" when `provider` can run here; otherwise why not.
inline std::string device_unusable(const std::string& provider) {
  const auto names = provider_names();
  if (std::find(names.begin(), names.end(), provider) == names.end())
    return "the " + provider + " provider is not in this build";
  const ProviderStatus st = create_provider(provider)->probe();
  return st.usable ? "" : provider + " is not usable here: " + st.reason;
}

// Lowers the device's dispatch limit to `n` work-groups per dimension while in scope, so that a
// test reaches the kernels' loops past the last work-group with small inputs. Use after the
// skip.
class DeviceGroupLimit {
 public:
  DeviceGroupLimit(const std::string& provider, uint32_t n) : provider_(provider) { set(n); }
  ~DeviceGroupLimit() { set(0); }
  DeviceGroupLimit(const DeviceGroupLimit&) = delete;
  DeviceGroupLimit& operator=(const DeviceGroupLimit&) = delete;

 private:
  void set(uint32_t n) {
#if POLYINFER_TEST_VULKAN
    if (provider_ == "vulkan") vulkan::Context::get()->limit_groups_for_testing(n);
#endif
#if POLYINFER_TEST_OPENCL
    if (provider_ == "opencl") opencl::Context::get()->limit_groups_for_testing(n);
#endif
    (void)n;
  }
  std::string provider_;
};

// Whether `provider`'s float16 kernels run here: always on OpenCL (vload_half/vstore_half are
// core), on Vulkan with 16-bit storage (storageBuffer16BitAccess).
inline bool float16_storage(const std::string& provider) {
#if POLYINFER_TEST_VULKAN
  if (provider == "vulkan") return vulkan::Context::get()->storage16();
#endif
  return provider != "vulkan";
}

// The fixture of tests that run on each device provider: GetParam() is its name; SetUp skips
// with the reason when it cannot run here.
class DeviceTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const std::string why = device_unusable(GetParam());
    if (!why.empty()) GTEST_SKIP() << why;
  }
  const std::string& provider() const { return GetParam(); }
  bool float16_storage() const { return test::float16_storage(provider()); }
  // An oracle case for `op` run on this provider alone (strict).
  OracleOp on_device(const std::string& op, int opset = 14) const {
    return std::move(OracleOp(op, opset).providers({provider()}));
  }
};

// One operator with some inputs as initializers (constants the kernel sees at creation), the
// rest fed at run time, run on `providers` and on cpu-ref (both at optimization level 0) and
// compared as oracle.h does. The oracle's own models feed every input at run time; kernels that
// read shapes, axes or indices at creation need this. `o` carries the op and its attributes (no
// inputs); `inputs[i]` is input i (Tensor() leaves it out), a constant where `constant[i]`.
struct ConstantsResult {
  std::string provider;  // where the node ran
  std::string reason;    // why earlier providers declined ("" when none did)
};

inline ConstantsResult check_with_constants(OracleOp o, const std::vector<Tensor>& inputs,
                                            const std::vector<bool>& constant,
                                            std::vector<std::string> providers, double atol = 0,
                                            double rtol = 0, int outputs = 1) {
  for (const Tensor& t : inputs) o.input(t);
  o.outputs(outputs);
  onnx::ModelProto m;
  EXPECT_TRUE(m.ParseFromString(o.model()));
  auto* g = m.mutable_graph();
  std::map<std::string, Value> feeds;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined()) continue;
    const std::string name = "in" + std::to_string(i);
    if (i >= constant.size() || !constant[i]) {
      feeds[name] = Value(inputs[i]);
      continue;
    }
    for (int k = 0; k < g->input_size(); ++k)
      if (g->input(k).name() == name) {
        g->mutable_input()->DeleteSubrange(k, 1);
        break;
      }
    auto* t = g->add_initializer();
    t->set_name(name);
    for (int64_t d : inputs[i].shape()) t->add_dims(d);
    if (inputs[i].dtype() == DType::Float32) {
      t->set_data_type(onnx::TensorProto::FLOAT);
      for (float v : inputs[i].to_vector<float>()) t->add_float_data(v);
    } else if (inputs[i].dtype() == DType::Float16) {
      t->set_data_type(onnx::TensorProto::FLOAT16);
      for (Float16 v : inputs[i].to_vector<Float16>()) t->add_int32_data(v.bits);
    } else if (inputs[i].dtype() == DType::BFloat16) {
      t->set_data_type(onnx::TensorProto::BFLOAT16);
      for (BFloat16 v : inputs[i].to_vector<BFloat16>()) t->add_int32_data(v.bits);
    } else if (inputs[i].dtype() == DType::Int64) {
      t->set_data_type(onnx::TensorProto::INT64);
      for (int64_t v : inputs[i].to_vector<int64_t>()) t->add_int64_data(v);
    } else if (inputs[i].dtype() == DType::Bool) {
      t->set_data_type(onnx::TensorProto::BOOL);
      const bool* b = inputs[i].data<bool>();
      for (int64_t e = 0; e < inputs[i].numel(); ++e) t->add_int32_data(b[e] ? 1 : 0);
    } else {
      ADD_FAILURE() << "check_with_constants: add this dtype";
    }
  }
  const std::string bytes = m.SerializeAsString();
  SessionOptions po, ro;
  po.providers = std::move(providers);
  ro.providers = {"cpu-ref"};
  po.optimization_level = ro.optimization_level = 0;
  Session dev = Session::load_bytes(bytes.data(), bytes.size(), po);
  Session ref = Session::load_bytes(bytes.data(), bytes.size(), ro);
  ConstantsResult r;
  if (!dev.placement().nodes.empty()) r.provider = dev.placement().nodes[0].provider;
  if (!dev.placement().fallbacks.empty()) r.reason = dev.placement().fallbacks[0].reason;
  // Twice: constants kept by a kernel must serve every run.
  for (int run = 0; run < 2; ++run) {
    const std::vector<Value> got = dev.run(feeds), want = ref.run(feeds);
    EXPECT_EQ(got.size(), want.size());
    for (size_t k = 0; k < got.size() && k < want.size(); ++k) {
      const Tensor& a = got[k].tensor();
      const Tensor& b = want[k].tensor();
      EXPECT_EQ(a.shape(), b.shape()) << "output " << k;
      EXPECT_EQ(a.dtype(), b.dtype()) << "output " << k;
      if (a.shape() != b.shape() || a.dtype() != b.dtype()) continue;
      if (b.dtype() != DType::Float32 && b.dtype() != DType::Float16 &&
          b.dtype() != DType::BFloat16)
        continue;
      const auto widen = [](const Tensor& t) {
        if (t.dtype() == DType::Float32) return t.to_vector<float>();
        if (t.dtype() == DType::BFloat16) {
          const auto h = t.to_vector<BFloat16>();
          return std::vector<float>(h.begin(), h.end());
        }
        const auto h = t.to_vector<Float16>();
        return std::vector<float>(h.begin(), h.end());
      };
      const std::vector<float> av = widen(a), bv = widen(b);
      int bad = 0;
      for (size_t e = 0; e < bv.size(); ++e) {
        const bool same_nan = std::isnan(av[e]) && std::isnan(bv[e]);
        if (!same_nan && !(std::fabs(double(av[e]) - bv[e]) <= atol + rtol * std::fabs(bv[e])) &&
            bad++ < 5)
          ADD_FAILURE() << "output " << k << "[" << e << "]: " << av[e] << ", ref " << bv[e];
      }
    }
  }
  return r;
}

}  // namespace polyinfer::test

// Runs the TEST_P cases of `fixture` (a DeviceTest) on vulkan and on opencl.
#define PI_INSTANTIATE_DEVICE_TESTS(fixture)                                           \
  INSTANTIATE_TEST_SUITE_P(Vulkan, fixture, ::testing::Values(std::string("vulkan"))); \
  INSTANTIATE_TEST_SUITE_P(OpenCL, fixture, ::testing::Values(std::string("opencl")))
