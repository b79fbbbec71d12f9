// Skips a test when the Vulkan provider is not built in or not usable here, with the probe's
// reason (the text `polyinfer providers` and `doctor` give).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "runtime/provider.h"
#if POLYINFER_TEST_VULKAN
#include "providers/vulkan/context.h"
#endif

namespace polyinfer::test {

// "" when vulkan can run here; otherwise why not.
inline std::string vulkan_unusable() {
  const auto names = provider_names();
  if (std::find(names.begin(), names.end(), "vulkan") == names.end())
    return "the vulkan provider is not in this build (POLYINFER_VULKAN=OFF)";
  const ProviderStatus st = create_provider("vulkan")->probe();
  return st.usable ? "" : "vulkan is not usable here: " + st.reason;
}

// Lowers the Vulkan dispatch limit to `n` workgroups per dimension while in scope, so that a
// test reaches the shaders' loops past the last workgroup with small inputs (65536 workgroups
// take seconds on llvmpipe). Use after PI_SKIP_WITHOUT_VULKAN.
class ScopedGroupLimit {
 public:
  explicit ScopedGroupLimit(uint32_t n) {
#if POLYINFER_TEST_VULKAN
    vulkan::Context::get()->limit_groups_for_testing(n);
#else
    (void)n;
#endif
  }
  ~ScopedGroupLimit() {
#if POLYINFER_TEST_VULKAN
    vulkan::Context::get()->limit_groups_for_testing(0);
#endif
  }
  ScopedGroupLimit(const ScopedGroupLimit&) = delete;
  ScopedGroupLimit& operator=(const ScopedGroupLimit&) = delete;
};

}  // namespace polyinfer::test

#define PI_SKIP_WITHOUT_VULKAN()                                            \
  do {                                                                      \
    const std::string why = ::polyinfer::test::vulkan_unusable();           \
    if (!why.empty()) GTEST_SKIP() << why;                                  \
  } while (0)
