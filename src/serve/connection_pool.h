// The threads that serve `polyinfer serve`'s HTTP connections, with a bound on the connections
// waiting for one. httplib's own pool queues every accepted connection without limit; this one
// holds at most `max_pending`, and beyond that the accepting thread waits, so further clients
// wait in the kernel's listen backlog (and are refused when it is full) instead of in this
// process's memory. `pending` reports how many wait now (for /metrics).
#pragma once

#include <httplib.h>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace polyinfer::serve {

class ConnectionPool final : public httplib::TaskQueue {
 public:
  ConnectionPool(size_t threads, size_t max_pending, std::shared_ptr<std::atomic<int64_t>> pending);
  ~ConnectionPool() override;

  // Queues a connection's work; waits while max_pending connections wait already.
  void enqueue(std::function<void()> fn) override;
  // Runs what is queued, then stops the threads.
  void shutdown() override;

 private:
  void work();

  const size_t max_pending_;
  std::shared_ptr<std::atomic<int64_t>> pending_;
  std::mutex mu_;
  std::condition_variable ready_, space_;
  std::deque<std::function<void()>> jobs_;
  bool shutdown_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace polyinfer::serve
