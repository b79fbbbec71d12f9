#include "serve/log_writer.h"

#include <chrono>

#include <nlohmann/json.hpp>

namespace polyinfer::serve {

LogWriter::LogWriter(std::ostream& out, size_t max_queued) : out_(out), max_queued_(max_queued) {
  // Detached: the process may end while it is blocked on the stream.
  std::thread([this] { work(); }).detach();
}

bool LogWriter::flush(std::chrono::milliseconds limit) {
  std::unique_lock<std::mutex> lock(mu_);
  return drained_.wait_for(lock, limit, [&] { return lines_.empty() && !writing_; });
}

void LogWriter::write(const std::string& json_text) {
  const auto now = std::chrono::system_clock::now();
  const double ts = std::chrono::duration<double>(now.time_since_epoch()).count();
  const auto j = nlohmann::ordered_json::parse(json_text, nullptr, false);
  nlohmann::ordered_json line = {{"ts", ts}};
  if (j.is_object()) line.update(j);
  else
    line["message"] = json_text;
  std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (lines_.size() >= max_queued_) {
      ++dropped_;
      return;
    }
    lines_.push_back(std::move(text));
  }
  ready_.notify_one();
}

void LogWriter::work() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    ready_.wait(lock, [&] { return !lines_.empty(); });
    std::string text = std::move(lines_.front());
    lines_.pop_front();
    const size_t dropped = dropped_;
    dropped_ = 0;
    writing_ = true;
    lock.unlock();
    if (dropped > 0)
      out_ << nlohmann::json({{"event", "log_dropped"}, {"lines", dropped}}).dump() << "\n";
    out_ << text << std::endl;  // may block: only this thread waits
    lock.lock();
    writing_ = false;
    if (lines_.empty()) drained_.notify_all();
  }
}

}  // namespace polyinfer::serve
