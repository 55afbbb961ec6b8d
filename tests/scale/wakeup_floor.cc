#include "tests/scale/wakeup_floor.h"

#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "tests/scale/thread_roles.h"

namespace cyber {
namespace scale {

namespace {

// timespec <-> nanoseconds (the floor talks to clock_nanosleep directly).
constexpr int64_t kNanosPerSecond = 1'000'000'000;

int64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * kNanosPerSecond + ts.tv_nsec;
}

void SleepUntilNs(int64_t deadline_ns) {
  timespec ts;
  ts.tv_sec = static_cast<time_t>(deadline_ns / kNanosPerSecond);
  ts.tv_nsec = static_cast<long>(deadline_ns % kNanosPerSecond);
  // Absolute: an interrupted sleep resumes to the same deadline.
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

}  // namespace

void WakeupFloor::Start() {
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), kFloorThreadName);
    Loop();
  });
}

void WakeupFloor::Stop() {
  stopping_.store(true);
  if (thread_.joinable()) thread_.join();
}

void WakeupFloor::Loop() {
  const int64_t spacing_ns = absl::ToInt64Nanoseconds(spacing_);
  int64_t deadline = MonotonicNs() + spacing_ns;
  while (!stopping_.load(std::memory_order_relaxed)) {
    SleepUntilNs(deadline);
    const int64_t now = MonotonicNs();
    if (now < deadline) ++early_;
    lateness_.Record(absl::Nanoseconds(now - deadline));
    deadline += spacing_ns;
    if (deadline <= now) {  // overslept past later deadlines: skip them
      const int64_t passed = (now - deadline) / spacing_ns + 1;
      skipped_ += static_cast<uint64_t>(passed);
      deadline += passed * spacing_ns;
    }
  }
}

}  // namespace scale
}  // namespace cyber
