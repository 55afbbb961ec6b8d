// wheel_fuzzer: the timing wheel against its reference model.
//
// Why: the wheel (timer/timing_wheel.h) is where "never early, never lost,
// exactly once" is actually enforced, with slot arithmetic, cascades down
// five levels (and whole rounds at the top one when a caller's present runs
// ahead) and bitmaps that skip empty stretches -- code whose bugs hide at
// boundaries (the last tick of a work revolution vs the first, the first tick of a level's unit, the one
// before a cascade's deadline, a re-arm from the past). tests/reference/wheel_model.h is an
// ordered map with the same documented rules; this fuzzer drives both with
// the same operation sequence and compares after every step. It is single
// threaded and cheap, so libFuzzer runs it tens of thousands of times a
// second.
//
// Each input is a program over 8 entries (see Run() for the decoding):
// arm near / far / beyond the maximum delay / on a boundary / in the past,
// arm exactly (ArmExact) for a deadline between ticks, on a tick, within
// the tick being waited for, in the past (also before the epoch), far ahead
// (around the maximum delay) or infinite, cancel, advance by 0..2^34 ticks
// (also backwards, tick by tick, or straight to the next event, as the tick
// driver does), advance to an instant (AdvanceToInstant: between ticks, just
// before / at the next event, the driver's plan-sleep-advance loop on
// instants), plan a wake, and give an entry a period so it is re-armed after
// each expiry, as a periodic timer does: from its expiry tick (possibly one
// already processed), or, armed exactly, for deadline + period (periods of
// 250 us .. 5 ms and others, sub-tick ones included).
//
// Checked after every step:
//   - the same entries fire, at the same ticks, as in the model (so none
//     early, none lost, none twice): a tick entry at the first advance whose
//     tick reaches its tick, an exact one at the first advance whose instant
//     (AdvanceTo: the tick's) is at or after its deadline; none before the
//     tick or deadline it asked for and none after the tick / instant
//     advanced to;
//   - the order the wheel promises: AdvanceTo in tick order, AdvanceToInstant
//     in time order (by event instant; equal instants in any order);
//   - Arm reports the tick the model uses (a past tick becomes now + 1),
//     ArmExact the first tick at or after its deadline (not clamped), a new
//     arm_seq each time, and OutOfRange beyond kMaxDelayTicks (counted in
//     ticks from now(), or from the caller's present tick if later; for
//     ArmExact from the deadline's tick) and for an infinite deadline, with
//     the entry left exactly as it was;
//   - now(), processed(), size(), IsArmed() agree with the model;
//   - NextEvent() is InfiniteFuture exactly when empty, else never after the
//     model's next expiry instant, and after processed() unless something is
//     already due; it is that expiry, a cascade tick (a multiple of kWorkWheelSpan:
//     every upper level's deadline is one, and 8 entries never make a slot
//     big enough for the visits in between, see kCascadeChunk), or
//     the tick before an exact deadline between ticks (where the entry
//     waits), nothing else; NextEventTick() is kNoTick when empty, else
//     after now(), and NextEvent() is no later than its instant;
//   - no lost wake-up: an arm that makes NextEvent() earlier than the
//     instant a driver sleeps until (the last PlanWake(), lowered by arms
//     that reported wake_needed; cancels leave it) reports wake_needed
//     (and then planned_wake() is that event); after PlanWake() (==
//     NextEvent() == planned_wake()), as long as no arm reported
//     wake_needed, no event is earlier than the plan;
//   - planned_wake() as the header says: it is NextEvent() whenever nothing
//     is due (the plan is after processed()); an arm reporting
//     plan_earlier moved it earlier, to an event no earlier than the
//     driver's sleep; a re-arm or cancel reporting plan_later moved it
//     later, and one reporting none of the three left it as it was.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "cyber/time/instant.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/quiet_logging.h"
#include "tests/reference/wheel_model.h"
#include "timer/timing_wheel.h"

namespace cyber {
namespace fuzz {
namespace {

using reference::WheelModel;
using timer::kMaxDelayTicks;
using timer::kNoTick;
using timer::kWorkWheelSpan;
using timer::Tick;
using timer::TimingWheel;
using timer::WheelEntry;

// One unit (slot) of level 2, 64 work revolutions.
constexpr Tick kLevel2Unit = timer::UpperLevelGranularity(2);

constexpr int kEntries = 8;
// Time stays below this, far from any 64-bit overflow (in ns too:
// 2^40 ticks of 2 ms is ~2^61 ns).
constexpr Tick kHorizon = Tick{1} << 40;
constexpr int64_t kTickNs = 2000000;  // timer::kTimerResolution
constexpr int64_t kNever = INT64_MAX;  // "no instant" in ns

// Instants of the wheel (epoch Instant()) as ns since the epoch, and back.
int64_t Ns(Instant t) {
  if (t.IsInfiniteFuture()) return kNever;
  return absl::ToInt64Nanoseconds(t.SinceEpoch());
}
Instant At(int64_t ns) { return Instant::FromEpoch(absl::Nanoseconds(ns)); }

class WheelFuzz {
 public:
  WheelFuzz()
      : wheel_(Instant(), timer::kTimerResolution), entries_(kEntries), model_(kTickNs) {}
  ~WheelFuzz() {
    for (WheelEntry& e : entries_) wheel_.Cancel(&e);
  }

  void Run(FuzzInput& in);

 private:
  int Id(const WheelEntry* e) const { return static_cast<int>(e - entries_.data()); }
  Tick now() const { return model_.now(); }
  int64_t processed() const { return model_.processed_ns(); }

  // `present`: the caller's idea of the current tick (see TimingWheel::Arm).
  void Arm(int id, Tick expires, Tick present = 0);
  // `deadline`: ns since the epoch; `quarter`: plus a quarter nanosecond (a
  // deadline off the nanosecond grid, which the wheel rounds up);
  // `infinite`: InfiniteFuture instead.
  void ArmExact(int id, int64_t deadline, Tick present = 0, bool quarter = false,
                bool infinite = false);
  // What an arm must report, checked after the wheel and model armed.
  void CheckArmed(int id, const char* what, const TimingWheel::ArmResult& result,
                  Tick want, int64_t plan_before);
  void Cancel(int id);
  void AdvanceTo(Tick to);
  void AdvanceToInstant(int64_t t);
  // Checks the expiries `got` (in the wheel's order) of an advance against
  // `want` (the model's), then re-arms periodic entries.
  void CheckFires(std::vector<WheelModel::Fire> got, std::vector<WheelModel::Fire> want,
                  bool by_instant, const std::string& what);
  void PlanWake();
  void CheckState();

  TimingWheel wheel_;
  std::vector<WheelEntry> entries_;
  WheelModel model_;
  uint32_t arm_seq_[kEntries] = {};
  Tick requested_[kEntries] = {};     // the tick the latest Arm asked for
  bool exact_[kEntries] = {};         // the latest arm was ArmExact
  int64_t deadline_[kEntries] = {};   // its deadline (ns, rounded up)
  Tick period_[kEntries] = {};        // non-zero: Arm()ed again after each expiry
  int64_t exact_period_[kEntries] = {};  // non-zero: ArmExact()ed again
  // The last PlanWake(), valid until the next advance, and whether an arm
  // has asked for a wake-up since.
  bool plan_valid_ = false;
  int64_t plan_ = kNever;
  bool wake_requested_ = false;
  // The instant a driver of this wheel sleeps until: the last PlanWake(),
  // lowered by each arm that reported wake_needed (the driver is woken and
  // plans again); cancels and advances leave it, as they leave a sleep.
  int64_t driver_wake_ = kNever;
};

void WheelFuzz::CheckArmed(int id, const char* what, const TimingWheel::ArmResult& result,
                           Tick want, int64_t plan_before) {
  WheelEntry& e = entries_[id];
  FUZZ_CHECK(result.expires == want && e.expires() == want)
      << what << " " << id << " at now " << now() << ": armed for tick " << result.expires
      << " (entry " << e.expires() << "), model " << want;
  FUZZ_CHECK(result.arm_seq == arm_seq_[id] + 1 && e.arm_seq() == result.arm_seq)
      << what << " " << id << ": arm_seq " << result.arm_seq << " after " << arm_seq_[id];
  arm_seq_[id] = result.arm_seq;
  const int64_t next = Ns(wheel_.NextEvent());
  const int64_t plan = Ns(wheel_.planned_wake());
  // No lost wake-up: a driver must be told about anything earlier than
  // the instant it sleeps until.
  FUZZ_CHECK(next >= driver_wake_ || result.wake_needed)
      << what << " " << id << ": next event " << next
      << " ns is before the driver's wake " << driver_wake_ << " ns, but no wake_needed";
  FUZZ_CHECK(result.wake_needed + result.plan_earlier + result.plan_later <= 1)
      << what << " " << id << ": more than one of wake_needed, plan_earlier, plan_later";
  if (result.wake_needed) {
    FUZZ_CHECK(next < driver_wake_ && next < plan_before && plan == next)
        << what << " " << id << ": wake_needed, but next event " << next
        << " ns, driver's wake " << driver_wake_ << " ns, plan before " << plan_before
        << " ns, after " << plan << " ns";
    driver_wake_ = next;
    wake_requested_ = true;
  } else if (result.plan_earlier) {
    FUZZ_CHECK(next >= driver_wake_ && next < plan_before && plan == next)
        << what << " " << id << ": plan_earlier, but next event " << next
        << " ns, driver's wake " << driver_wake_ << " ns, plan before " << plan_before
        << " ns, after " << plan << " ns";
  } else if (result.plan_later) {
    FUZZ_CHECK(plan > plan_before) << what << " " << id << ": plan_later, but the plan went "
                                   << plan_before << " -> " << plan << " ns";
  } else {
    FUZZ_CHECK(plan == plan_before) << what << " " << id << ": the plan moved "
                                    << plan_before << " -> " << plan
                                    << " ns, reported none of wake_needed, plan_earlier, "
                                       "plan_later";
  }
}

void WheelFuzz::Arm(int id, Tick expires, Tick present) {
  WheelEntry& e = entries_[id];
  const Tick from = std::max(now(), present);
  const bool out_of_range =
      expires == kNoTick || (expires > from && expires - from > kMaxDelayTicks);
  const bool was_armed = model_.IsArmed(id);
  const Tick was_expiring = e.expires();
  const int64_t plan_before = Ns(wheel_.planned_wake());
  auto result = wheel_.Arm(&e, expires, present);
  if (out_of_range) {
    FUZZ_CHECK(!result.ok() && result.status().code() == absl::StatusCode::kOutOfRange)
        << "arm " << id << " at tick " << expires << " from " << now()
        << " should be OutOfRange, got "
        << (result.ok() ? std::string("OK") : result.status().ToString());
    FUZZ_CHECK(wheel_.IsArmed(&e) == was_armed && e.arm_seq() == arm_seq_[id] &&
               e.expires() == was_expiring && Ns(wheel_.planned_wake()) == plan_before)
        << "a refused arm changed entry " << id << " or the plan";
    return;
  }
  FUZZ_CHECK(result.ok()) << "arm " << id << " at " << expires << " from " << now()
                          << ": " << result.status();
  const Tick want = model_.Arm(id, expires);
  requested_[id] = expires;
  exact_[id] = false;
  CheckArmed(id, "arm", *result, want, plan_before);
}

void WheelFuzz::ArmExact(int id, int64_t deadline, Tick present, bool quarter,
                         bool infinite) {
  WheelEntry& e = entries_[id];
  Instant at = At(deadline);
  if (quarter) {
    at += absl::Nanoseconds(1) / 4;
    ++deadline;  // the first whole ns at or after it
  }
  if (infinite) at = Instant::InfiniteFuture();
  // The range is checked in ticks: the deadline's tick (the first at or
  // after it) against max(now(), present).
  const int64_t clamped = std::max<int64_t>(0, deadline);
  const Tick tick = static_cast<Tick>(clamped / kTickNs + (clamped % kTickNs != 0 ? 1 : 0));
  const Tick from = std::max(now(), present);
  const bool out_of_range = infinite || (tick > from && tick - from > kMaxDelayTicks);
  const bool was_armed = model_.IsArmed(id);
  const Tick was_expiring = e.expires();
  const int64_t plan_before = Ns(wheel_.planned_wake());
  auto result = wheel_.ArmExact(&e, at, present);
  if (out_of_range) {
    FUZZ_CHECK(!result.ok() && result.status().code() == absl::StatusCode::kOutOfRange)
        << "exact arm " << id << " for " << at << " (tick " << tick << ") from tick "
        << from << " should be OutOfRange, got "
        << (result.ok() ? std::string("OK") : result.status().ToString());
    FUZZ_CHECK(wheel_.IsArmed(&e) == was_armed && e.arm_seq() == arm_seq_[id] &&
               e.expires() == was_expiring && Ns(wheel_.planned_wake()) == plan_before)
        << "a refused exact arm changed entry " << id << " or the plan";
    return;
  }
  FUZZ_CHECK(result.ok()) << "exact arm " << id << " for " << at << " from tick " << from
                          << ": " << result.status();
  const Tick want = model_.ArmExact(id, deadline);
  requested_[id] = want;
  exact_[id] = true;
  deadline_[id] = deadline;
  CheckArmed(id, "exact arm", *result, want, plan_before);
}

void WheelFuzz::Cancel(int id) {
  const int64_t plan_before = Ns(wheel_.planned_wake());
  const bool model = model_.Cancel(id);
  bool plan_later = true;
  const bool wheel = wheel_.Cancel(&entries_[id], &plan_later);
  FUZZ_CHECK(wheel == model) << "cancel " << id << ": wheel " << wheel << ", model "
                             << model;
  const int64_t plan = Ns(wheel_.planned_wake());
  if (plan_later) {
    FUZZ_CHECK(plan > plan_before) << "cancel " << id << ": plan_later, but the plan went "
                                   << plan_before << " -> " << plan << " ns";
  } else {
    FUZZ_CHECK(plan == plan_before) << "cancel " << id << ": the plan moved "
                                    << plan_before << " -> " << plan
                                    << " ns without plan_later";
  }
}

void WheelFuzz::CheckFires(std::vector<WheelModel::Fire> got,
                           std::vector<WheelModel::Fire> want, bool by_instant,
                           const std::string& what) {
  for (size_t i = 0; i < got.size(); ++i) {
    const WheelModel::Fire& f = got[i];
    // The event instant the entry was armed for (the wheel says only its
    // tick; the fuzzer knows what it asked for).
    got[i].at = exact_[f.id] ? std::max<int64_t>(0, deadline_[f.id])
                             : static_cast<int64_t>(f.tick) * kTickNs;
    if (i > 0) {
      const WheelModel::Fire& p = got[i - 1];
      FUZZ_CHECK(by_instant ? p.at <= got[i].at : p.tick <= f.tick)
          << what << ": entry " << f.id << " (tick " << f.tick << ", at " << got[i].at
          << " ns) expired after entry " << p.id << " (tick " << p.tick << ", at " << p.at
          << " ns): not in " << (by_instant ? "time" : "tick") << " order";
    }
    FUZZ_CHECK(f.tick >= requested_[f.id])
        << "entry " << f.id << " expired at tick " << f.tick << ", asked for "
        << requested_[f.id] << ", " << what;
  }
  // The order within one instant is unspecified.
  auto by_time_then_id = [](const WheelModel::Fire& a, const WheelModel::Fire& b) {
    return a.at != b.at ? a.at < b.at : a.id < b.id;
  };
  std::vector<WheelModel::Fire> sorted = got;
  std::sort(sorted.begin(), sorted.end(), by_time_then_id);
  std::sort(want.begin(), want.end(), by_time_then_id);
  if (!(sorted == want)) {
    std::string g, w;
    for (const auto& f : sorted) g += " " + std::to_string(f.id) + "@" + std::to_string(f.at);
    for (const auto& f : want) w += " " + std::to_string(f.id) + "@" + std::to_string(f.at);
    FUZZ_CHECK(false) << what << ": expired" << g << "; model" << w;
  }
  plan_valid_ = false;  // a driver plans again after each advance
  // Periodic entries are re-armed, as the timer layer does after a run:
  // tick entries from their expiry tick (already processed by now, so
  // possibly clamped), exact ones for deadline + period (possibly passed).
  for (const WheelModel::Fire& f : got) {
    if (exact_[f.id] && exact_period_[f.id] != 0) {
      ArmExact(f.id, deadline_[f.id] + exact_period_[f.id]);
    } else if (!exact_[f.id] && period_[f.id] != 0) {
      Arm(f.id, f.tick + period_[f.id]);
    }
  }
}

void WheelFuzz::AdvanceTo(Tick to) {
  const Tick from = now();
  std::vector<WheelModel::Fire> got;
  wheel_.AdvanceTo(to, [&](WheelEntry* e) {
    // Under the wheel's lock: record only (no calls back into the wheel).
    got.push_back({Id(e), e->expires()});
  });
  for (const WheelModel::Fire& f : got) {
    FUZZ_CHECK(exact_[f.id] || (f.tick > from && f.tick <= to))
        << "entry " << f.id << " expired at tick " << f.tick << ", advancing " << from
        << " -> " << to;
  }
  CheckFires(std::move(got), model_.AdvanceTo(to), /*by_instant=*/false,
             "advancing to tick " + std::to_string(to) + " from " + std::to_string(from));
}

void WheelFuzz::AdvanceToInstant(int64_t t) {
  const int64_t from = processed();
  std::vector<WheelModel::Fire> got;
  wheel_.AdvanceToInstant(At(t), [&](WheelEntry* e) {
    got.push_back({Id(e), e->expires()});
  });
  CheckFires(std::move(got), model_.AdvanceToInstant(t), /*by_instant=*/true,
             "advancing to " + std::to_string(t) + " ns from " + std::to_string(from));
}

void WheelFuzz::PlanWake() {
  plan_ = Ns(wheel_.PlanWake());
  driver_wake_ = plan_;
  FUZZ_CHECK(plan_ == Ns(wheel_.NextEvent()) && plan_ == Ns(wheel_.planned_wake()))
      << "PlanWake " << plan_ << " ns, next event " << wheel_.NextEvent() << ", plan "
      << wheel_.planned_wake();
  plan_valid_ = true;
  wake_requested_ = false;
}

void WheelFuzz::CheckState() {
  FUZZ_CHECK(wheel_.now() == model_.now()) << "now " << wheel_.now() << ", model "
                                           << model_.now();
  FUZZ_CHECK(Ns(wheel_.processed()) == processed())
      << "processed " << wheel_.processed() << ", model " << processed() << " ns";
  FUZZ_CHECK(wheel_.size() == model_.size()) << "size " << wheel_.size()
                                             << ", model " << model_.size();
  for (int id = 0; id < kEntries; ++id) {
    FUZZ_CHECK(wheel_.IsArmed(&entries_[id]) == model_.IsArmed(id))
        << "entry " << id << " armed: wheel " << wheel_.IsArmed(&entries_[id]);
  }
  const Tick next_tick = wheel_.NextEventTick();
  const int64_t next = Ns(wheel_.NextEvent());
  if (model_.size() == 0) {
    FUZZ_CHECK(next_tick == kNoTick && next == kNever)
        << "empty wheel, next event tick " << next_tick << ", next event " << next;
  } else {
    const int64_t expiry = model_.NextEventNs();
    FUZZ_CHECK(next_tick == kNoTick || next_tick > now())
        << "next event tick " << next_tick << " at now " << now();
    // (The next event may be after the next event tick's instant: a tick
    // that holds only exact deadlines needs no wake-up of its own.)
    // Never after the next expiry; after processed() unless one is due.
    FUZZ_CHECK(next <= expiry && (next > processed() || expiry <= processed()))
        << "next event " << next << " ns at processed " << processed()
        << " ns, next expiry " << expiry << " ns";
    // Never earlier than needed: the expiry itself, a cascade, or the tick
    // an exact entry between ticks waits at.
    bool allowed = next == expiry ||
                   (next % kTickNs == 0 && (next / kTickNs) % kWorkWheelSpan == 0);
    for (int id = 0; id < kEntries && !allowed; ++id) {
      Tick before;
      if (model_.IsArmed(id) && model_.BetweenTicks(id, &before) && before > now()) {
        allowed = next == static_cast<int64_t>(before) * kTickNs;
      }
    }
    FUZZ_CHECK(allowed) << "next event " << next << " ns at now " << now()
                        << ": neither the next expiry (" << expiry
                        << " ns), a cascade, nor the tick before an exact deadline";
  }
  // planned_wake(): the next event whenever nothing is due by the plan.
  const int64_t plan = Ns(wheel_.planned_wake());
  if (plan > processed()) {
    FUZZ_CHECK(plan == next) << "planned_wake " << plan << " ns, but the next event is "
                             << next << " ns (processed " << processed() << " ns)";
  }
  if (plan_valid_ && !wake_requested_) {
    FUZZ_CHECK(next >= plan_) << "lost wake-up: event at " << next
                              << " ns before the planned wake " << plan_
                              << " ns and no arm asked for a wake";
  }
}

void WheelFuzz::Run(FuzzInput& in) {
  while (!in.empty() && now() < kHorizon) {
    const int id = static_cast<int>(in.Choice(kEntries));
    const int64_t tick_ns = static_cast<int64_t>(now()) * kTickNs;
    switch (in.Choice(24)) {
      case 0:  // near: the work wheel
        Arm(id, now() + in.Uint(0, kWorkWheelSpan + 100));
        break;
      case 1:  // far: level 1 or 2 (or, now and then, any level)
        Arm(id, now() + in.Uint(0, in.Choice(4) == 0 ? Tick{1} << 32 : 4 * kLevel2Unit));
        break;
      case 2: {  // anywhere, including beyond the maximum delay, maybe with
                 // a present tick ahead of now() (an idle wheel lags its clock)
        const Tick expires = now() + in.Uint(0, Tick{1} << 34);
        Arm(id, expires, in.Bool() ? now() + in.Uint(0, Tick{1} << 20) : 0);
        break;
      }
      case 3: {  // on a boundary, or next to one
        const Tick to_cascade = kWorkWheelSpan - now() % kWorkWheelSpan;
        const Tick edges[] = {0,     1,     2,     kWorkWheelSpan - 1,
                              kWorkWheelSpan,     kWorkWheelSpan + 1,
                              kLevel2Unit - 1,    kLevel2Unit,
                              kLevel2Unit + 1,    kMaxDelayTicks - 1,
                              kMaxDelayTicks, kMaxDelayTicks + 1,
                              to_cascade - 1, to_cascade, to_cascade + 1};
        const size_t n = sizeof(edges) / sizeof(edges[0]);
        const size_t pick = in.Choice(n + 3);
        if (pick < n) {
          Arm(id, now() + edges[pick]);
        } else {
          // The first tick of a unit of some level (or next to it): where
          // windows, starts and deadlines of the upper levels fall.
          const int shift = timer::UpperLevelShift(static_cast<int>(in.Uint(1, 5)));
          const Tick unit = Tick{1} << shift;
          const Tick ahead = in.Uint(1, 3);
          const Tick first = ((now() >> shift) + ahead) << shift;
          const Tick near[] = {first - 1, first, first + 1, first - kWorkWheelSpan,
                               first - kWorkWheelSpan - 1};
          Arm(id, near[pick - n == 0 ? 1 : in.Choice(5)] + (pick - n == 2 ? unit / 2 : 0));
        }
        break;
      }
      case 4:  // in the past (clamped), or the infinite tick (refused)
        if (in.Choice(8) == 0) {
          Arm(id, kNoTick);
        } else {
          Arm(id, now() - in.Uint(0, std::min<Tick>(now(), 1000)));
        }
        break;
      case 5:
        Cancel(id);
        break;
      case 6:
        AdvanceTo(now() + in.Uint(0, 8));
        break;
      case 7:
        AdvanceTo(now() + in.Uint(0, 10 * kWorkWheelSpan));
        break;
      case 8:
        AdvanceTo(std::min(kHorizon, now() + in.Uint(0, Tick{1} << 34)));
        break;
      case 9: {  // as the tick driver: up to just before the next event, then it
        const Tick next = wheel_.NextEventTick();
        if (next == kNoTick) break;
        AdvanceTo(next - 1);
        CheckState();
        AdvanceTo(next);
        break;
      }
      case 10:  // backwards: nothing happens
        AdvanceTo(now() - in.Uint(0, now()));
        break;
      case 11: {
        const int n = static_cast<int>(in.Uint(1, 64));
        for (int i = 0; i < n; ++i) {
          AdvanceTo(now() + 1);
          CheckState();
        }
        break;
      }
      case 12:
        PlanWake();
        break;
      case 13: {
        const Tick periods[] = {0, 1, 2, 7, kWorkWheelSpan - 1, kWorkWheelSpan,
                                kWorkWheelSpan + 1, kLevel2Unit};
        const size_t pick = in.Choice(sizeof(periods) / sizeof(periods[0]) + 1);
        period_[id] = pick < sizeof(periods) / sizeof(periods[0])
                          ? periods[pick]
                          : in.Uint(1, 2 * kLevel2Unit);
        break;
      }
      case 14: {  // the tick driver's loop: plan, sleep until the plan, advance
        const int n = static_cast<int>(in.Uint(1, 16));
        for (int i = 0; i < n; ++i) {
          PlanWake();
          if (plan_ == kNever || plan_ / kTickNs >= static_cast<int64_t>(kHorizon)) break;
          AdvanceTo(static_cast<Tick>(plan_ / kTickNs));
          CheckState();
        }
        break;
      }
      // --- Exact deadlines ---------------------------------------------
      case 15: {  // between ticks, a few ticks ahead: at an edge or anywhere
        const int64_t offsets[] = {1, kTickNs / 4, kTickNs / 2, kTickNs - 1};
        const int64_t ticks = static_cast<int64_t>(in.Uint(0, kWorkWheelSpan + 100));
        const size_t pick = in.Choice(5);
        const int64_t offset =
            pick < 4 ? offsets[pick] : static_cast<int64_t>(in.Uint(1, kTickNs - 1));
        ArmExact(id, tick_ns + ticks * kTickNs + offset, 0, in.Choice(8) == 0);
        break;
      }
      case 16:  // on a tick (an ordinary entry of it), maybe the current one
        ArmExact(id, tick_ns +
                         static_cast<int64_t>(in.Uint(0, 2 * kWorkWheelSpan + 100)) * kTickNs);
        break;
      case 17:  // within the tick being waited for, after processed()
        ArmExact(id, processed() + static_cast<int64_t>(in.Uint(0, kTickNs)));
        break;
      case 18: {  // in the past: just before processed(), ticks ago, before the epoch
        const int64_t back[] = {0, 1, kTickNs / 2, kTickNs, 3 * kTickNs + 7};
        const size_t pick = in.Choice(7);
        if (pick < 5) {
          ArmExact(id, processed() - back[pick]);
        } else if (pick == 5) {
          ArmExact(id, processed() - static_cast<int64_t>(in.Uint(0, 1000 * kTickNs)));
        } else {
          ArmExact(id, -static_cast<int64_t>(in.Uint(1, kTickNs)));
        }
        break;
      }
      case 19: {  // far ahead: rounds, the maximum delay's edge, beyond, infinite
        const int64_t max_ns = static_cast<int64_t>(kMaxDelayTicks) * kTickNs;
        const int64_t edges[] = {max_ns - kTickNs, max_ns - 1, max_ns, max_ns + 1,
                                 max_ns + kTickNs, max_ns + kTickNs / 2};
        const size_t pick = in.Choice(9);
        const Tick present = in.Bool() ? now() + in.Uint(0, Tick{1} << 20) : 0;
        if (pick < 6) {
          ArmExact(id, tick_ns + edges[pick], present);
        } else if (pick < 8) {
          ArmExact(id, tick_ns + static_cast<int64_t>(in.Uint(0, Tick{1} << 36)) * (kTickNs / 4) +
                           static_cast<int64_t>(in.Uint(0, kTickNs - 1)),
                   present);
        } else {
          ArmExact(id, 0, present, false, /*infinite=*/true);
        }
        break;
      }
      case 20: {  // to an instant: between ticks, by up to 8 ticks
        AdvanceToInstant(processed() + static_cast<int64_t>(in.Uint(0, 8 * kTickNs)));
        break;
      }
      case 21: {  // as the driver on instants: just before the next event, then at it
        const int64_t next = Ns(wheel_.NextEvent());
        if (next == kNever || next / kTickNs >= static_cast<int64_t>(kHorizon)) break;
        const int64_t back[] = {1, kTickNs / 2, 0};
        const size_t pick = in.Choice(3);
        if (next - back[pick] > processed()) {
          AdvanceToInstant(next - back[pick]);
          CheckState();
        }
        AdvanceToInstant(std::max(next, processed()));
        break;
      }
      case 22: {  // the driver's loop on instants: plan, sleep until it, advance,
                  // maybe woken a little late
        const int n = static_cast<int>(in.Uint(1, 16));
        const int64_t late = in.Bool() ? static_cast<int64_t>(in.Uint(0, kTickNs)) : 0;
        for (int i = 0; i < n; ++i) {
          PlanWake();
          if (plan_ == kNever || plan_ / kTickNs >= static_cast<int64_t>(kHorizon)) break;
          AdvanceToInstant(std::max(plan_, processed()) + late);
          CheckState();
        }
        break;
      }
      case 23: {  // an exact period (sub-tick ones too), or none
        const int64_t periods[] = {0,           250000,      500000,  1000000,
                                   1500000,     3000000,     5000000, kTickNs,
                                   kTickNs - 1, static_cast<int64_t>(kWorkWheelSpan) * kTickNs + 3};
        const size_t pick = in.Choice(sizeof(periods) / sizeof(periods[0]) + 1);
        exact_period_[id] = pick < sizeof(periods) / sizeof(periods[0])
                                ? periods[pick]
                                : static_cast<int64_t>(in.Uint(1, 100000000));
        break;
      }
    }
    CheckState();
  }
}

}  // namespace
}  // namespace fuzz
}  // namespace cyber

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  cyber::fuzz::QuietLogging();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  cyber::fuzz::FuzzInput in(data, size);
  cyber::fuzz::WheelFuzz fuzz;
  fuzz.Run(in);
  return 0;
}
