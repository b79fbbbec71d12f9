// The Vulkan-only test helpers: the skip when vulkan cannot run here and the dispatch limit of the
// Vulkan context. Tests that run on every device provider use device_util.h (included here).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "device_util.h"
#include "oracle.h"
#include "polyinfer/session.h"
#include "runtime/provider.h"
#if POLYINFER_TEST_VULKAN
#include "providers/vulkan/context.h"
#endif

namespace polyinfer::test {

inline std::string vulkan_unusable() { return device_unusable("vulkan"); }

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

#define PI_SKIP_WITHOUT_VULKAN()                                  \
  do {                                                            \
    const std::string why = ::polyinfer::test::vulkan_unusable(); \
    if (!why.empty()) GTEST_SKIP() << why;                        \
  } while (0)
