// The CUDA provider as a whole, on any machine: how the plugin is found and loaded, the one
// reason `providers`, `run` and `doctor` give when CUDA is unusable (and that placement honours
// it: strict failure, --allow-missing skips with the reason), and — with a GPU — its listing,
// Tensor::to() round trips and the caching allocator.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <set>

#include "cuda_util.h"
#include "hw/report.h"
#include "hw/system.h"
#include "model_builder.h"
#include "oracle.h"
#include "polyinfer/session.h"
#include "providers/cuda/loader.h"

// The plugin this build made (CMake sets it when POLYINFER_CUDA is ON); "" otherwise.
#ifndef POLYINFER_CUDA_PLUGIN_PATH
#define POLYINFER_CUDA_PLUGIN_PATH ""
#endif

namespace polyinfer {
namespace {

const Device kCuda{DeviceKind::CUDA, 0};

bool file_exists(const std::string& p) {
  struct stat st {};
  return stat(p.c_str(), &st) == 0;
}

// ---- loading (no GPU needed) ----

TEST(CudaLoader, MissingPluginSaysWhichFileAndWhy) {
  const cuda::PluginLoad l = cuda::load_plugin("/nonexistent/libpolyinfer_cuda.so");
  EXPECT_EQ(l.api, nullptr);
  EXPECT_NE(l.error.find("/nonexistent/libpolyinfer_cuda.so does not load ("), std::string::npos)
      << l.error;
  EXPECT_NE(l.error.find("No such file"), std::string::npos) << l.error;
}

TEST(CudaLoader, ALibraryWithoutTheEntryPointIsRefused) {
  const cuda::PluginLoad l = cuda::load_plugin("libm.so.6");
  EXPECT_EQ(l.api, nullptr);
  EXPECT_NE(l.error.find("is from another polyinfer build"), std::string::npos) << l.error;
}

TEST(CudaLoader, PluginPathIsBesideLibpolyinfer) {
  const std::string p = cuda::default_plugin_path();
  ASSERT_GE(p.size(), std::string("/libpolyinfer_cuda.so").size());
  EXPECT_EQ(p.substr(p.rfind('/')), "/libpolyinfer_cuda.so") << p;
  if (std::string(POLYINFER_CUDA_PLUGIN_PATH).empty()) return;
  EXPECT_EQ(p, POLYINFER_CUDA_PLUGIN_PATH);
  EXPECT_TRUE(file_exists(p)) << p;
}

// The verdict's order: the stack check's text unchanged, then the plugin, then its init().
struct FakePlugin {
  static inline std::string init_answer;
  static inline int init_calls = 0;
  static cuda::CudaPluginApi api() {
    cuda::CudaPluginApi a;
    a.init = [] {
      ++init_calls;
      return init_answer;
    };
    a.describe = [] { return std::string("fake"); };
    a.synchronize = [] {};
    a.release_memory = [] { return size_t{0}; };
    return a;
  }
};

TEST(CudaLoader, StatusGivesTheFirstFailureInOrder) {
  const cuda::CudaPluginApi api = FakePlugin::api();
  hw::StackCheck bad_stack;
  bad_stack.reason =
      "no NVIDIA driver (libcuda.so.1 does not load) and no NVIDIA GPU on the PCI bus";
  hw::StackCheck good_stack;
  good_stack.usable = true;
  cuda::PluginLoad loaded{&api, ""};
  cuda::PluginLoad missing{nullptr, "the CUDA provider's plugin x does not load (y)"};

  FakePlugin::init_calls = 0;
  FakePlugin::init_answer = "";
  ProviderStatus st = cuda::cuda_status(bad_stack, loaded);
  EXPECT_FALSE(st.usable);
  EXPECT_EQ(st.reason, bad_stack.reason);
  EXPECT_EQ(FakePlugin::init_calls, 0) << "init() must not touch a driver the stack check refused";

  st = cuda::cuda_status(good_stack, missing);
  EXPECT_FALSE(st.usable);
  EXPECT_EQ(st.reason, missing.error);

  FakePlugin::init_answer = "cudaGetDeviceCount failed: cudaErrorNoDevice";
  st = cuda::cuda_status(good_stack, loaded);
  EXPECT_FALSE(st.usable);
  EXPECT_EQ(st.reason, FakePlugin::init_answer);

  FakePlugin::init_answer = "";
  st = cuda::cuda_status(good_stack, loaded);
  EXPECT_TRUE(st.usable);
  EXPECT_EQ(st.reason, "");
}

// The real plugin loads here (it and its CUDA libraries are on this machine), and its own device
// setup tells why it cannot run when there is no GPU.
TEST(CudaPlugin, LoadsAndItsInitAgreesWithTheStackCheck) {
  const std::string path = POLYINFER_CUDA_PLUGIN_PATH;
  if (path.empty()) GTEST_SKIP() << "the cuda provider is not in this build (POLYINFER_CUDA=OFF)";
  const cuda::PluginLoad l = cuda::load_plugin(path);
  ASSERT_NE(l.api, nullptr) << l.error;
  const hw::StackCheck stack =
      hw::check_cuda_stack(hw::probe_nvidia(hw::system_files(), hw::system_loader()));
  const std::string why = l.api->init();
  if (stack.usable) {
    EXPECT_EQ(why, "") << "doctor's stack check passed but the plugin cannot open the GPU";
  } else {
    // No usable GPU: the plugin's own first CUDA call must fail too, and say so.
    EXPECT_NE(why, "") << "stack check: " << stack.reason;
    EXPECT_NE(why.find("failed: cudaError"), std::string::npos) << why;
    EXPECT_EQ(l.api->init(), why) << "init() answers once, then repeats itself";
  }
}

// ---- the provider (no GPU needed for the unusable half) ----

Session load(const test::ModelBuilder& b, std::vector<std::string> providers,
             bool allow_missing = false) {
  const std::string bytes = b.bytes();
  SessionOptions o;
  o.providers = std::move(providers);
  o.optimization_level = 0;
  o.allow_missing = allow_missing;
  return Session::load_bytes(bytes.data(), bytes.size(), o);
}

test::ModelBuilder relu_model() {
  test::ModelBuilder b(17);
  b.input("x", {2, 5}).output("y", {2, 5});
  b.node("Relu", {"x"}, {"y"}, "relu");
  return b;
}

TEST(CudaProvider, ReasonIsDoctorsStackCheckWhenTheStackFails) {
  if (!test::cuda_built()) GTEST_SKIP() << "the cuda provider is not in this build";
  const hw::StackCheck stack =
      hw::check_cuda_stack(hw::probe_nvidia(hw::system_files(), hw::system_loader()));
  const ProviderStatus st = create_provider("cuda")->probe();
  EXPECT_EQ(st.usable, st.reason.empty()) << st.reason;
  if (!stack.usable) {
    EXPECT_FALSE(st.usable);
    EXPECT_EQ(st.reason, stack.reason);
  }
}

// The plugin's op files register their kernels when it loads, GPU or not: the listing is the
// same everywhere, and a kernel that fails to register shows here, not only on a GPU.
TEST(CudaProvider, ListsThePluginsKernelsWithoutAGpu) {
  if (!test::cuda_built()) GTEST_SKIP() << "the cuda provider is not in this build";
  std::set<std::string> ops;
  for (const KernelDef* k : create_provider("cuda")->kernels()) {
    EXPECT_EQ(k->provider, "cuda");
    ops.insert((k->domain.empty() ? "" : k->domain + ".") + k->op_type);
  }
  const std::set<std::string> want = {
      "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Relu", "LeakyRelu", "Sigmoid", "Tanh",
      "Exp", "Log", "Neg", "Abs", "Sqrt", "Reciprocal", "Erf", "Softmax", "LogSoftmax", "MatMul",
      "Gemm", "ai.polyinfer.FusedGemm", "ai.polyinfer.FusedMatMul", "HardSigmoid", "HardSwish",
      "Gelu", "ai.polyinfer.Gelu",
      // The second slice: cuDNN convolutions, pooling, normalizations, layout, reductions.
      "Conv", "ai.polyinfer.FusedConv", "MaxPool", "AveragePool", "GlobalAveragePool",
      "GlobalMaxPool", "LayerNormalization", "ai.polyinfer.LayerNormalization",
      "BatchNormalization", "ReduceSum", "ReduceMean", "Transpose", "Slice", "Split", "Concat",
      "Gather", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Resize", "Expand",
      // The third slice: the precision borders of fp16/bf16 sessions, and more coverage.
      "Cast", "Pad", "Where", "ReduceMax", "ReduceMin",
      // The fourth slice: an int8 QDQ model's operators after the optimizer.
      "QuantizeLinear", "DequantizeLinear", "QLinearConv", "QLinearMatMul",
      "ai.polyinfer.QLinearConvAdd", "ai.polyinfer.QLinearGemm", "ai.polyinfer.QLinearAdd"};
  EXPECT_EQ(ops, want);
}

TEST(CudaProvider, UnusableIsAnErrorWithTheReasonUnlessAllowedMissing) {
  if (!test::cuda_built()) GTEST_SKIP() << "the cuda provider is not in this build";
  const ProviderStatus st = create_provider("cuda")->probe();
  if (st.usable) GTEST_SKIP() << "cuda is usable here: this test is for machines without it";
  for (const auto& list : {std::vector<std::string>{"cuda"}, {"cuda", "cpu"}}) {
    try {
      load(relu_model(), list);
      ADD_FAILURE() << "a session with an unusable cuda was created";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::ProviderUnavailable);
      EXPECT_NE(std::string(e.what()).find(st.reason), std::string::npos) << e.what();
    }
  }
  Session s = load(relu_model(), {"cuda", "cpu"}, /*allow_missing=*/true);
  ASSERT_EQ(s.placement().skipped.size(), 1u);
  EXPECT_EQ(s.placement().skipped[0].provider, "cuda");
  EXPECT_EQ(s.placement().skipped[0].reason, st.reason);
  const auto out =
      s.run({{"x", Tensor::from_vector<float>({2, 5}, {-1, 2, -3, 4, -5, 6, -7, 8, -9, 0})}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].tensor().to_vector<float>(), (std::vector<float>{0, 2, 0, 4, 0, 6, 0, 8, 0, 0}));
  // Its allocator and kernels refuse too, with the same reason.
  try {
    create_provider("cuda")->allocator();
    ADD_FAILURE() << "allocator() of an unusable cuda";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(st.reason), std::string::npos) << e.what();
  }
}

TEST(CudaProvider, TensorToCudaWithoutAGpuGivesTheReason) {
  if (!test::cuda_built()) GTEST_SKIP() << "the cuda provider is not in this build";
  const ProviderStatus st = create_provider("cuda")->probe();
  if (st.usable) GTEST_SKIP() << "cuda is usable here";
  try {
    Tensor::from_vector<float>({2}, {1, 2}).to(kCuda);
    ADD_FAILURE() << "a tensor went to an unusable cuda";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::ProviderUnavailable);
    EXPECT_NE(std::string(e.what()).find("device cuda:0 is not available: " + st.reason),
              std::string::npos)
        << e.what();
  }
}

// "cuda:0" is "cuda" under its written name (the runtime's name:N parsing, shared with vulkan);
// the plugin drives device 0 only, so another index is refused, here and through Tensor::to.
TEST(CudaProvider, DeviceIndexZeroOnly) {
  if (!test::cuda_built()) GTEST_SKIP() << "the cuda provider is not in this build";
  auto p = create_provider("cuda:0");
  EXPECT_EQ(p->name(), "cuda:0");
  EXPECT_EQ(p->device(), (Device{DeviceKind::CUDA, 0}));
  EXPECT_EQ(p->kernels().size(), create_provider("cuda")->kernels().size());
  try {
    create_provider("cuda:1");
    FAIL() << "cuda:1 was created";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("device 0 only"), std::string::npos) << e.what();
  }
  try {
    Tensor::from_vector<float>({1}, {1}).to(Device{DeviceKind::CUDA, 1});
    FAIL() << "a tensor went to cuda:1";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("device 0 only"), std::string::npos) << e.what();
  }
}

TEST(CudaProvider, ReleasingWithoutAGpuFreesNothing) {
  if (!test::cuda_built()) GTEST_SKIP() << "the cuda provider is not in this build";
  if (create_provider("cuda")->probe().usable) GTEST_SKIP() << "cuda is usable here";
  EXPECT_EQ(create_provider("cuda")->release_memory(), 0u);
  EXPECT_EQ(release_cached_device_memory(), 0u);
}

TEST(CudaProvider, AutoLeavesAnUnusableCudaOutAndSaysWhy) {
  if (!test::cuda_built()) GTEST_SKIP() << "the cuda provider is not in this build";
  const ProviderStatus st = create_provider("cuda")->probe();
  if (st.usable) GTEST_SKIP() << "cuda is usable here: this test is for machines without it";
  Session s = load(relu_model(), {"auto"});
  EXPECT_NE(s.placement().auto_choice.find("cuda"), std::string::npos) << s.placement().auto_choice;
  for (const auto& n : s.placement().nodes) EXPECT_NE(n.provider, "cuda");
}

// ---- with a GPU ----

TEST(CudaProvider, ListedWithItsDeviceAndKernels) {
  PI_SKIP_WITHOUT_CUDA();
  auto p = create_provider("cuda");
  EXPECT_EQ(p->device(), kCuda);
  EXPECT_NE(p->describe(), "");
  EXPECT_GE(p->kernels().size(), 1u);
}

TEST(CudaProvider, TensorRoundTripAcrossStagingChunks) {
  PI_SKIP_WITHOUT_CUDA();
  // 3 * 1M + 7 floats: more than one 8 MiB staging chunk, with a ragged tail.
  std::vector<float> v((size_t{3} << 20) + 7);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 10007) * 0.25f - 9.0f;
  const Tensor host = Tensor::from_vector<float>({static_cast<int64_t>(v.size())}, v);
  const Tensor dev = host.to(kCuda);
  EXPECT_EQ(dev.device(), kCuda);
  EXPECT_EQ(dev.to_vector<float>(), v);
  const Tensor copy = dev.clone();
  EXPECT_EQ(copy.device(), kCuda);
  EXPECT_EQ(copy.to_vector<float>(), v);
  const Tensor i64 = Tensor::from_vector<int64_t>({3}, {1, -2, 3}).to(kCuda);
  EXPECT_EQ(i64.to_vector<int64_t>(), (std::vector<int64_t>{1, -2, 3}));
}

TEST(CudaProvider, MemoryReturnsToThePoolAndIsReleasedOnRequest) {
  PI_SKIP_WITHOUT_CUDA();
  release_cached_device_memory();
  {
    Session s = load(relu_model(), {"cuda"});
    s.run({{"x", test::random_tensor({2, 5})}});
  }
  // The session is gone: what it held is cached, not freed, until asked (the public call goes
  // through every provider's release_memory()).
  EXPECT_GT(release_cached_device_memory(), 0u);
  EXPECT_EQ(release_cached_device_memory(), 0u);
}

}  // namespace
}  // namespace polyinfer
