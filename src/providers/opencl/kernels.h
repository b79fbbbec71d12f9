// The OpenCL C programs, embedded at build time from src/providers/opencl/kernels/*.cl by
// tools/embed_opencl.cmake: no files are read at run time. The driver compiles them when a
// kernel first needs one (Context::program), and the binaries are cached on disk.
#pragma once

#include <map>
#include <string>

namespace polyinfer::opencl {

// Program name (the file's stem: "binary") -> OpenCL C source. "common" (the element type
// macros) and "activation" (the activation functions of fused kernels) are prepended to every
// other program.
const std::map<std::string, std::string>& kernel_sources();

}  // namespace polyinfer::opencl
