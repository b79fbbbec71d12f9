// CUDA Graph capture (SessionOptions::capture_graph; plugin/capture.cpp) on a GPU: the digits
// CNN wholly on cuda is recorded on its second run and replayed after, each replay bit for bit
// what the same kernels give run one by one, on new inputs; fp16 too; and a session split between
// cuda and cpu keeps capture off with the reason. The executor's side is checked everywhere by
// GraphCapture.* (tests/unit/graph_capture_test.cpp); these skip with the probe's reason without a
// GPU.
#include <gtest/gtest.h>

#include <cmath>

#include "cuda_util.h"
#include "model_builder.h"
#include "oracle.h"
#include "polyinfer/session.h"

namespace polyinfer {
namespace {

const std::string kDigits = std::string(POLYINFER_SOURCE_DIR) + "/examples/digits/digits_cnn.onnx";

Session load(std::vector<std::string> providers, Precision p = Precision::Fp32,
             bool capture = true) {
  SessionOptions o;
  o.providers = std::move(providers);
  o.capture_graph = capture;
  o.precision = p;
  return Session::load(kDigits, o);
}

double max_diff(const Tensor& a, const Tensor& b) {
  const std::vector<float> x = a.to(Device::cpu()).to_vector<float>();
  const std::vector<float> y = b.to(Device::cpu()).to_vector<float>();
  EXPECT_EQ(x.size(), y.size());
  double d = 0;
  for (size_t i = 0; i < x.size() && i < y.size(); ++i)
    d = std::max(d, std::fabs(double(x[i]) - y[i]));
  return d;
}

// A replay runs the recorded kernels on the same memory: its outputs are bit for bit those of the
// same kernels run one by one (a session without capture), for every new input.
TEST(CudaCapture, ReplaysMatchTheKernelsRunOneByOne) {
  PI_SKIP_WITHOUT_CUDA();
  for (const Precision p : {Precision::Fp32, Precision::Fp16}) {
    Session captured = load({"cuda"}, p);
    Session plain = load({"cuda"}, p, /*capture=*/false);
    Session cpu = load({"cpu"}, Precision::Fp32, false);
    const std::string in = captured.inputs().at(0).name;
    Shape shape = captured.inputs().at(0).shape;
    for (int64_t& d : shape) d = d < 0 ? 3 : d;  // the batch dimension is named
    Tensor first, first_want;
    for (uint32_t seed = 1; seed <= 5; ++seed) {
      const Tensor x = test::random_tensor(shape, seed, 0.f, 1.f);
      const auto got = captured.run({{in, Value(x)}});
      const auto want = plain.run({{in, Value(x)}});
      EXPECT_EQ(max_diff(got[0].tensor(), want[0].tensor()), 0.0)
          << precision_name(p) << " run " << seed;
      if (seed == 1) {
        first = got[0].tensor();
        first_want = want[0].tensor();
        // And the kernels themselves against the cpu (float32: summation order; float16: a few
        // ulps of logits below ~20).
        EXPECT_LT(max_diff(want[0].tensor(), cpu.run({{in, Value(x)}})[0].tensor()),
                  p == Precision::Fp32 ? 1e-4 : 5e-2);
      } else {
        EXPECT_EQ(captured.placement().capture.rfind("replaying ", 0), 0u)
            << captured.placement().capture;
      }
    }
    // Outputs handed out are copies: the later replays left the first one alone.
    EXPECT_EQ(max_diff(first, first_want), 0.0) << precision_name(p);
  }
}

TEST(CudaCapture, ASessionSplitWithTheCpuSaysWhyItIsOff) {
  PI_SKIP_WITHOUT_CUDA();
  // Sign has no CUDA kernel: it runs on the cpu.
  test::ModelBuilder b;
  b.input("x", {3}).output("y", {3});
  b.node("Relu", {"x"}, {"r"}, "relu").node("Sign", {"r"}, {"y"}, "sign");
  const std::string bytes = b.bytes();
  SessionOptions o;
  o.providers = {"cuda", "cpu"};
  o.capture_graph = true;
  Session s = Session::load_bytes(bytes.data(), bytes.size(), o);
  EXPECT_EQ(s.placement().capture, "off: the nodes run on more than one provider (cpu 1, cuda 1)");
  for (int run = 0; run < 3; ++run) {
    const auto out = s.run({{"x", Value(Tensor::from_vector<float>({3}, {-1.f, 2.f, 0.f}))}});
    EXPECT_EQ(out[0].tensor().to(Device::cpu()).to_vector<float>(),
              (std::vector<float>{0.f, 1.f, 0.f}));
  }
}

}  // namespace
}  // namespace polyinfer
