// Skips a test when the CUDA provider is not built in or not usable here, with the probe's
// reason (the text `polyinfer providers` and `doctor` give).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "runtime/provider.h"

namespace polyinfer::test {

inline bool cuda_built() {
  const auto names = provider_names();
  return std::find(names.begin(), names.end(), "cuda") != names.end();
}

// "" when cuda can run here; otherwise why not.
inline std::string cuda_unusable() {
  if (!cuda_built()) return "the cuda provider is not in this build (POLYINFER_CUDA=OFF)";
  const ProviderStatus st = create_provider("cuda")->probe();
  return st.usable ? "" : "cuda is not usable here: " + st.reason;
}

}  // namespace polyinfer::test

#define PI_SKIP_WITHOUT_CUDA()                                  \
  do {                                                          \
    const std::string why = ::polyinfer::test::cuda_unusable(); \
    if (!why.empty()) GTEST_SKIP() << why;                      \
  } while (0)
