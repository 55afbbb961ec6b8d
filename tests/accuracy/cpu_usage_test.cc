#include "tests/accuracy/cpu_usage.h"

#include <pthread.h>
#include <time.h>

#include <cmath>
#include <future>
#include <thread>

#include "cyber/time/steady_clock.h"
#include "gtest/gtest.h"

namespace cyber {
namespace accuracy {
namespace {

scale::ThreadCpu Thread(int tid, const char* name, absl::Duration cpu) {
  scale::ThreadCpu t;
  t.tid = tid;
  t.name = name;
  t.cpu = cpu;
  return t;
}

TEST(CpuBetweenTest, ChargesThreadsByNameOverTheWindow) {
  CpuSample before;
  before.at = Instant::FromEpoch(absl::Seconds(10));
  before.process = absl::Milliseconds(500);
  before.threads = {Thread(1, "timer_accuracy", absl::Milliseconds(300)),
                    Thread(2, "timer-tick", absl::Milliseconds(40)),
                    Thread(3, "default-0", absl::Milliseconds(100)),
                    Thread(4, "io-0", absl::Milliseconds(20)),
                    Thread(5, "timer_accuracy", absl::Milliseconds(5))};
  CpuSample after;
  after.at = before.at + absl::Seconds(4);
  after.process = absl::Milliseconds(900);
  after.threads = {Thread(1, "timer_accuracy", absl::Milliseconds(310)),
                   Thread(2, "timer-tick", absl::Milliseconds(60)),
                   Thread(3, "default-0", absl::Milliseconds(130)),
                   Thread(4, "io-0", absl::Milliseconds(20)),
                   // Born in the window: counts from zero. Thread 5 ended.
                   Thread(6, "default-1", absl::Milliseconds(50)),
                   Thread(7, "defaults", absl::Milliseconds(70))};
  const CpuUsage u =
      CpuBetween(before, after, {"timer-tick", {"default-", "io-"}});
  EXPECT_EQ(u.window, absl::Seconds(4));
  EXPECT_EQ(u.tick, absl::Milliseconds(20));
  EXPECT_EQ(u.tick_threads, 1);
  EXPECT_EQ(u.processors, absl::Milliseconds(80));
  EXPECT_EQ(u.processor_threads, 3);
  EXPECT_EQ(u.process, absl::Milliseconds(400));
  EXPECT_FALSE(u.floor.has_value());
}

TEST(CpuBetweenTest, ComparesNamesAsLinuxKeepsThem) {
  CpuSample before;
  CpuSample after;
  after.at = before.at + absl::Seconds(1);
  // comm holds 15 characters: "a-very-long-tick-name" -> "a-very-long-tic".
  after.threads = {Thread(1, "a-very-long-tic", absl::Milliseconds(10)),
                   Thread(2, "a-very-long-pro", absl::Milliseconds(30))};
  const CpuUsage u =
      CpuBetween(before, after,
                 {"a-very-long-tick-name", {"a-very-long-processor-"}});
  EXPECT_EQ(u.tick, absl::Milliseconds(10));
  EXPECT_EQ(u.processors, absl::Milliseconds(30));
}

TEST(CpuBetweenTest, EmptyNamesMatchNothing) {
  CpuSample before;
  CpuSample after;
  after.threads = {Thread(1, "", absl::Milliseconds(10)),
                   Thread(2, "x", absl::Milliseconds(10))};
  const CpuUsage u = CpuBetween(before, after, {"", {""}});
  EXPECT_EQ(u.tick_threads, 0);
  EXPECT_EQ(u.processor_threads, 0);
}

TEST(PercentOfCoreTest, ShareOfOneCore) {
  EXPECT_DOUBLE_EQ(PercentOfCore(absl::Milliseconds(250), absl::Seconds(10)),
                   2.5);
  EXPECT_DOUBLE_EQ(PercentOfCore(absl::Seconds(3), absl::Seconds(2)), 150);
  EXPECT_TRUE(std::isnan(PercentOfCore(absl::Seconds(1), absl::ZeroDuration())));
}

absl::Duration ThreadCpuClock() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return absl::DurationFromTimespec(ts);
}

// Real /proc: a thread that names itself and burns a known amount of its own
// CPU time is found and charged. The margin is sound: /proc reports utime
// and stime, which add up to the thread's exact run time, each cut down to
// whole clock ticks, so at most two ticks go missing; getrusage loses at
// most a microsecond on each. Spinning on the thread's own CPU clock makes
// the amount independent of how busy the machine is.
// How long the test thread spins on its own CPU clock (file scope: no
// capture needed in the thread's lambda).
constexpr absl::Duration kSpin = absl::Milliseconds(60);

TEST(SampleCpuTest, FindsANamedThreadAndItsCpu) {
  SteadyClock* const clock = SteadyClock::Get();
  const CpuSample before = SampleCpu(clock);
  std::promise<void> spun;
  std::promise<void> release;
  std::thread spinner([&spun, done = release.get_future()]() mutable {
    pthread_setname_np(pthread_self(), "cpu-test-tick");
    const absl::Duration start = ThreadCpuClock();
    while (ThreadCpuClock() - start < kSpin) {
    }
    spun.set_value();
    done.wait();
  });
  spun.get_future().wait();
  const CpuSample after = SampleCpu(clock);
  release.set_value();
  spinner.join();

  const CpuUsage u =
      CpuBetween(before, after, {"cpu-test-tick", {"cpu-test-p-"}});
  EXPECT_EQ(u.tick_threads, 1);
  EXPECT_GE(u.tick, kSpin - 2 * ThreadCpuResolution());
  EXPECT_GE(u.process, kSpin - absl::Microseconds(2));
  EXPECT_GE(u.window, kSpin);  // it spun within the window
  EXPECT_EQ(u.processor_threads, 0);
}

}  // namespace
}  // namespace accuracy
}  // namespace cyber
