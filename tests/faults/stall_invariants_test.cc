// The stall checker on hand-made call sequences: what the timer is
// documented to do across a stall passes, and every kind of violation the
// fault test looks for is caught (so a passing fault test means something).
//
// The sequences: a 10 ms timer, on phase at 10, 20, ... 100 ms; the process
// stops at 105 ms and continues at 2102 ms. The call due at 110 ms comes
// late: dispatched at the 2102 ms tick, kSkip makes it the one late call for
// the latest period due by then (2100 ms) and is back on phase at 2110.

#include "tests/faults/stall_invariants.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace cyber {
namespace faults {
namespace {

using timer::OverrunPolicy;

constexpr int64_t kMs = 1000000;
constexpr int64_t kPeriod = 10 * kMs;
constexpr StallWindow kStall{105 * kMs, 2102 * kMs};

// A call starting at `actual` that runs 10 us.
CallRecord Call(int64_t expected, int64_t actual, int64_t missed = 0) {
  return CallRecord{expected, actual, actual + 1000, actual + 10000, missed};
}

std::vector<CallRecord> Before() {
  std::vector<CallRecord> calls;
  for (int64_t t = 10; t <= 100; t += 10) calls.push_back(Call(t * kMs, t * kMs + 50000));
  return calls;
}

// On phase from `from` to 3600 ms.
void OnPhase(std::vector<CallRecord>* calls, int64_t from_ms) {
  for (int64_t t = from_ms; t <= 3600; t += 10) calls->push_back(Call(t * kMs, t * kMs + 50000));
}

std::vector<CallRecord> SkipAfterStall() {
  std::vector<CallRecord> calls = Before();
  // The one late call, for the latest period due: 110 .. 2090 missed.
  calls.push_back(Call(2100 * kMs, 2102 * kMs + 100000, (2100 - 110) / 10));
  OnPhase(&calls, 2110);
  return calls;
}

ObservedTimer Timer(OverrunPolicy policy, const std::vector<CallRecord>& calls,
                    int max_burst = 0) {
  ObservedTimer t;
  t.name = "t";
  t.period_ns = kPeriod;
  t.policy = policy;
  t.max_burst = max_burst;
  t.calls = calls;
  t.stats.fires = calls.size();
  for (const CallRecord& c : calls) t.stats.missed_periods += c.missed;
  return t;
}

std::string All(const TimerFindings& f) {
  std::string s;
  for (const std::string& v : f.violations) s += v + "\n";
  return s;
}

bool Has(const TimerFindings& f, const std::string& what) {
  return All(f).find(what) != std::string::npos;
}

TEST(StallInvariantsTest, SkipResumingAsDocumentedPasses) {
  const std::vector<CallRecord> calls = SkipAfterStall();
  const TimerFindings f = CheckStalledTimer(Timer(OverrunPolicy::kSkip, calls), kStall);
  EXPECT_TRUE(f.violations.empty()) << All(f);
  EXPECT_EQ(f.stall_calls, 1);
  EXPECT_EQ(f.missed, 199);
  EXPECT_EQ(f.close_other, 0);
}

TEST(StallInvariantsTest, SkipDueCallOfTheStopServedLateIsABurst) {
  // What the timer did before it decided kSkip at dispatch: the call due at
  // the stop, served stale at 2102.1 ms, then the late call for 2100.
  std::vector<CallRecord> calls = Before();
  calls.push_back(Call(110 * kMs, 2102 * kMs + 100000));
  calls.push_back(Call(2100 * kMs, 2104 * kMs, (2100 - 110) / 10 - 1));
  OnPhase(&calls, 2110);
  const TimerFindings f = CheckStalledTimer(Timer(OverrunPolicy::kSkip, calls), kStall);
  EXPECT_TRUE(Has(f, "BURST after the resume: 2 calls")) << All(f);
}

TEST(StallInvariantsTest, SkipLateCallRunningIntoThePhasePasses) {
  // The late call for 2100 runs until 2106.5 ms; 2110 follows on phase.
  std::vector<CallRecord> calls = Before();
  calls.push_back({2100 * kMs, 2102 * kMs, 2102 * kMs, 2106 * kMs + 500000, 199});
  calls.push_back(Call(2110 * kMs, 2110 * kMs, 0));
  OnPhase(&calls, 2120);
  const TimerFindings f = CheckStalledTimer(Timer(OverrunPolicy::kSkip, calls), kStall);
  EXPECT_TRUE(f.violations.empty()) << All(f);
}

TEST(StallInvariantsTest, SkipLateStartedCallFollowedSoonerByNextOnPhasePasses) {
  // The late call for 2100 is dispatched 4 ms after its tick (a busy
  // processor): the on-phase 2110 follows 2 ms later. timer_options.h allows
  // it (dispatch latency is not the timer's to control).
  std::vector<CallRecord> calls = Before();
  calls.push_back(Call(2100 * kMs, 2108 * kMs, 199));
  OnPhase(&calls, 2110);
  const TimerFindings f = CheckStalledTimer(Timer(OverrunPolicy::kSkip, calls), kStall);
  EXPECT_TRUE(f.violations.empty()) << All(f);
  EXPECT_EQ(f.close_to_next_on_phase, 1);
}

TEST(StallInvariantsTest, SkipCatchingUpIsABurst) {
  std::vector<CallRecord> calls = Before();
  calls.push_back(Call(110 * kMs, 2102 * kMs + 100000));
  calls.push_back(Call(2080 * kMs, 2104 * kMs, 196));
  calls.push_back(Call(2090 * kMs, 2104 * kMs + 100000, 0));
  calls.push_back(Call(2100 * kMs, 2104 * kMs + 200000, 0));
  OnPhase(&calls, 2110);
  const TimerFindings f = CheckStalledTimer(Timer(OverrunPolicy::kSkip, calls), kStall);
  EXPECT_TRUE(Has(f, "BURST under kSkip")) << All(f);
  EXPECT_TRUE(Has(f, "served an old period")) << All(f);
  EXPECT_TRUE(Has(f, "BURST after the resume: 4 calls")) << All(f);
}

TEST(StallInvariantsTest, SkipLateCallForAnOldPeriodIsCaught) {
  std::vector<CallRecord> calls = Before();
  calls.push_back(Call(110 * kMs, 2102 * kMs + 100000));
  calls.push_back(Call(2050 * kMs, 2104 * kMs, 193));  // not the latest missed
  calls.push_back(Call(2110 * kMs, 2110 * kMs, 5));
  OnPhase(&calls, 2120);
  const TimerFindings f = CheckStalledTimer(Timer(OverrunPolicy::kSkip, calls), kStall);
  EXPECT_TRUE(Has(f, "served an old period")) << All(f);
}

TEST(StallInvariantsTest, MissedMiscountedIsCaught) {
  std::vector<CallRecord> calls = SkipAfterStall();
  calls[10].missed = 198;  // the late call for 2100: 199 periods before it
  ObservedTimer t = Timer(OverrunPolicy::kSkip, calls);
  TimerFindings f = CheckStalledTimer(t, kStall);
  EXPECT_TRUE(Has(f, "MISSED miscounted: 199 periods")) << All(f);

  calls = SkipAfterStall();
  t = Timer(OverrunPolicy::kSkip, calls);
  t.stats.missed_periods += 1;  // skipped one more than any call reported
  f = CheckStalledTimer(t, kStall);
  EXPECT_TRUE(Has(f, "MISSED miscounted: statistics say 200")) << All(f);
}

TEST(StallInvariantsTest, EarlyCallsAreCaught) {
  std::vector<CallRecord> calls = SkipAfterStall();
  calls[20].actual_ns = calls[20].expected_ns - 1;
  TimerFindings f = CheckStalledTimer(Timer(OverrunPolicy::kSkip, calls), kStall);
  EXPECT_TRUE(Has(f, "EARLY: actual_time")) << All(f);

  calls = SkipAfterStall();
  calls[20].entry_ns = calls[20].expected_ns - 1000;  // actual_time lied
  f = CheckStalledTimer(Timer(OverrunPolicy::kSkip, calls), kStall);
  EXPECT_TRUE(Has(f, "EARLY: the callback ran")) << All(f);

  calls = SkipAfterStall();
  ObservedTimer t = Timer(OverrunPolicy::kSkip, calls);
  t.stats.early_fires = 1;
  f = CheckStalledTimer(t, kStall);
  EXPECT_TRUE(Has(f, "early fires")) << All(f);
}

TEST(StallInvariantsTest, PhaseLossAndDisorderAreCaught) {
  std::vector<CallRecord> calls = SkipAfterStall();
  for (size_t i = 12; i < calls.size(); ++i) {
    calls[i].expected_ns += kMs;
    calls[i].actual_ns += kMs;
    calls[i].entry_ns += kMs;
    calls[i].end_ns += kMs;
  }
  TimerFindings f = CheckStalledTimer(Timer(OverrunPolicy::kSkip, calls), kStall);
  EXPECT_TRUE(Has(f, "PHASE lost")) << All(f);

  calls = SkipAfterStall();
  calls[30].actual_ns = calls[29].end_ns - 1;
  calls[30].entry_ns = calls[30].actual_ns;
  f = CheckStalledTimer(Timer(OverrunPolicy::kSkip, calls), kStall);
  EXPECT_TRUE(Has(f, "concurrently with itself")) << All(f);
}

TEST(StallInvariantsTest, BurstCatchesUpAtMostMaxBurst) {
  // max_burst 2: the due call, then 2090 and 2100 back to back, then phase.
  std::vector<CallRecord> calls = Before();
  calls.push_back(Call(110 * kMs, 2102 * kMs + 100000));
  calls.push_back(Call(2090 * kMs, 2104 * kMs, 197));
  calls.push_back(Call(2100 * kMs, 2104 * kMs + 100000, 0));
  OnPhase(&calls, 2110);
  TimerFindings f = CheckStalledTimer(Timer(OverrunPolicy::kBurst, calls, 2), kStall);
  EXPECT_TRUE(f.violations.empty()) << All(f);
  EXPECT_EQ(f.stall_calls, 3);

  // One catch-up call too many.
  calls = Before();
  calls.push_back(Call(110 * kMs, 2102 * kMs + 100000));
  calls.push_back(Call(2080 * kMs, 2104 * kMs, 196));
  calls.push_back(Call(2090 * kMs, 2104 * kMs + 100000, 0));
  calls.push_back(Call(2100 * kMs, 2104 * kMs + 200000, 0));
  OnPhase(&calls, 2110);
  f = CheckStalledTimer(Timer(OverrunPolicy::kBurst, calls, 2), kStall);
  EXPECT_TRUE(Has(f, "BURST after the resume: 4 calls")) << All(f);
  EXPECT_TRUE(Has(f, "served an old period")) << All(f);
}

TEST(StallInvariantsTest, DelayRebasesAfterTheStall) {
  // The due call ends at 2102.11 ms; kDelay's next call is one period later.
  std::vector<CallRecord> calls = Before();
  calls.push_back(Call(110 * kMs, 2102 * kMs + 100000));
  const int64_t end = calls.back().end_ns;
  for (int k = 1; k <= 100; ++k) {
    calls.push_back(Call(end + k * kPeriod, end + k * kPeriod + 50000, k == 1 ? 199 : 0));
  }
  TimerFindings f = CheckStalledTimer(Timer(OverrunPolicy::kDelay, calls), kStall);
  EXPECT_TRUE(f.violations.empty()) << All(f);

  // Staying on the old phase after the overrun is not kDelay.
  calls.resize(11);
  OnPhase(&calls, 2110);
  calls[11].missed = 199;
  f = CheckStalledTimer(Timer(OverrunPolicy::kDelay, calls), kStall);
  EXPECT_TRUE(Has(f, "kDelay: the previous run overran")) << All(f);
}

TEST(StallInvariantsTest, NotResumingOrRunningWhileStoppedIsCaught) {
  std::vector<CallRecord> calls = Before();
  calls.push_back(Call(110 * kMs, 2102 * kMs + 100000));
  TimerFindings f = CheckStalledTimer(Timer(OverrunPolicy::kSkip, calls), kStall);
  EXPECT_TRUE(Has(f, "did not resume")) << All(f);

  calls = SkipAfterStall();
  calls[5].entry_ns = 500 * kMs;  // inside the stop window
  f = CheckStalledTimer(Timer(OverrunPolicy::kSkip, calls), kStall);
  EXPECT_TRUE(Has(f, "while the process was stopped")) << All(f);

  calls = SkipAfterStall();
  ObservedTimer t = Timer(OverrunPolicy::kSkip, calls);
  t.calls_after_stop = 1;
  f = CheckStalledTimer(t, kStall);
  EXPECT_TRUE(Has(f, "after its own Stop()")) << All(f);
}

}  // namespace
}  // namespace faults
}  // namespace cyber
