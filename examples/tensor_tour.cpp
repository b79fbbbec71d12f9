// Tensors without a model: make one on the CPU, move it to a GPU, compute there with
// polyinfer::ops, bring the result back, print it and check it against the same arithmetic done
// by hand. With no usable Vulkan device it says why and does the tour on the CPU.
//
//   example_tensor_tour            # vulkan:0, or cpu when Vulkan is not usable here
//   example_tensor_tour cpu        # any device: cpu, vulkan:N, cuda:0
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "polyinfer/ops.h"
#include "polyinfer/tensor.h"

int main(int argc, char** argv) {
  using polyinfer::Device;
  using polyinfer::Tensor;
  namespace ops = polyinfer::ops;
  try {
    // x: [2, 3] on the host; w: [3, 2]; b: [2], broadcast over rows.
    const std::vector<float> xv{1, -2, 3, -4, 5, -6}, wv{0.05f, -0.1f, 0.2f, 0.025f, -0.05f, 0.1f},
        bv{0.1f, -0.2f};
    const Tensor x = Tensor::from_vector<float>({2, 3}, xv);
    const Tensor w = Tensor::from_vector<float>({3, 2}, wv);
    const Tensor b = Tensor::from_vector<float>({2}, bv);

    // Tensor::to starts the device when it is the first use of it in the process.
    Device device = Device::parse(argc > 1 ? argv[1] : "vulkan:0");
    Tensor dx, dw, db;
    try {
      dx = x.to(device);
      dw = w.to(device);
      db = b.to(device);
    } catch (const polyinfer::Error& e) {
      if (device.is_cpu()) throw;
      std::cout << device.str() << " is not usable here (" << e.what() << "); using cpu\n";
      device = Device::cpu();
      dx = x, dw = w, db = b;
    }
    std::cout << "computing on " << device.str() << "\n";

    // y = sigmoid(relu(x·w + b) + (x·w)²): every step runs on `device`; nothing comes back
    // between them.
    const Tensor xw = ops::matmul(dx, dw);
    const Tensor y = ops::sigmoid(ops::add(ops::relu(ops::add(xw, db)), ops::mul(xw, xw)));
    std::cout << "result " << y.describe() << " on " << y.device().str() << "\n";
    const std::vector<float> got = y.to(Device::cpu()).to_vector<float>();

    int wrong = 0;
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < 2; ++j) {
        float dot = 0;
        for (int k = 0; k < 3; ++k) dot += xv[i * 3 + k] * wv[k * 2 + j];
        const float want = 1.0f / (1.0f + std::exp(-(std::max(dot + bv[j], 0.0f) + dot * dot)));
        const float g = got[static_cast<size_t>(i * 2 + j)];
        std::printf("  y[%d][%d] = %.6f (by hand %.6f)\n", i, j, g, want);
        if (!(std::abs(g - want) <= 1e-5f)) ++wrong;
      }
    }
    const ops::CacheStats s = ops::cache_stats();
    std::cout << "one-node sessions built: " << s.built << ", reused: " << s.reused << "\n";
    if (wrong) {
      std::cerr << wrong << " values disagree with the arithmetic by hand\n";
      return 1;
    }
    std::cout << "ok\n";
    return 0;
  } catch (const polyinfer::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
