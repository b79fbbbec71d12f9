// CUDA Graph capture of the plugin's stream (Provider::begin_capture, runtime/provider.h).
#pragma once

#include <memory>

#include "runtime/provider.h"

namespace polyinfer::cuda {

// Starts recording the work queued on the context's stream (cudaStreamBeginCapture, relaxed
// mode: kernels may still allocate memory while it records). Throws Internal when CUDA refuses.
std::unique_ptr<Capture> begin_capture();

}  // namespace polyinfer::cuda
