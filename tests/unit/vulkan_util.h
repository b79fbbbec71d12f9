// Skips a test when the Vulkan provider is not built in or not usable here, with the probe's
// reason (the text `polyinfer providers` and `doctor` give).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "runtime/provider.h"

namespace polyinfer::test {

// "" when vulkan can run here; otherwise why not.
inline std::string vulkan_unusable() {
  const auto names = provider_names();
  if (std::find(names.begin(), names.end(), "vulkan") == names.end())
    return "the vulkan provider is not in this build (POLYINFER_VULKAN=OFF)";
  const ProviderStatus st = create_provider("vulkan")->probe();
  return st.usable ? "" : "vulkan is not usable here: " + st.reason;
}

}  // namespace polyinfer::test

#define PI_SKIP_WITHOUT_VULKAN()                                            \
  do {                                                                      \
    const std::string why = ::polyinfer::test::vulkan_unusable();           \
    if (!why.empty()) GTEST_SKIP() << why;                                  \
  } while (0)
