#include "serve/connection_pool.h"

namespace polyinfer::serve {

ConnectionPool::ConnectionPool(size_t threads, size_t max_pending,
                               std::shared_ptr<std::atomic<int64_t>> pending)
    : max_pending_(max_pending), pending_(std::move(pending)) {
  for (size_t i = 0; i < threads; ++i) threads_.emplace_back([this] { work(); });
}

ConnectionPool::~ConnectionPool() { shutdown(); }

void ConnectionPool::enqueue(std::function<void()> fn) {
  {
    std::unique_lock<std::mutex> lock(mu_);
    space_.wait(lock, [&] { return jobs_.size() < max_pending_ || shutdown_; });
    jobs_.push_back(std::move(fn));
    *pending_ = static_cast<int64_t>(jobs_.size());
  }
  ready_.notify_one();
}

void ConnectionPool::shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (shutdown_ && threads_.empty()) return;
    shutdown_ = true;
  }
  ready_.notify_all();
  space_.notify_all();
  for (auto& t : threads_) t.join();
  threads_.clear();
}

void ConnectionPool::work() {
  for (;;) {
    std::function<void()> fn;
    {
      std::unique_lock<std::mutex> lock(mu_);
      ready_.wait(lock, [&] { return !jobs_.empty() || shutdown_; });
      if (jobs_.empty()) return;  // shutting down with nothing left
      fn = std::move(jobs_.front());
      jobs_.pop_front();
      *pending_ = static_cast<int64_t>(jobs_.size());
    }
    space_.notify_one();
    fn();
  }
}

}  // namespace polyinfer::serve
