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
#include <mutex>
#include <thread>

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

}  // namespace test
}  // namespace cyber

#endif  // CYBER_COMMON_TEST_WAITS_H_
