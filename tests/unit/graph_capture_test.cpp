// Graph capture (SessionOptions::capture_graph, runtime/executor.h) on a fake provider whose
// kernels queue their work on a fake stream, as CUDA's do: run() only enqueues a closure over
// the tensors' addresses; the stream runs it at once, or records it while a capture is open.
// Replaying the recording is then exactly what a CUDA Graph does (the same work on the same
// memory), so these tests check the executor's side on any machine: the second run is recorded,
// later runs refill the recorded inputs, replay, and hand out copies of the outputs; other
// shapes run as usual; a kernel that waits for the device mid-run, a second provider, or
// profiling keep capture off, and say why.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>

#include "core/device_registry.h"
#include "model_builder.h"
#include "polyinfer/session.h"
#include "runtime/provider.h"

namespace polyinfer {
namespace {

const Device kQueueDevice{DeviceKind::Custom, 9};

// The fake device's one stream.
struct Stream {
  bool recording = false;
  std::string broken;  // why the open recording is unusable
  std::vector<std::function<void()>> recorded;
  int host_calls = 0;  // kernel run() calls (a replay makes none)

  void enqueue(std::function<void()> f) {
    if (recording) recorded.push_back(std::move(f));
    else
      f();
  }
  // Like cudaStreamSynchronize during a capture: the recording becomes unusable.
  void synchronize() {
    if (recording && broken.empty()) broken = "the stream was synchronized while recording";
  }
};
Stream& stream() {
  static Stream s;
  return s;
}

class QueueCapture final : public Capture {
 public:
  QueueCapture() {
    stream().recording = true;
    stream().broken.clear();
    stream().recorded.clear();
  }
  ~QueueCapture() override { stream().recording = false; }
  void end() override {
    stream().recording = false;
    PI_CHECK(stream().broken.empty(), Internal, "fake stream: ", stream().broken);
    work_ = std::move(stream().recorded);
  }
  void replay() override {
    for (const auto& f : work_) f();
  }
  size_t size() const override { return work_.size(); }

 private:
  std::vector<std::function<void()>> work_;
};

class QueueAllocator final : public Allocator {
 public:
  Device device() const override { return kQueueDevice; }
  void* allocate(size_t bytes) override { return std::malloc(bytes ? bytes : 1); }
  void deallocate(void* p, size_t) override { std::free(p); }
};

void copy_bytes(const void* src, void* dst, size_t n) { std::memcpy(dst, src, n); }

class QueueProvider final : public RegistryProvider {
 public:
  std::string name() const override { return "queued"; }
  Device device() const override { return kQueueDevice; }
  ProviderStatus probe() const override { return {true, ""}; }
  std::shared_ptr<Allocator> allocator() const override { return alloc_; }
  void synchronize() const override { stream().synchronize(); }
  std::unique_ptr<Capture> begin_capture() const override {
    return std::make_unique<QueueCapture>();
  }

 private:
  std::shared_ptr<Allocator> alloc_ = std::make_shared<QueueAllocator>();
};

// y = a + b (same shapes) or y = relu(a), queued.
template <bool IsAdd> class QueuedKernel final : public Kernel {
 public:
  explicit QueuedKernel(const KernelInfo&) {}
  void run(KernelContext& ctx) override {
    ++stream().host_calls;
    const Tensor& a = ctx.input(0);
    PI_CHECK(a.device() == kQueueDevice, Internal, "input on ", a.device().str());
    Tensor& y = ctx.output(0, DType::Float32, a.shape());
    const float* pa = a.data<float>();
    const float* pb = IsAdd ? ctx.input(1).data<float>() : nullptr;
    float* py = y.data<float>();
    const int64_t n = y.numel();
    stream().enqueue([pa, pb, py, n] {
      for (int64_t i = 0; i < n; ++i) py[i] = IsAdd ? pa[i] + pb[i] : std::max(pa[i], 0.0f);
    });
  }
};

// y = x, but run() refuses an input whose first element is NaN (an error of the run itself,
// found on the host, as a kernel checking indices would).
class CheckedCopy final : public Kernel {
 public:
  explicit CheckedCopy(const KernelInfo&) {}
  void run(KernelContext& ctx) override {
    ++stream().host_calls;
    const Tensor& a = ctx.input(0);
    PI_CHECK(a.numel() == 0 || !std::isnan(a.data<float>()[0]), InvalidArgument, ctx.node().label(),
             ": NaN input");
    Tensor& y = ctx.output(0, DType::Float32, a.shape());
    const float* pa = a.data<float>();
    float* py = y.data<float>();
    const int64_t n = y.numel();
    stream().enqueue([pa, py, n] { std::copy(pa, pa + n, py); });
  }
};

// |x|, but it waits for the stream first (as a kernel that reads the device back would).
class WaitingAbs final : public Kernel {
 public:
  explicit WaitingAbs(const KernelInfo&) {}
  void run(KernelContext& ctx) override {
    ++stream().host_calls;
    stream().synchronize();
    const Tensor& a = ctx.input(0);
    Tensor& y = ctx.output(0, DType::Float32, a.shape());
    const float* pa = a.data<float>();
    float* py = y.data<float>();
    const int64_t n = y.numel();
    stream().enqueue([pa, py, n] {
      for (int64_t i = 0; i < n; ++i) py[i] = std::fabs(pa[i]);
    });
  }
};

PI_REGISTER_KERNEL("queued", "", Add, 1, 99, QueuedKernel<true>);
PI_REGISTER_KERNEL("queued", "", Relu, 1, 99, QueuedKernel<false>);
PI_REGISTER_KERNEL("queued", "", Abs, 1, 99, WaitingAbs);
PI_REGISTER_KERNEL("queued", "", Identity, 1, 99, CheckedCopy);
const bool registered = register_provider("queued", [] {
  register_device(kQueueDevice,
                  {std::make_shared<QueueAllocator>(), &copy_bytes, &copy_bytes, &copy_bytes});
  return std::unique_ptr<Provider>(new QueueProvider());
});

std::vector<float> weights(int64_t n) {
  std::vector<float> w(static_cast<size_t>(n));
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.5f * static_cast<float>(i) - 1.0f;
  return w;
}

// y = relu(x + w), z = y + x; x of `n` elements (-1: a named dimension, and w an input too).
std::string model(int64_t n, bool waiting = false) {
  test::ModelBuilder b;
  b.input("x", {n}).output("y", {n}).output("z", {n});
  if (n < 0) b.input("w", {n});
  else
    b.initializer("w", {n}, weights(n));
  b.node("Add", {"x", "w"}, {"s"}, "add").node(waiting ? "Abs" : "Relu", {"s"}, {"y"}, "act");
  b.node("Add", {"y", "x"}, {"z"}, "add2");
  return b.bytes();
}

Session load(const std::string& bytes, std::vector<std::string> providers = {"queued"},
             bool capture = true, bool profile = false) {
  SessionOptions o;
  o.providers = std::move(providers);
  o.optimization_level = 0;
  o.capture_graph = capture;
  o.profile = profile;
  return Session::load_bytes(bytes.data(), bytes.size(), o);
}

std::vector<float> values(int64_t n, float seed) {
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(seed + 1.7f * static_cast<float>(i)) * 3;
  return v;
}

// The two outputs as the model defines them, computed here.
void expect_outputs(const std::vector<Value>& out, const std::vector<float>& x,
                    const std::vector<float>& w, bool waiting = false) {
  ASSERT_EQ(out.size(), 2u);
  const std::vector<float> y = out[0].tensor().to(Device::cpu()).to_vector<float>();
  const std::vector<float> z = out[1].tensor().to(Device::cpu()).to_vector<float>();
  ASSERT_EQ(y.size(), x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const float s = x[i] + w[i];
    const float want = waiting ? std::fabs(s) : std::max(s, 0.0f);
    EXPECT_EQ(y[i], want) << i;
    EXPECT_EQ(z[i], want + x[i]) << i;
  }
}

TEST(GraphCapture, RecordsTheSecondRunAndReplaysItWithNewInputs) {
  Session s = load(model(7));
  EXPECT_EQ(s.placement().capture, "pending (records a run with the previous run's input shapes)");
  const std::vector<float> w = weights(7);
  auto run = [&](float seed) {
    const std::vector<float> x = values(7, seed);
    return std::make_pair(s.run({{"x", Value(Tensor::from_vector<float>({7}, x))}}), x);
  };
  auto [out1, x1] = run(1);
  expect_outputs(out1, x1, w);
  stream().host_calls = 0;
  auto [out2, x2] = run(2);  // recorded, then replayed once
  expect_outputs(out2, x2, w);
  EXPECT_EQ(stream().host_calls, 3);
  EXPECT_EQ(s.placement().capture, "replaying 3 recorded work items");
  EXPECT_NE(s.placement().summary().find("graph capture replaying 3"), std::string::npos);
  auto [out3, x3] = run(3);
  expect_outputs(out3, x3, w);
  for (float seed = 4; seed < 6; ++seed) {
    auto [out, x] = run(seed);
    expect_outputs(out, x, w);
  }
  EXPECT_EQ(stream().host_calls, 3) << "a replay called a kernel's run()";
  // The outputs handed out are copies: later replays leave them alone.
  expect_outputs(out2, x2, w);
  expect_outputs(out3, x3, w);
}

// The recording waits for two runs of one shape: a kernel's first run at a shape may need the
// host (cuDNN's timing, Resize's tables), which a recording cannot hold.
TEST(GraphCapture, RecordsOnlyARunOfThePreviousRunsShapes) {
  Session s = load(model(-1));
  auto feeds = [](int64_t n, float seed) {
    return std::map<std::string, Value>{
        {"x", Value(Tensor::from_vector<float>({n}, values(n, seed)))},
        {"w", Value(Tensor::from_vector<float>({n}, weights(n)))}};
  };
  stream().host_calls = 0;
  expect_outputs(s.run(feeds(4, 1)), values(4, 1), weights(4));
  expect_outputs(s.run(feeds(6, 2)), values(6, 2), weights(6));  // a new shape: as usual
  EXPECT_EQ(s.placement().capture.rfind("pending", 0), 0u) << s.placement().capture;
  expect_outputs(s.run(feeds(6, 3)), values(6, 3), weights(6));  // recorded
  EXPECT_EQ(s.placement().capture, "replaying 3 recorded work items");
  EXPECT_EQ(stream().host_calls, 9);
  expect_outputs(s.run(feeds(6, 4)), values(6, 4), weights(6));  // replayed
  EXPECT_EQ(stream().host_calls, 9);
}

// An error of the run itself during the recording (a bad input) is the caller's: capture stays
// wanted and records a later good run.
TEST(GraphCapture, AnErrorOfTheRunItselfIsReportedAndCaptureStays) {
  test::ModelBuilder b;
  b.input("x", {3}).output("y", {3});
  b.node("Identity", {"x"}, {"c"}, "checked").node("Relu", {"c"}, {"y"}, "relu");
  const std::string bytes = b.bytes();
  Session s = load(bytes);
  auto run = [&](std::vector<float> x) {
    return s.run({{"x", Value(Tensor::from_vector<float>({3}, x))}})[0]
        .tensor()
        .to(Device::cpu())
        .to_vector<float>();
  };
  EXPECT_EQ(run({-1, 2, 3}), (std::vector<float>{0, 2, 3}));
  try {
    run({NAN, 2, 3});  // would be recorded: same shape
    ADD_FAILURE() << "a NaN input ran";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("NaN input"), std::string::npos) << e.what();
  }
  EXPECT_EQ(s.placement().capture.rfind("pending", 0), 0u) << s.placement().capture;
  EXPECT_FALSE(stream().recording);
  EXPECT_EQ(run({4, -5, 6}), (std::vector<float>{4, 0, 6}));  // recorded
  EXPECT_EQ(s.placement().capture, "replaying 2 recorded work items");
  EXPECT_EQ(run({-7, 8, 9}), (std::vector<float>{0, 8, 9}));  // replayed
}

// Inputs already on the provider's device are copied into the kept buffers on the device.
TEST(GraphCapture, InputsAlreadyOnTheDevice) {
  Session s = load(model(7));
  const std::vector<float> w = weights(7);
  for (float seed = 1; seed < 5; ++seed) {
    const std::vector<float> x = values(7, seed);
    const Tensor on_device = Tensor::from_vector<float>({7}, x).to(kQueueDevice);
    expect_outputs(s.run({{"x", Value(on_device)}}), x, w);
  }
  EXPECT_EQ(s.placement().capture, "replaying 3 recorded work items");
  EXPECT_EQ(s.placement().device_copies, 0);
}

TEST(GraphCapture, InputsOfOtherShapesRunAsUsual) {
  Session s = load(model(-1));
  auto feeds = [](int64_t n, float seed) {
    return std::map<std::string, Value>{
        {"x", Value(Tensor::from_vector<float>({n}, values(n, seed)))},
        {"w", Value(Tensor::from_vector<float>({n}, weights(n)))}};
  };
  s.run(feeds(4, 1));
  s.run(feeds(4, 2));  // recorded
  stream().host_calls = 0;
  const std::vector<Value> other = s.run(feeds(6, 3));
  expect_outputs(other, values(6, 3), weights(6));
  EXPECT_EQ(stream().host_calls, 3);  // another shape: the kernels ran
  expect_outputs(s.run(feeds(4, 4)), values(4, 4), weights(4));
  EXPECT_EQ(stream().host_calls, 3);  // the recorded shape again: replayed
  EXPECT_EQ(s.placement().capture, "replaying 3 recorded work items");
  // The other run's memory came from the session's pool: none of it may be the recording's,
  // or the replay would have written over these outputs.
  expect_outputs(other, values(6, 3), weights(6));
}

TEST(GraphCapture, AKernelThatWaitsForTheDeviceTurnsItOff) {
  Session s = load(model(7, /*waiting=*/true));
  const std::vector<float> w = weights(7);
  for (float seed = 1; seed < 4; ++seed) {
    const std::vector<float> x = values(7, seed);
    expect_outputs(s.run({{"x", Value(Tensor::from_vector<float>({7}, x))}}), x, w, true);
  }
  EXPECT_EQ(s.placement().capture.rfind("off: the run could not be recorded: ", 0), 0u)
      << s.placement().capture;
  EXPECT_NE(s.placement().capture.find("synchronized while recording"), std::string::npos)
      << s.placement().capture;
  EXPECT_FALSE(stream().recording);
}

TEST(GraphCapture, NodesOnTwoProvidersKeepItOff) {
  // Neg has no queued kernel: it runs on cpu.
  test::ModelBuilder b;
  b.input("x", {3}).output("y", {3});
  b.node("Relu", {"x"}, {"r"}, "relu").node("Neg", {"r"}, {"y"}, "neg");
  const std::string bytes = b.bytes();
  Session s = load(bytes, {"queued", "cpu"});
  EXPECT_EQ(s.placement().capture,
            "off: the nodes run on more than one provider (cpu 1, queued 1)");
  const auto out = s.run({{"x", Value(Tensor::from_vector<float>({3}, {-1, 2, -3}))}});
  EXPECT_EQ(out[0].tensor().to_vector<float>(), (std::vector<float>{0, -2, 0}));
}

TEST(GraphCapture, OffUnlessAskedAndWhileProfiling) {
  Session plain = load(model(7), {"queued"}, /*capture=*/false);
  EXPECT_EQ(plain.placement().capture, "");
  EXPECT_EQ(plain.placement().summary().find("capture"), std::string::npos);
  Session profiled = load(model(7), {"queued"}, true, /*profile=*/true);
  const std::vector<float> x = values(7, 1);
  for (int run = 0; run < 3; ++run)
    expect_outputs(profiled.run({{"x", Value(Tensor::from_vector<float>({7}, x))}}), x, weights(7));
  EXPECT_EQ(profiled.placement().capture, "off while profiling (each kernel is timed alone)");
}

}  // namespace
}  // namespace polyinfer
