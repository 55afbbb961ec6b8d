// ShutdownDeadline decides one outcome per shutdown: it finished in time
// (on_expired never runs) or the deadline passed (on_expired runs, and a
// ShutdownFinished() arriving meanwhile waits for it instead of going on as
// if the shutdown had finished: mainboard would otherwise print two
// summaries and exit 3 after a shutdown that did finish).
//
// Real time, with no assertion on how long anything takes: each test waits
// for the event it checks.

#include "cyber/mainboard/shutdown_deadline.h"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace cyber {
namespace {

// A one-way flag a thread can wait for (std:: primitives: TSan sees them).
class Flag {
 public:
  void Set() {
    std::lock_guard<std::mutex> lock(mu_);
    set_ = true;
    cv_.notify_all();
  }
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return set_; });
  }
  bool IsSet() {
    std::lock_guard<std::mutex> lock(mu_);
    return set_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool set_ = false;
};

TEST(ShutdownDeadlineTest, AShutdownThatFinishesInTimeNeverExpires) {
  Flag expired;
  {
    ShutdownDeadline bound({absl::ZeroDuration(), absl::Hours(1), [&] { expired.Set(); }});
    bound.ShutdownBegins();
    bound.ShutdownFinished();
  }  // joined: the watcher has decided
  EXPECT_FALSE(expired.IsSet());
}

TEST(ShutdownDeadlineTest, AStuckShutdownExpiresOnce) {
  int calls = 0;
  Flag expired;
  {
    ShutdownDeadline bound({absl::ZeroDuration(), absl::Milliseconds(20), [&] {
                              ++calls;
                              expired.Set();
                            }});
    bound.ShutdownBegins();
    expired.Wait();  // would hang (Bazel's timeout) if it never expired
  }
  EXPECT_EQ(calls, 1);
}

TEST(ShutdownDeadlineTest, NoDeadlineBeforeTheShutdownBegins) {
  Flag expired;
  {
    ShutdownDeadline bound({absl::ZeroDuration(), absl::Milliseconds(1), [&] { expired.Set(); }});
    // Running, not shutting down: the deadline does not count yet.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // lets it fail
  }
  EXPECT_FALSE(expired.IsSet());
}

TEST(ShutdownDeadlineTest, AFinishArrivingWhileItExpiresWaitsForTheReport) {
  Flag entered;
  Flag release;
  bool report_done = false;  // written by the watcher before it returns
  ShutdownDeadline bound({absl::ZeroDuration(), absl::Milliseconds(1), [&] {
                            entered.Set();
                            release.Wait();
                            report_done = true;
                          }});
  bound.ShutdownBegins();
  entered.Wait();
  bool seen_after_finish = false;
  std::thread finisher([&] {
    bound.ShutdownFinished();  // must wait for on_expired to return
    seen_after_finish = report_done;
  });
  // Gives a finisher that does not wait time to return early (and fail);
  // a correct one passes whatever the delay.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  release.Set();
  finisher.join();
  EXPECT_TRUE(seen_after_finish);
}

}  // namespace
}  // namespace cyber
