#include "serve/batcher.h"

#include <cstring>

#include "polyinfer/status.h"

namespace polyinfer::serve {
namespace {

double seconds(Batcher::Clock::duration d) { return std::chrono::duration<double>(d).count(); }

std::string key_of(const std::map<std::string, Value>& inputs) {
  std::string k;
  for (const auto& [name, v] : inputs) {
    const Tensor& t = v.tensor();
    k += name + ":" + std::to_string(static_cast<int>(t.dtype()));
    for (int64_t i = 1; i < t.rank(); ++i) k += "," + std::to_string(t.shape()[i]);
    k += ";";
  }
  return k;
}

// The tensors stacked along axis 0 (one dtype, equal trailing dimensions).
Tensor concat_rows(const std::vector<const Tensor*>& parts) {
  const Tensor& first = *parts[0];
  Shape shape = first.shape();
  shape[0] = 0;
  for (const Tensor* p : parts) shape[0] += p->shape()[0];
  Tensor out = Tensor::empty(first.dtype(), shape);
  if (first.dtype() == DType::String) {
    auto* dst = out.data<std::string>();
    for (const Tensor* p : parts) {
      const auto* src = p->data<std::string>();
      for (int64_t i = 0; i < p->numel(); ++i) *dst++ = src[i];
    }
    return out;
  }
  auto* dst = static_cast<char*>(out.raw_data());
  for (const Tensor* p : parts) {
    std::memcpy(dst, p->raw_data(), p->nbytes());
    dst += p->nbytes();
  }
  return out;
}

// Rows [row, row + n) of `t` as a tensor of their own.
Tensor rows(const Tensor& t, int64_t row, int64_t n) {
  Shape shape = t.shape();
  shape[0] = n;
  Tensor out = Tensor::empty(t.dtype(), shape);
  const int64_t per_row = t.shape()[0] > 0 ? t.numel() / t.shape()[0] : 0;
  if (t.dtype() == DType::String) {
    const auto* src = t.data<std::string>() + row * per_row;
    auto* dst = out.data<std::string>();
    for (int64_t i = 0; i < n * per_row; ++i) dst[i] = src[i];
    return out;
  }
  const size_t row_bytes = static_cast<size_t>(per_row) * dtype_size(t.dtype());
  std::memcpy(out.raw_data(), static_cast<const char*>(t.raw_data()) + row * row_bytes,
              static_cast<size_t>(n) * row_bytes);
  return out;
}

}  // namespace

Batcher::Batcher(std::vector<Session> sessions, int64_t max_batch,
                 std::chrono::microseconds max_delay, size_t max_queue)
    : sessions_(std::move(sessions)),
      max_batch_(max_batch),
      max_delay_(max_delay),
      max_queue_(max_queue) {
  for (Session& s : sessions_) workers_.emplace_back([this, &s] { work(s); });
}

Batcher::~Batcher() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& w : workers_) w.join();
}

std::future<Batcher::Result> Batcher::submit(std::map<std::string, Value> inputs, int64_t items,
                                             Clock::time_point deadline, bool* full) {
  Pending p;
  p.key = key_of(inputs);
  p.inputs = std::move(inputs);
  p.items = items;
  p.arrived = Clock::now();
  p.deadline = deadline;
  std::future<Result> f = p.done.get_future();
  {
    std::lock_guard<std::mutex> lock(mu_);
    *full = queue_.size() >= max_queue_;
    if (*full) return {};
    queue_.push_back(std::move(p));
  }
  wake_.notify_all();
  return f;
}

void Batcher::work(Session& session) {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    wake_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, nothing left
    // Wait for the oldest request's delay to pass, or for a full batch of its kind.
    const auto until = queue_.front().arrived + max_delay_;
    // Another worker (an instance of its own) may take the waiting requests meanwhile.
    const auto ready = [&] {
      if (stop_ || queue_.empty()) return true;
      int64_t n = 0;
      for (const auto& p : queue_)
        if (p.key == queue_.front().key) n += p.items;
      return n >= max_batch_;
    };
    wake_.wait_until(lock, until, ready);
    if (queue_.empty()) continue;
    // Take the oldest request's kind, in arrival order, up to max_batch items; drop the ones
    // whose deadline passed.
    const auto now = Clock::now();
    std::vector<Pending> batch;
    int64_t items = 0;
    const std::string key = queue_.front().key;
    for (auto it = queue_.begin(); it != queue_.end();) {
      if (it->deadline <= now) {
        it->done.set_exception(std::make_exception_ptr(
            BatchTimeout("timed out after " +
                         std::to_string(static_cast<int64_t>(seconds(now - it->arrived) * 1e3)) +
                         " ms waiting for its batch")));
        it = queue_.erase(it);
        continue;
      }
      if (it->key == key && (batch.empty() || items + it->items <= max_batch_)) {
        items += it->items;
        batch.push_back(std::move(*it));
        it = queue_.erase(it);
        continue;
      }
      ++it;
    }
    if (batch.empty()) continue;
    lock.unlock();
    run(session, batch);
    lock.lock();
  }
}

void Batcher::run(Session& session, std::vector<Pending>& batch) {
  const auto start = Clock::now();
  int64_t total = 0;
  for (const auto& p : batch) total += p.items;
  try {
    std::map<std::string, Value> inputs;
    for (const auto& [name, v] : batch[0].inputs) {
      std::vector<const Tensor*> parts;
      for (const auto& p : batch) parts.push_back(&p.inputs.at(name).tensor());
      inputs.emplace(name, Value(batch.size() == 1 ? *parts[0] : concat_rows(parts)));
    }
    std::vector<Value> out = session.run(inputs);
    const double compute_s = seconds(Clock::now() - start);
    int64_t row = 0;
    for (auto& p : batch) {
      Result r;
      r.queue_s = seconds(start - p.arrived);
      r.compute_s = compute_s;
      r.batch_items = total;
      r.first = &p == &batch.front();
      for (const Value& v : out) {
        const bool batched =
            v.is_tensor() && v.tensor().rank() >= 1 && v.tensor().shape()[0] == total;
        r.outputs.push_back(batched && batch.size() > 1
                                ? Value(rows(v.tensor().to(Device::cpu()), row, p.items))
                                : v);
      }
      row += p.items;
      p.done.set_value(std::move(r));
    }
  } catch (...) {
    for (auto& p : batch) p.done.set_exception(std::current_exception());
  }
}

}  // namespace polyinfer::serve
