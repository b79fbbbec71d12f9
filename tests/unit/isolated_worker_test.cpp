// cli/isolated_worker.h: jobs share one worker process until one crashes, exits or overruns;
// the failure names what happened and the next job gets a fresh worker.
#include "cli/isolated_worker.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

namespace polyinfer::cli {
namespace {

// Job 0: the worker's pid. 1: killed by a signal. 2: exits without a reply. 3: hangs.
// 4: a reply larger than a socket buffer.
std::string job(size_t i) {
  switch (i) {
    case 1: raise(SIGKILL); break;
    case 2: _exit(3);
    case 3: sleep(30); break;
    case 4: {
      std::string big(3 << 20, 'x');
      big.back() = 'y';
      return big;
    }
    default: break;
  }
  return std::to_string(getpid());
}

TEST(IsolatedWorker, JobsShareOneWorkerProcess) {
  IsolatedWorker w(job);
  const auto a = w.run(0, 10), b = w.run(0, 10);
  ASSERT_TRUE(a.ok) << a.text;
  ASSERT_TRUE(b.ok) << b.text;
  EXPECT_EQ(a.text, b.text);
  EXPECT_NE(a.text, std::to_string(getpid()));
}

// Each way a job can end its worker: the reply names it, and the next job runs on a new one.
TEST(IsolatedWorker, AFailedJobIsNamedAndTheNextGetsANewWorker) {
  const struct {
    size_t job;
    int timeout_s;
    std::string text;
  } cases[] = {{1, 10, std::string("crashed: ") + strsignal(SIGKILL)},
               {2, 10, "test process exited without a result (exit status 3)"},
               {3, 1, "timed out after 1 s"}};
  for (const auto& c : cases) {
    IsolatedWorker w(job);
    const auto before = w.run(0, 10);
    ASSERT_TRUE(before.ok) << before.text;
    const auto r = w.run(c.job, c.timeout_s);
    EXPECT_FALSE(r.ok) << "job " << c.job;
    EXPECT_EQ(r.text, c.text);
    const auto after = w.run(0, 10);
    ASSERT_TRUE(after.ok) << after.text;
    EXPECT_NE(after.text, before.text) << "job " << c.job << " left its worker running";
  }
}

TEST(IsolatedWorker, AWorkerThatDiedBetweenJobsIsReplacedWithoutFailingTheNext) {
  IsolatedWorker w(job);
  const auto first = w.run(0, 10);
  ASSERT_TRUE(first.ok) << first.text;
  const pid_t pid = static_cast<pid_t>(std::stol(first.text));
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  // Until it is reaped the dead worker stays our child; its end of the socket is closed by then.
  while (kill(pid, 0) == 0 && waitpid(pid, nullptr, WNOHANG) == 0) usleep(1000);
  const auto next = w.run(0, 10);
  ASSERT_TRUE(next.ok) << next.text;
  EXPECT_NE(next.text, first.text);
}

TEST(IsolatedWorker, ALargeReplyArrivesWhole) {
  IsolatedWorker w(job);
  const auto r = w.run(4, 30);
  ASSERT_TRUE(r.ok) << r.text;
  ASSERT_EQ(r.text.size(), size_t{3} << 20);
  EXPECT_EQ(r.text.front(), 'x');
  EXPECT_EQ(r.text.back(), 'y');
}

}  // namespace
}  // namespace polyinfer::cli
