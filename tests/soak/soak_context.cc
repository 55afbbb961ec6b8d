#include "tests/soak/soak_context.h"

#include <algorithm>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace cyber {
namespace soak {

std::string SoakContext::At(Instant t) const {
  if (t.IsInfiniteFuture()) return "never";
  return absl::StrFormat("%.6fs", absl::ToDoubleSeconds(t - start_));
}

void SoakContext::Heartbeat(Instant actual) {
  const int64_t now_ns = absl::ToInt64Nanoseconds(actual.SinceEpoch());
  const int64_t prev_ns = last_heartbeat_ns_.load(std::memory_order_relaxed);
  if (prev_ns != 0) {
    const int64_t gap = now_ns - prev_ns;
    const int64_t cap = absl::ToInt64Nanoseconds(bounds_.max_heartbeat_gap);
    alive_ns_.fetch_add(std::min(gap, cap), std::memory_order_acq_rel);
    if (gap > max_gap_ns_.load(std::memory_order_relaxed)) {
      max_gap_ns_.store(gap, std::memory_order_relaxed);
    }
  }
  last_heartbeat_ns_.store(now_ns, std::memory_order_release);
  heartbeats_.fetch_add(1, std::memory_order_relaxed);
}

Instant SoakContext::last_heartbeat() const {
  const int64_t ns = last_heartbeat_ns_.load(std::memory_order_acquire);
  return ns == 0 ? Instant::InfiniteFuture()
                 : Instant::FromEpoch(absl::Nanoseconds(ns));
}

void SoakContext::Note(const std::string& what) {
  constexpr int kMaxNotes = 3;
  MutexLock lock(&note_mu_);
  if (notes_ >= kMaxNotes) return;
  ++notes_;
  std::printf("NOTE %s\n", what.c_str());
  std::fflush(stdout);
}

void SoakContext::AddRetiredStatistics(const timer::TimerStatistics& s,
                                       const std::string& who) {
  counters_.stats_fires.fetch_add(s.fires, std::memory_order_relaxed);
  counters_.stats_overruns.fetch_add(s.overruns, std::memory_order_relaxed);
  counters_.stats_missed_periods.fetch_add(s.missed_periods,
                                           std::memory_order_relaxed);
  counters_.stats_dispatch_refusals.fetch_add(s.dispatch_refusals,
                                              std::memory_order_relaxed);
  if (s.early_fires > 0) {
    log_->Report(Violation::kStatsEarly,
                 absl::StrCat(who, ": GetStatistics().early_fires = ",
                              s.early_fires));
  }
  if (s.exceptions > 0) {
    log_->Report(Violation::kCallbackException,
                 absl::StrCat(who, ": GetStatistics().exceptions = ",
                              s.exceptions, " (the soak's callbacks never throw)"));
  }
}

}  // namespace soak
}  // namespace cyber
