// What a first-time user does: see which devices are here, load a model, run it on real data,
// and check where it ran. Classifies the digits test split (examples/digits/) and prints the
// accuracy, the latency and the placement.
//
//   example_classify examples/digits/digits_cnn.onnx examples/digits/test_x.npy
//   examples/digits/test_y.npy
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>

#include "polyinfer/io.h"
#include "polyinfer/session.h"

int main(int argc, char** argv) {
  if (argc < 4) {
    std::cerr << "usage: " << argv[0] << " MODEL.onnx IMAGES.npy LABELS.npy [PROVIDERS]\n";
    return 1;
  }
  try {
    std::cout << "devices:\n";
    for (const auto& p : polyinfer::available_providers())
      std::cout << "  " << (p.usable ? "✓ " : "✗ ") << p.name << " (" << p.device << ")"
                << (p.usable ? "" : ": " + p.reason) << "\n";

    polyinfer::SessionOptions options;
    if (argc > 4) options.providers = {argv[4]};
    auto session = polyinfer::Session::load(argv[1], options);
    const auto& input = session.inputs().at(0);
    std::cout << "model: " << argv[1] << "\n  input " << input.name << " " << input.type
              << "\n  output " << session.outputs().at(0).name << " "
              << session.outputs().at(0).type << "\n";

    const polyinfer::Tensor images = polyinfer::read_npy(argv[2]);
    const polyinfer::Tensor labels = polyinfer::read_npy(argv[3]);
    const int64_t n = images.dim(0);
    if (labels.dtype() != polyinfer::DType::Int64 || labels.numel() != n) {
      std::cerr << "error: " << argv[3] << " must hold " << n << " int64 labels\n";
      return 1;
    }
    // The whole split as one batch, timed over a few runs after a warm-up.
    auto logits = session.run({{input.name, images}}).at(0).tensor();
    std::vector<double> ms;
    for (int r = 0; r < 10; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      logits = session.run({{input.name, images}}).at(0).tensor();
      ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(ms.begin(), ms.end());

    const auto scores = logits.to_vector<float>();
    const auto truth = labels.to_vector<int64_t>();
    const int64_t classes = logits.dim(1);
    int64_t correct = 0;
    for (int64_t i = 0; i < n; ++i) {
      const float* row = scores.data() + i * classes;
      correct += (std::max_element(row, row + classes) - row) == truth[i];
    }
    std::printf("accuracy: %.4f (%lld of %lld test images)\n", double(correct) / n,
                static_cast<long long>(correct), static_cast<long long>(n));
    std::printf("latency: %.3f ms median for the batch of %lld (%.1f us per image)\n",
                ms[ms.size() / 2], static_cast<long long>(n), 1000.0 * ms[ms.size() / 2] / n);
    std::cout << session.placement().summary() << "\n";
    return 0;
  } catch (const polyinfer::Error& e) {
    std::cout << std::flush;
    std::cerr << "error: " << e.what() << "\n";
    return polyinfer::exit_code(e.code());
  }
}
