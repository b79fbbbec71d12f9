// CUDA Graph capture (capture.h). While the executor runs a whole session's kernels, the
// stream records instead of running; end() turns the recording into an executable graph and
// replay() launches it: one launch for every kernel, cuBLAS call and copy of a run.
//
// Memory: the recorded work reads and writes the same addresses on every replay. The executor
// keeps every tensor of the recorded run alive; what kernels free while recording (their scratch
// memory, cuDNN workspaces) the allocator holds for the recording (hold_frees) and takes back
// only when it is destroyed.
//
// What cannot be recorded: a copy between host and device (Gather or a view reading computed
// indices or shapes back, a kernel uploading tables): the staging copies refuse while the stream
// records (copy.cpp), and anything else that waits for the device makes CUDA fail the call or
// invalidate the capture. The error reaches the executor, which discards the capture, says why
// in its status and runs as usual. The executor records only a run whose input shapes the
// previous run had, so first-time work per shape (cuDNN's timing) is already done.
//
// One stream serves the process: a capture assumes no other thread queues CUDA work while it
// records (another session's kernels would be recorded into this graph). Sessions on several
// threads should not ask for capture.
#include "providers/cuda/plugin/capture.h"

#include "providers/cuda/plugin/context.h"

namespace polyinfer::cuda {
namespace {

class CudaCapture final : public Capture {
 public:
  CudaCapture() : ctx_(Context::get()) {
    cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
    PI_CUDA_CHECK(cudaStreamIsCapturing(ctx_.stream(), &st));
    PI_CHECK(st == cudaStreamCaptureStatusNone, Internal,
             "CUDA: the stream is already recording a graph (one capture at a time)");
    ctx_.allocator()->hold_frees(&held_);
    const cudaError_t e = cudaStreamBeginCapture(ctx_.stream(), cudaStreamCaptureModeRelaxed);
    if (e != cudaSuccess) {
      ctx_.allocator()->hold_frees(nullptr);
      fail(ErrorCode::Internal, cuda_error_text("cudaStreamBeginCapture", e));
    }
    recording_ = true;
  }
  ~CudaCapture() override {
    if (recording_) stop(nullptr);  // discards what was recorded
    if (exec_) cudaGraphExecDestroy(exec_);
    if (graph_) cudaGraphDestroy(graph_);
    ctx_.allocator()->return_held(held_);  // never throws (a destructor)
  }
  CudaCapture(const CudaCapture&) = delete;
  CudaCapture& operator=(const CudaCapture&) = delete;

  void end() override {
    cudaGraph_t g = nullptr;
    const cudaError_t e = stop(&g);
    PI_CHECK(e == cudaSuccess && g != nullptr, Internal, cuda_error_text("cudaStreamEndCapture", e),
             " (a kernel waited for the GPU or copied to the host while the run was recorded)");
    graph_ = g;
    PI_CUDA_CHECK(cudaGraphGetNodes(graph_, nullptr, &nodes_));
    PI_CUDA_CHECK(cudaGraphInstantiate(&exec_, graph_, 0));
  }
  void replay() override { PI_CUDA_CHECK(cudaGraphLaunch(exec_, ctx_.stream())); }
  size_t size() const override { return nodes_; }

 private:
  // Ends the stream's capture; the graph goes to `*g`, or is destroyed when g is null.
  cudaError_t stop(cudaGraph_t* g) {
    recording_ = false;
    ctx_.allocator()->hold_frees(nullptr);
    cudaGraph_t made = nullptr;
    const cudaError_t e = cudaStreamEndCapture(ctx_.stream(), &made);
    cudaGetLastError();  // an invalidated capture's error is reported here, not left behind
    if (g) *g = made;
    else if (made)
      cudaGraphDestroy(made);
    return e;
  }

  Context& ctx_;
  bool recording_ = false;
  std::vector<void*> held_;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
  size_t nodes_ = 0;
};

}  // namespace

std::unique_ptr<Capture> begin_capture() { return std::make_unique<CudaCapture>(); }

}  // namespace polyinfer::cuda
