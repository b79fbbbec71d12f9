// The compute shaders of the Vulkan provider, compiled to SPIR-V at build time from
// shaders/<name>.comp (glslangValidator -V --target-env vulkan1.1) and embedded by
// tools/embed_spirv.cmake: the binary reads no shader files at run time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

namespace polyinfer::vulkan {

struct Spirv {
  const uint32_t* words = nullptr;
  size_t count = 0;  // in 32-bit words
};

// Every embedded shader by name ("binary", "unary").
const std::map<std::string, Spirv>& shaders();

}  // namespace polyinfer::vulkan
