// Dynamic batching for one model version whose inputs all have a dynamic first dimension:
// requests that arrive within `max_delay` of the oldest one waiting run together, up to
// `max_batch` items (the sum of their first dimensions), their inputs concatenated along axis 0,
// and each request gets its own rows of the outputs back (an output whose first dimension is
// not the batch's goes to each request whole). Requests whose inputs differ beyond the first
// dimension, or in dtype, run in separate batches. One worker thread per session (the
// version's instances), each forming and running batches from the one queue; the queue holds
// at most `max_queue` requests (submit refuses one more), and a request still waiting at its
// deadline is dropped with an error saying so.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <future>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "polyinfer/session.h"

namespace polyinfer::serve {

// What a request that waited past its deadline gets (the caller replies 503).
struct BatchTimeout : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Batcher {
 public:
  using Clock = std::chrono::steady_clock;
  struct Result {
    std::vector<Value> outputs;  // the session's outputs in order, this request's rows
    double queue_s = 0, compute_s = 0;
    int64_t batch_items = 0;  // the items of the batch it ran in
    bool first = false;       // the batch's first request (one per run, for the metrics)
  };

  Batcher(std::vector<Session> sessions, int64_t max_batch, std::chrono::microseconds max_delay,
          size_t max_queue);
  ~Batcher();  // runs what is queued, then stops
  Batcher(const Batcher&) = delete;
  Batcher& operator=(const Batcher&) = delete;

  // Queues a request of `items` rows (every input's first dimension is `items`, which the
  // caller has checked). Sets `full` and returns no future when max_queue requests wait
  // already (the caller replies 503).
  std::future<Result> submit(std::map<std::string, Value> inputs, int64_t items,
                             Clock::time_point deadline, bool* full);

  int64_t max_batch() const { return max_batch_; }

 private:
  struct Pending {
    std::map<std::string, Value> inputs;
    int64_t items = 0;
    std::string key;  // inputs' dtypes and shapes beyond the first dimension
    Clock::time_point arrived, deadline;
    std::promise<Result> done;
  };
  void work(Session& session);
  void run(Session& session, std::vector<Pending>& batch);

  std::vector<Session> sessions_;
  const int64_t max_batch_;
  const std::chrono::microseconds max_delay_;
  const size_t max_queue_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<Pending> queue_;
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace polyinfer::serve
