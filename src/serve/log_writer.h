// `polyinfer serve`'s log: JSON lines written to a stream by a thread of their own, so that a
// stream nobody reads (a full pipe) stalls that thread and not the requests. At most
// `max_queued` lines wait; beyond that lines are dropped and counted, and the next line written
// says how many went. Each line gets "ts" (Unix seconds) in front of the event's own fields.
// A LogWriter lives until the process ends (make it once and keep it): its thread may be
// blocked on the stream when the process exits, so it is never joined.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <ostream>
#include <string>
#include <thread>

namespace polyinfer::serve {

class LogWriter {
 public:
  explicit LogWriter(std::ostream& out, size_t max_queued = 10000);
  LogWriter(const LogWriter&) = delete;
  LogWriter& operator=(const LogWriter&) = delete;

  // Queues one event (a JSON object's text; anything else is logged as {"message": ...}).
  void write(const std::string& json_text);
  // Waits until every queued line is written, or `limit` passes (a blocked stream must not
  // keep the server from exiting); true when all were written.
  bool flush(std::chrono::milliseconds limit);

 private:
  void work();

  std::ostream& out_;
  const size_t max_queued_;
  std::mutex mu_;
  std::condition_variable ready_, drained_;
  std::deque<std::string> lines_;
  size_t dropped_ = 0;
  bool writing_ = false;  // a line is being written (the queue is not drained before it is)
};

}  // namespace polyinfer::serve
