#include "cli/isolated_worker.h"

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <iostream>

#include "polyinfer/status.h"

namespace polyinfer::cli {

namespace {

// MSG_NOSIGNAL: a peer that died makes send fail with EPIPE instead of killing us with SIGPIPE.
bool send_all(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool recv_all(int fd, void* data, size_t n) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    const ssize_t r = recv(fd, p, n, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

// The worker: a job index in, a length-prefixed reply out, until the parent closes its end.
[[noreturn]] void serve(int fd, const std::function<std::string(size_t)>& job) {
  uint64_t index = 0;
  while (recv_all(fd, &index, sizeof index)) {
    const std::string reply = job(static_cast<size_t>(index));
    const uint64_t n = reply.size();
    if (!send_all(fd, &n, sizeof n) || !send_all(fd, reply.data(), reply.size())) break;
  }
  // _exit: no static destructors or atexit handlers of the parent's state run in the copy.
  _exit(0);
}

}  // namespace

IsolatedWorker::IsolatedWorker(std::function<std::string(size_t)> job) : job_(std::move(job)) {}

IsolatedWorker::~IsolatedWorker() {
  if (pid_ > 0) stop(false);
}

void IsolatedWorker::start() {
  int sv[2];
  PI_CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0, Io,
           "socketpair() failed: ", std::strerror(errno));
  // Output buffered before the fork would otherwise be printed by both processes.
  std::cout.flush();
  std::cerr.flush();
  const pid_t pid = fork();
  if (pid < 0) {
    const int err = errno;
    close(sv[0]);
    close(sv[1]);
    fail(ErrorCode::Io, "fork() failed: ", std::strerror(err));
  }
  if (pid == 0) {
    close(sv[0]);
    serve(sv[1], job_);
  }
  close(sv[1]);
  pid_ = pid;
  fd_ = sv[0];
}

std::string IsolatedWorker::stop(bool kill_it) {
  if (kill_it) kill(pid_, SIGKILL);
  // Closing our end first lets a worker waiting for its next job see EOF and exit.
  close(fd_);
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  fd_ = -1;
  if (WIFSIGNALED(status)) return std::string("crashed: ") + strsignal(WTERMSIG(status));
  return "test process exited without a result (exit status " +
         std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")";
}

IsolatedWorker::Reply IsolatedWorker::run(size_t index, int timeout_s) {
  if (pid_ < 0) start();
  const uint64_t i = index;
  if (!send_all(fd_, &i, sizeof i)) {
    // The worker died between jobs (the OOM killer, say), before this one: not its fault.
    stop(false);
    start();
    if (!send_all(fd_, &i, sizeof i)) return {false, stop(false)};
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  std::string buf;
  uint64_t want = UINT64_MAX;  // the reply's length, once its 8-byte header is in
  for (;;) {
    if (buf.size() >= sizeof want && want == UINT64_MAX) {
      std::memcpy(&want, buf.data(), sizeof want);
      buf.erase(0, sizeof want);
    }
    if (want != UINT64_MAX && buf.size() >= want) return {true, buf};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) {
      stop(true);
      return {false, "timed out after " + std::to_string(timeout_s) + " s"};
    }
    pollfd p{fd_, POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (ready < 0 && errno != EINTR) return {false, stop(true)};
    if (ready <= 0) continue;
    char chunk[65536];
    const ssize_t n = recv(fd_, chunk, sizeof chunk, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return {false, stop(false)};
    buf.append(chunk, static_cast<size_t>(n));
  }
}

}  // namespace polyinfer::cli
