// Internal to this repository: not part of the API (docs/api.md lists the
// API headers); its Bazel target is visible only inside this repository.
//
// Waiting helpers for multi-threaded tests: wait on a condition, never sleep
// for a fixed time "to let things settle". The 30 s limits only bound a
// failing test; a passing one returns as soon as the condition holds.
//
// Test-only (//cyber/common:test_waits is testonly).

#ifndef CYBER_COMMON_TEST_WAITS_H_
#define CYBER_COMMON_TEST_WAITS_H_

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

namespace cyber {
namespace test {

inline constexpr std::chrono::seconds kTestWaitLimit{30};

// Waits for progress made on other threads: a bounded spin on `pred`.
// Returns false if it did not hold within kTestWaitLimit.
template <typename Pred>
bool Eventually(Pred pred) {
  const auto limit = std::chrono::steady_clock::now() + kTestWaitLimit;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > limit) return false;
    std::this_thread::yield();
  }
  return true;
}

// Blocks whoever calls Wait() (e.g. a task holding a processor) until
// Open(); AwaitEntered() returns once somebody is waiting.
class Gate {
 public:
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    entered_ = true;
    cv_.notify_all();
    cv_.wait(lock, [this] { return open_; });
  }
  // False if nobody entered within kTestWaitLimit.
  bool AwaitEntered() {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, kTestWaitLimit, [this] { return entered_; });
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool entered_ = false;
  bool open_ = false;
};

// Ends the process, saying `what` did not return, unless destroyed within
// kTestWaitLimit: for a test whose failure is a hang that nothing else
// would end (a deadlock of routines, a thread blocked for ever). The limit
// only bounds a failing test; a passing one disarms it at once.
//
//   {
//     const test::HangWatchdog watchdog("Launch()");
//     launched = graph.Launch(...);
//   }
class HangWatchdog {
 public:
  explicit HangWatchdog(std::string what)
      : what_(std::move(what)), thread_([this] { Watch(); }) {}
  ~HangWatchdog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      disarmed_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  HangWatchdog(const HangWatchdog&) = delete;
  HangWatchdog& operator=(const HangWatchdog&) = delete;

 private:
  void Watch() {
    std::unique_lock<std::mutex> lock(mu_);
    if (cv_.wait_for(lock, kTestWaitLimit, [this] { return disarmed_; })) return;
    std::fprintf(stderr, "FAILED (hang): %s did not return within %d s; ending the test\n",
                 what_.c_str(), static_cast<int>(kTestWaitLimit.count()));
    std::fflush(stderr);
    std::_Exit(1);
  }

  const std::string what_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool disarmed_ = false;
  std::thread thread_;  // last: it reads the members above
};

}  // namespace test
}  // namespace cyber

#endif  // CYBER_COMMON_TEST_WAITS_H_
