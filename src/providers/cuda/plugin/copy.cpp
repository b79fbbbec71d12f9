// Host<->device copies through two pinned staging buffers (context.h). Pageable host memory
// cannot be copied asynchronously (CUDA stages it through its own buffer and blocks), so each
// chunk is first copied into pinned memory we own; a copy to the device then returns as soon as
// its last chunk is queued, and the caller may free its host buffer at once.
#include <algorithm>
#include <cstring>

#include "providers/cuda/plugin/context.h"

namespace polyinfer::cuda {

void Context::ensure_staging() {
  if (staging_[0]) return;
  for (int i = 0; i < 2; ++i) {
    PI_CUDA_CHECK(cudaHostAlloc(&staging_[i], kStagingBytes, cudaHostAllocDefault));
    PI_CUDA_CHECK(cudaEventCreateWithFlags(&staging_done_[i], cudaEventDisableTiming));
    // Recorded once, so the first wait on each buffer returns at once.
    PI_CUDA_CHECK(cudaEventRecord(staging_done_[i], stream_));
  }
}

// A CUDA Graph would record the staging copies as graph nodes reading the staging buffers at
// replay time, and the events recorded during the capture could not be waited on afterwards: a
// copy between host and device while the stream records fails here, before touching either, so
// the capture is dropped and the staging buffers stay usable (capture.cpp).
void Context::refuse_copy_while_recording(const char* what) {
  cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
  PI_CUDA_CHECK(cudaStreamIsCapturing(stream_, &st));
  PI_CHECK(st == cudaStreamCaptureStatusNone, Internal, "CUDA: a copy ", what,
           " while the stream records a graph (a kernel needs the host mid-run: such runs "
           "cannot be captured)");
}

void Context::on_device(const void* device_src, void* device_dst, size_t bytes) {
  if (bytes == 0) return;
  PI_CUDA_CHECK(cudaMemcpyAsync(device_dst, device_src, bytes, cudaMemcpyDeviceToDevice, stream_));
}

void Context::to_device(const void* host_src, void* device_dst, size_t bytes) {
  refuse_copy_while_recording("to the device");
  std::lock_guard<std::mutex> lock(copy_mu_);
  ensure_staging();
  const auto* src = static_cast<const char*>(host_src);
  auto* dst = static_cast<char*>(device_dst);
  for (size_t done = 0; done < bytes;) {
    const size_t n = std::min(kStagingBytes, bytes - done);
    const int i = next_staging_;
    next_staging_ ^= 1;
    // The buffer's previous copy must have left it before it is overwritten.
    PI_CUDA_CHECK(cudaEventSynchronize(staging_done_[i]));
    std::memcpy(staging_[i], src + done, n);
    PI_CUDA_CHECK(cudaMemcpyAsync(dst + done, staging_[i], n, cudaMemcpyHostToDevice, stream_));
    PI_CUDA_CHECK(cudaEventRecord(staging_done_[i], stream_));
    done += n;
  }
}

void Context::to_host(const void* device_src, void* host_dst, size_t bytes) {
  refuse_copy_while_recording("to the host");
  std::lock_guard<std::mutex> lock(copy_mu_);
  ensure_staging();
  const auto* src = static_cast<const char*>(device_src);
  auto* dst = static_cast<char*>(host_dst);
  // Chunk k goes into buffer k % 2; while the device fills one, the host empties the other.
  size_t pending_off = 0, pending_n = 0;
  int pending_buf = -1;
  auto drain = [&] {
    if (pending_buf < 0) return;
    PI_CUDA_CHECK(cudaEventSynchronize(staging_done_[pending_buf]));
    std::memcpy(dst + pending_off, staging_[pending_buf], pending_n);
    pending_buf = -1;
  };
  for (size_t done = 0; done < bytes;) {
    const size_t n = std::min(kStagingBytes, bytes - done);
    const int i = next_staging_;
    next_staging_ ^= 1;
    // Queued after every kernel that writes the source: the stream keeps the order.
    PI_CUDA_CHECK(cudaEventSynchronize(staging_done_[i]));
    PI_CUDA_CHECK(cudaMemcpyAsync(staging_[i], src + done, n, cudaMemcpyDeviceToHost, stream_));
    PI_CUDA_CHECK(cudaEventRecord(staging_done_[i], stream_));
    drain();  // the previous chunk, while this one is in flight
    pending_off = done;
    pending_n = n;
    pending_buf = i;
    done += n;
  }
  drain();
}

}  // namespace polyinfer::cuda
