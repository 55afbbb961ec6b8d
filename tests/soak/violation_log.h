// ViolationLog: what the soak tool (timer_soak.cc) found wrong, by kind.
//
// Why a log of its own: a soak runs for minutes with hundreds of thousands of
// calls; a broken guarantee must be counted every time (the exit status and
// the final line depend on it) but printed only the first few times, with
// enough detail (timer, generation, expected and actual instants) to start
// debugging from, so that one systematic bug does not bury everything else.
//
// Threads: Report() and the readers may be called from any thread,
// including timer callbacks on scheduler coroutines (it takes one short lock
// only to print).

#ifndef TESTS_SOAK_VIOLATION_LOG_H_
#define TESTS_SOAK_VIOLATION_LOG_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <string>

#include "absl/base/thread_annotations.h"
#include "cyber/common/mutex.h"

namespace cyber {
namespace soak {

// Each kind names the guarantee of timer/timer.h (or of the soak itself)
// that was broken.
enum class Violation : int {
  kEarlyFire,           // a call before arm instant + delay (+ (n-1) periods)
  kTimerReportedEarly,  // TimerEvent::actual_time < expected_time
  kStaleSchedule,       // TimerEvent::expected_time from an older schedule,
                        // or not increasing within one schedule
  kFireAfterStop,       // a call after Stop() returned (and no new Schedule)
  kFireAfterReplace,    // a call of a configuration that Configure(),
                        // SetTimerOption() or ~Timer() had already retired
  kUnscheduledFire,     // a call of a timer never scheduled since created
  kDuplicateFire,       // a oneshot called twice for one Schedule()
  kLost,                // a due call not seen within the bound
  kLate,                // a call that came, but later than the bound
  kScheduleFailed,      // Schedule()/Configure() returned an error
  kStatsEarly,          // TimerStatistics::early_fires > 0
  kCallbackException,   // TimerStatistics::exceptions > 0 (ours never throw)
  kRssGrowth,           // resident memory grew after the warm-up
  kHang,                // a Timer call or the shutdown did not return
};
inline constexpr int kViolationKinds = static_cast<int>(Violation::kHang) + 1;

// "early_fire", "lost", ...: the spelling used in the summary and JSON.
const char* ViolationName(Violation kind);

class ViolationLog {
 public:
  // Prints the first `max_printed` reports to `out`, counts all of them.
  ViolationLog(int max_printed, std::FILE* out);
  ViolationLog(const ViolationLog&) = delete;
  ViolationLog& operator=(const ViolationLog&) = delete;

  void Report(Violation kind, const std::string& detail);

  uint64_t count(Violation kind) const {
    return counts_[static_cast<int>(kind)].load(std::memory_order_relaxed);
  }
  uint64_t total() const;
  // "lost=3 early_fire=1" (kinds with a nonzero count), or "none".
  std::string Summary() const;

 private:
  const int max_printed_;
  std::FILE* const out_;
  std::array<std::atomic<uint64_t>, kViolationKinds> counts_{};
  Mutex print_mu_;
  int printed_ ABSL_GUARDED_BY(print_mu_) = 0;
};

}  // namespace soak
}  // namespace cyber

#endif  // TESTS_SOAK_VIOLATION_LOG_H_
