// wheel_fuzzer: the timing wheel against its reference model.
//
// Why: the wheel (timer/timing_wheel.h) is where "never early, never lost,
// exactly once" is actually enforced, with slot arithmetic, cascades,
// whole-round waits in the assistant wheel and bitmaps that skip empty
// stretches -- code whose bugs hide at boundaries (tick 511 vs 512, one round
// vs two, a re-arm from the past). tests/reference/wheel_model.h is an
// ordered map with the same documented rules; this fuzzer drives both with
// the same operation sequence and compares after every step. It is single
// threaded and cheap, so libFuzzer runs it tens of thousands of times a
// second.
//
// Each input is a program over 8 entries (see Run() for the decoding):
// arm near / far / beyond the maximum delay / on a boundary / in the past,
// cancel, advance by 0..2^34 ticks (also backwards, tick by tick, or straight
// to the next event, as the tick driver does), plan a wake, and give an entry
// a period so it is re-armed after each expiry from its expiry tick, as a
// periodic timer does (possibly from a tick already processed).
//
// Checked after every step:
//   - the same entries fire, at the same ticks, as in the model (so none
//     early, none lost, none twice), in tick order, none before the tick it
//     asked for and none after the tick advanced to;
//   - Arm reports the tick the model uses (a past tick becomes now + 1), a
//     new arm_seq each time, and OutOfRange beyond kMaxDelayTicks (counted
//     from now(), or from the caller's present tick if later) with the entry
//     left exactly as it was;
//   - now(), size(), IsArmed() agree with the model;
//   - NextEventTick() is kNoTick exactly when empty, else after now, never
//     after the model's next expiry, and either that expiry or a cascade
//     (a multiple of 512);
//   - no lost wake-up: after PlanWake(), as long as no Arm() reported
//     wake_needed, no event is earlier than the plan (a tick driver sleeping
//     until the plan would miss it).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

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

constexpr int kEntries = 8;
// Time stays below this, far from any 64-bit overflow.
constexpr Tick kHorizon = Tick{1} << 40;

class WheelFuzz {
 public:
  WheelFuzz() : wheel_(Instant(), timer::kTimerResolution), entries_(kEntries) {}
  ~WheelFuzz() {
    for (WheelEntry& e : entries_) wheel_.Cancel(&e);
  }

  void Run(FuzzInput& in);

 private:
  int Id(const WheelEntry* e) const { return static_cast<int>(e - entries_.data()); }
  Tick now() const { return model_.now(); }

  // `present`: the caller's idea of the current tick (see TimingWheel::Arm).
  void Arm(int id, Tick expires, Tick present = 0);
  void Cancel(int id);
  void AdvanceTo(Tick to);
  void PlanWake();
  void CheckState();

  TimingWheel wheel_;
  std::vector<WheelEntry> entries_;
  WheelModel model_;
  uint32_t arm_seq_[kEntries] = {};
  Tick requested_[kEntries] = {};  // the tick the latest arm asked for
  Tick period_[kEntries] = {};     // non-zero: re-armed after each expiry
  // The last PlanWake(), valid until the next advance, and whether an arm
  // has asked for a wake-up since.
  bool plan_valid_ = false;
  Tick plan_ = kNoTick;
  bool wake_requested_ = false;
};

void WheelFuzz::Arm(int id, Tick expires, Tick present) {
  WheelEntry& e = entries_[id];
  const Tick from = std::max(now(), present);
  const bool out_of_range =
      expires == kNoTick || (expires > from && expires - from > kMaxDelayTicks);
  const bool was_armed = model_.IsArmed(id);
  const Tick was_expiring = e.expires();
  auto result = wheel_.Arm(&e, expires, present);
  if (out_of_range) {
    FUZZ_CHECK(!result.ok() && result.status().code() == absl::StatusCode::kOutOfRange)
        << "arm " << id << " at tick " << expires << " from " << now()
        << " should be OutOfRange, got "
        << (result.ok() ? std::string("OK") : result.status().ToString());
    FUZZ_CHECK(wheel_.IsArmed(&e) == was_armed && e.arm_seq() == arm_seq_[id] &&
               e.expires() == was_expiring)
        << "a refused arm changed entry " << id;
    return;
  }
  FUZZ_CHECK(result.ok()) << "arm " << id << " at " << expires << " from " << now()
                          << ": " << result.status();
  const Tick want = model_.Arm(id, expires);
  FUZZ_CHECK(result->expires == want && e.expires() == want)
      << "entry " << id << " asked for tick " << expires << " at " << now()
      << ": armed for " << result->expires << ", model " << want;
  FUZZ_CHECK(result->arm_seq == arm_seq_[id] + 1 && e.arm_seq() == result->arm_seq)
      << "entry " << id << ": arm_seq " << result->arm_seq << " after "
      << arm_seq_[id];
  arm_seq_[id] = result->arm_seq;
  requested_[id] = expires;
  if (result->wake_needed) wake_requested_ = true;
}

void WheelFuzz::Cancel(int id) {
  const bool model = model_.Cancel(id);
  const bool wheel = wheel_.Cancel(&entries_[id]);
  FUZZ_CHECK(wheel == model) << "cancel " << id << ": wheel " << wheel << ", model "
                             << model;
}

void WheelFuzz::AdvanceTo(Tick to) {
  const Tick from = now();
  std::vector<WheelModel::Fire> got;
  wheel_.AdvanceTo(to, [&](WheelEntry* e) {
    // Under the wheel's lock: record only (no calls back into the wheel).
    got.push_back({Id(e), e->expires()});
  });
  std::vector<WheelModel::Fire> want = model_.AdvanceTo(to);
  for (size_t i = 0; i < got.size(); ++i) {
    const WheelModel::Fire& f = got[i];
    FUZZ_CHECK(i == 0 || got[i - 1].tick <= f.tick)
        << "advancing " << from << " -> " << to << ": entry " << f.id << " (tick "
        << f.tick << ") expired after tick " << got[i - 1].tick;
    FUZZ_CHECK(f.tick >= requested_[f.id] && f.tick > from && f.tick <= to)
        << "entry " << f.id << " expired at tick " << f.tick << ", asked for "
        << requested_[f.id] << ", advancing " << from << " -> " << to;
  }
  // The order within one tick is unspecified.
  auto by_tick_then_id = [](const WheelModel::Fire& a, const WheelModel::Fire& b) {
    return a.tick != b.tick ? a.tick < b.tick : a.id < b.id;
  };
  std::sort(got.begin(), got.end(), by_tick_then_id);
  std::sort(want.begin(), want.end(), by_tick_then_id);
  FUZZ_CHECK(got == want) << "advancing " << from << " -> " << to << ": "
                          << got.size() << " expiries, model " << want.size()
                          << (got.empty() || want.empty() ? "" : "; first differ");
  plan_valid_ = false;  // a driver plans again after each advance
  // Periodic entries are re-armed from their expiry tick (already processed
  // by now, so possibly clamped), as the timer layer does after a run.
  for (const WheelModel::Fire& f : got) {
    if (period_[f.id] != 0) Arm(f.id, f.tick + period_[f.id]);
  }
}

void WheelFuzz::PlanWake() {
  plan_ = wheel_.PlanWake();
  FUZZ_CHECK(plan_ == wheel_.NextEventTick()) << "PlanWake " << plan_;
  plan_valid_ = true;
  wake_requested_ = false;
}

void WheelFuzz::CheckState() {
  FUZZ_CHECK(wheel_.now() == model_.now()) << "now " << wheel_.now() << ", model "
                                           << model_.now();
  FUZZ_CHECK(wheel_.size() == model_.size()) << "size " << wheel_.size()
                                             << ", model " << model_.size();
  for (int id = 0; id < kEntries; ++id) {
    FUZZ_CHECK(wheel_.IsArmed(&entries_[id]) == model_.IsArmed(id))
        << "entry " << id << " armed: wheel " << wheel_.IsArmed(&entries_[id]);
  }
  const Tick next = wheel_.NextEventTick();
  if (model_.size() == 0) {
    FUZZ_CHECK(next == kNoTick) << "empty wheel, next event " << next;
  } else {
    const Tick expiry = model_.NextExpiry();
    FUZZ_CHECK(next > now() && next <= expiry &&
               (next == expiry || next % kWorkWheelSpan == 0))
        << "next event " << next << " at now " << now() << ", next expiry " << expiry;
  }
  if (plan_valid_ && !wake_requested_) {
    FUZZ_CHECK(next >= plan_) << "lost wake-up: event at tick " << next
                              << " before the planned wake " << plan_
                              << " and no arm asked for a wake";
  }
}

void WheelFuzz::Run(FuzzInput& in) {
  while (!in.empty() && now() < kHorizon) {
    const int id = static_cast<int>(in.Choice(kEntries));
    switch (in.Choice(15)) {
      case 0:  // near: the work wheel
        Arm(id, now() + in.Uint(0, 600));
        break;
      case 1:  // far: the assistant wheel, a few rounds
        Arm(id, now() + in.Uint(0, Tick{1} << 17));
        break;
      case 2: {  // anywhere, including beyond the maximum delay, maybe with
                 // a present tick ahead of now() (an idle wheel lags its clock)
        const Tick expires = now() + in.Uint(0, Tick{1} << 34);
        Arm(id, expires, in.Bool() ? now() + in.Uint(0, Tick{1} << 20) : 0);
        break;
      }
      case 3: {  // on a boundary, or next to one
        const Tick to_cascade = kWorkWheelSpan - now() % kWorkWheelSpan;
        const Tick edges[] = {0,     1,     2,     511,   512,   513,
                              32767, 32768, 32769, kMaxDelayTicks - 1,
                              kMaxDelayTicks, kMaxDelayTicks + 1,
                              to_cascade - 1, to_cascade, to_cascade + 1};
        Arm(id, now() + edges[in.Choice(sizeof(edges) / sizeof(edges[0]))]);
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
        AdvanceTo(now() + in.Uint(0, 5000));
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
        const Tick periods[] = {0, 1, 2, 7, 511, 512, 513, 32768};
        const size_t pick = in.Choice(sizeof(periods) / sizeof(periods[0]) + 1);
        period_[id] = pick < sizeof(periods) / sizeof(periods[0])
                          ? periods[pick]
                          : in.Uint(1, 70000);
        break;
      }
      case 14: {  // the tick driver's loop: plan, sleep until the plan, advance
        const int n = static_cast<int>(in.Uint(1, 16));
        for (int i = 0; i < n; ++i) {
          PlanWake();
          if (plan_ == kNoTick || plan_ >= kHorizon) break;
          AdvanceTo(plan_);
          CheckState();
        }
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
