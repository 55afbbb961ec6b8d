#include "tests/soak/violation_log.h"

#include "absl/strings/str_cat.h"

namespace cyber {
namespace soak {

const char* ViolationName(Violation kind) {
  switch (kind) {
    case Violation::kEarlyFire:
      return "early_fire";
    case Violation::kTimerReportedEarly:
      return "timer_reported_early";
    case Violation::kStaleSchedule:
      return "stale_schedule";
    case Violation::kFireAfterStop:
      return "fire_after_stop";
    case Violation::kFireAfterReplace:
      return "fire_after_replace";
    case Violation::kUnscheduledFire:
      return "unscheduled_fire";
    case Violation::kDuplicateFire:
      return "duplicate_fire";
    case Violation::kLost:
      return "lost";
    case Violation::kLate:
      return "late";
    case Violation::kScheduleFailed:
      return "schedule_failed";
    case Violation::kStatsEarly:
      return "stats_early";
    case Violation::kCallbackException:
      return "callback_exception";
    case Violation::kRssGrowth:
      return "rss_growth";
    case Violation::kHang:
      return "hang";
  }
  return "unknown";
}

ViolationLog::ViolationLog(int max_printed, std::FILE* out)
    : max_printed_(max_printed), out_(out) {}

void ViolationLog::Report(Violation kind, const std::string& detail) {
  const uint64_t n =
      counts_[static_cast<int>(kind)].fetch_add(1, std::memory_order_relaxed) + 1;
  MutexLock lock(&print_mu_);
  if (printed_ >= max_printed_) return;
  ++printed_;
  std::fprintf(out_, "VIOLATION %s #%llu: %s\n", ViolationName(kind),
               static_cast<unsigned long long>(n), detail.c_str());
  if (printed_ == max_printed_) {
    std::fprintf(out_,
                 "(further violations are counted, not printed: "
                 "--max_printed=%d)\n",
                 max_printed_);
  }
  std::fflush(out_);
}

uint64_t ViolationLog::total() const {
  uint64_t sum = 0;
  for (const auto& c : counts_) sum += c.load(std::memory_order_relaxed);
  return sum;
}

std::string ViolationLog::Summary() const {
  std::string out;
  for (int k = 0; k < kViolationKinds; ++k) {
    const uint64_t n = counts_[k].load(std::memory_order_relaxed);
    if (n == 0) continue;
    absl::StrAppend(&out, out.empty() ? "" : " ",
                    ViolationName(static_cast<Violation>(k)), "=", n);
  }
  return out.empty() ? "none" : out;
}

}  // namespace soak
}  // namespace cyber
