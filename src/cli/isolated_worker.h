// A forked worker process that runs many jobs, one at a time, each with a time limit.
//
// Isolation per job (a crash or a hang ends that job's worker, not the caller) used to cost a
// fork per job, and with it the child's setup: a Vulkan or CUDA context, oneDNN's JIT kernels,
// the shader pipelines, all built again for every ONNX test. A worker keeps them: it lives
// until a job crashes or overruns, and the next job starts a fresh one. The ONNX node tests with
// `--providers vulkan,cpu` on llvmpipe went from 221 to 18 s in the sanitizer build (a Vulkan
// device per test was most of it).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <functional>
#include <string>

namespace polyinfer::cli {

class IsolatedWorker {
 public:
  // `job(i)` runs in the worker and returns its reply. It must not throw: catch inside.
  explicit IsolatedWorker(std::function<std::string(size_t)> job);
  ~IsolatedWorker();
  IsolatedWorker(const IsolatedWorker&) = delete;
  IsolatedWorker& operator=(const IsolatedWorker&) = delete;

  struct Reply {
    bool ok = false;   // false: the worker crashed, exited or overran; `text` says which
    std::string text;  // the job's reply when ok
  };
  // Runs job `index` in the worker (starting one if none is alive) and waits at most
  // `timeout_s` seconds for its reply.
  Reply run(size_t index, int timeout_s);

 private:
  void start();
  // Ends the worker (SIGKILL when `kill_it`) and returns how it ended, in words.
  std::string stop(bool kill_it);

  std::function<std::string(size_t)> job_;
  pid_t pid_ = -1;
  int fd_ = -1;  // our end of the socket pair
};

}  // namespace polyinfer::cli
