// timer_ops_fuzzer: sequences of Timer operations on simulated time, every
// call checked against the contract model (tests/reference/timer_model.h).
//
// Why: the timer's promises -- never early, never after Stop() returned,
// never lost, exactly once, periodic calls phase-locked, overruns handled by
// policy, bad options refused with a clear error -- interact: a Stop() from
// another timer's callback in the same tick, a restart from inside the own
// callback, a run that takes three periods, a refused dispatch, a reconfigure
// mid-schedule. Hand-written tests cover the cases someone thought of; this
// covers the orders nobody wrote down, deterministically (simulated clock,
// inline dispatch), so every finding replays exactly.
//
// The system is a TimerSystem (a 2 ms tick, or for some inputs another: 1 ms,
// 3 ms, 1.5 ms, 10 us) on a SimulatedClock with an inline dispatcher that can
// be switched to refuse everything (as a full scheduler would), advanced
// event by event like timer/testing/simulated_timer_system.h. Four
// timer slots; operations come from three logical threads:
//   - the main thread (the test driver): configure (valid and invalid
//     options: zero and negative periods, which a oneshot takes as "at
//     once", sub-tick and off-grid periods and delays (250 us .. 5 ms), the
//     exact maximum, beyond it and infinite ("never"), kTick or kExact
//     oneshots, no callback, kBurst with max_burst < 1), schedule,
//     stop, restart, destroy, advance simulated time (sub-tick, by ticks, by
//     days, to just before / exactly at the next due tick), switch refusals,
//     shut the tick driver down;
//   - a helper thread the main thread hands the same operations to (and
//     waits for), so they come from a thread that is neither the driver's
//     nor the tick thread;
//   - the callbacks themselves, on the tick thread: each slot has a script of
//     actions its calls perform in turn: take simulated time (from a
//     nanosecond to several periods: overruns), stop itself or another timer,
//     schedule or restart one, destroy or reconfigure one (itself included),
//     throw, or have the helper thread Stop() its own timer and restart it
//     while that Stop() waits for the call (the stop must win).
//
// Checked after every step, against one model per configured timer:
//   - every call is the one expected next (TimerEvent.expected_time and
//     missed_periods), not early, not before it is due (periodic calls, kExact
//     oneshots and delays <= 0 at their exact instant, kTick oneshots at
//     their tick), and exactly then (or, armed for an instant already passed,
//     at once) unless another callback took simulated time first;
//   - a timer whose period or delay is beyond the wheel's range is running
//     and never called;
//   - no call of a stopped, finished, destroyed or reconfigured timer;
//   - whenever the tick thread is idle, no running timer's call is overdue
//     (lost), and with refusals on, every due call was refused exactly once;
//   - Schedule()/Configure() return the documented status (the error names
//     the timer); IsRunning() and GetStatistics() (fires, overruns, missed
//     periods, exceptions, refusals, no early fires; lateness and run-time
//     maxima exact, percentiles within the histogram's 1/8) agree with the
//     model.
//
// Each input is bounded: at most kMaxEvents calls plus refusals and
// kMaxSteps wake-ups of the tick thread.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "cyber/time/simulated_clock.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/quiet_logging.h"
#include "tests/reference/timer_model.h"
#include "timer/dispatcher.h"
#include "timer/timer_system.h"
#include "timer/timer.h"

namespace cyber {
namespace fuzz {
namespace {

// Timers of even slots keep percentile histograms
// (TimerOptions::latency_percentiles), odd ones only the counters and maxima.
bool KeepsPercentiles(int slot) { return slot % 2 == 0; }

using reference::TickGrid;
using reference::TimerModel;
using timer::Tick;

constexpr int kSlots = 4;
// The wheel's tick, chosen by the input's first byte: mostly the process
// resolution (2 ms), sometimes another, so that rounding and the limits
// derived from the tick (resolution, maximum delay) are exercised apart from
// the one value everything else assumes.
absl::Duration DecodeTick(FuzzInput& in) {
  const absl::Duration ticks[] = {timer::kTimerResolution, absl::Milliseconds(1),
                                  absl::Milliseconds(3), absl::Microseconds(1500),
                                  absl::Microseconds(10)};
  const uint8_t pick = in.Byte();
  return pick < 0xC0 ? ticks[0] : ticks[pick % (sizeof(ticks) / sizeof(ticks[0]))];
}
// Calls plus refused dispatches, and wake-ups of the tick thread, per input:
// keeps each input well under a second even when a 2 ms timer meets "advance
// by a day", or a long timer's cascades down the wheel's levels meet
// "advance by 200 days". Past either budget, time stops
// advancing and the input ends.
constexpr uint64_t kMaxEvents = 1000;
constexpr uint64_t kMaxSteps = 2000;

// Runs each task inline (on the tick thread), or refuses all of them while
// `refuse` is set, as a full scheduler would.
class SwitchableDispatcher final : public timer::Dispatcher {
 public:
  using timer::Dispatcher::Dispatch;
  bool Dispatch(std::function<void()> task, int /*priority*/) override {
    if (refuse.load()) {
      refused.fetch_add(1);
      return false;
    }
    task();
    return true;
  }
  std::atomic<bool> refuse{false};
  std::atomic<uint64_t> refused{0};
};

// A thread the main thread hands an operation to and waits for.
class Helper {
 public:
  Helper() : thread_([this] { Loop(); }) {}
  ~Helper() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      quit_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  Helper(const Helper&) = delete;
  Helper& operator=(const Helper&) = delete;

  void Run(std::function<void()> job) {
    Post(std::move(job));
    Join();
  }
  // Starts `job` on the helper thread and returns at once; Join() waits for
  // it. REQUIRES: no job in progress.
  void Post(std::function<void()> job) {
    std::unique_lock<std::mutex> lock(mu_);
    job_ = std::move(job);
    busy_ = true;
    cv_.notify_all();
  }
  // Returns once the posted job has finished. (Not "job_ is empty": the
  // helper moves the job out before it runs it.)
  void Join() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return !busy_; });
  }

 private:
  void Loop() {
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      cv_.wait(lock, [this] { return quit_ || job_; });
      if (quit_) return;
      std::function<void()> job = std::move(job_);
      lock.unlock();
      job();
      lock.lock();
      job_ = nullptr;
      busy_ = false;
      cv_.notify_all();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::function<void()> job_;
  bool busy_ = false;  // a job is posted and has not finished
  bool quit_ = false;
  std::thread thread_;  // last: starts after the fields it uses
};

// Timer options as decoded from the input, plus the model's view of them.
struct Spec {
  TimerModel::Options model;
  bool event_callback = true;
  OverrunPolicy policy = OverrunPolicy::kSkip;
};

struct Slot {
  std::unique_ptr<Timer> timer;
  // The model of the current configuration; null when there is no timer or
  // its options are invalid (then Schedule() must answer config_code).
  std::unique_ptr<TimerModel> model;
  absl::StatusCode config_code = absl::StatusCode::kOk;
  // Bumped whenever the slot's timer is destroyed or reconfigured: a call
  // carrying an older incarnation would be a call after Stop() returned.
  uint64_t incarnation = 0;
  // Callback actions, two bytes each, performed one per call, cyclically.
  std::string script;
  size_t script_pos = 0;
};

class TimerFuzz {
 public:
  explicit TimerFuzz(FuzzInput& in)
      : tick_(DecodeTick(in)),
        clock_(Instant() + absl::Hours(1)),
        driver_(&clock_, &dispatcher_, DriverOptions(tick_)),
        grid_(driver_.wheel().epoch(), tick_) {}

  ~TimerFuzz() {
    // Timers go before the driver they are armed on.
    for (Slot& s : slots_) {
      ++s.incarnation;
      s.timer.reset();
    }
  }

  void Run(FuzzInput& in);

 private:
  static timer::TimerSystem::Options DriverOptions(absl::Duration tick) {
    timer::TimerSystem::Options o;
    o.tick = tick;
    o.name = "fuzz-tick";
    return o;
  }
  bool over_budget() const {
    return calls_ + dispatcher_.refused.load() >= kMaxEvents || steps_ >= kMaxSteps;
  }
  Tick processed() const { return driver_.wheel().now(); }
  std::string Name(int i) const { return "fuzz" + std::to_string(i); }

  Spec DecodeSpec(FuzzInput& in);
  absl::Duration DecodePeriod(FuzzInput& in);

  // Operations; from the main thread, the helper or a callback.
  void Configure(int i, const Spec& spec, bool reuse);
  void StopFromAnotherThreadWhileRestarting(int i);
  void Schedule(int i);
  void Stop(int i);
  void Destroy(int i);

  // A call of slot `i` (configuration `incarnation`) on the tick thread.
  void OnCall(int i, uint64_t incarnation, const TimerEvent* event);
  // The next scripted action of slot `i`; true if it asks to throw.
  bool PerformAction(int i);
  absl::Duration RunTime(uint8_t pick, absl::Duration period) const;

  // Advances simulated time event by event (stopping early once the event
  // budget is spent), checking at every idle point.
  void RunUntil(Instant t);
  void Idle();
  // Accounts, in the models, for the dispatches refused up to now.
  void CatchUpRefusals();
  void CheckIdle();
  // The lateness and run-time maxima and percentiles (sorting every sample:
  // once per input, at the end).
  void CheckDistributions();

  const absl::Duration tick_;  // the wheel's tick
  SimulatedClock clock_;
  SwitchableDispatcher dispatcher_;
  timer::TimerSystem driver_;
  const TickGrid grid_;
  Helper helper_;
  Slot slots_[kSlots];
  Spec specs_[kSlots];  // what callbacks reconfigure timers to
  bool shut_down_ = false;
  // A callback took simulated time since the main thread last moved the
  // clock: later calls may be late (never early).
  bool delayed_ = false;
  uint64_t calls_ = 0;
  uint64_t steps_ = 0;  // times RunUntil woke the tick thread
  uint64_t model_refusals_ = 0;
  // Held by Schedule() (timer and model) and by each call: a call that
  // begins at once, before Schedule() has returned, finds the model
  // started. Recursive: callbacks schedule timers.
  std::recursive_mutex model_mu_;
};

absl::Duration TimerFuzz::DecodePeriod(FuzzInput& in) {
  const absl::Duration max = driver_.wheel().max_delay();
  switch (in.Choice(12)) {
    case 0:
      return tick_ * static_cast<int64_t>(in.Uint(1, 64));
    case 1:
      return tick_ * static_cast<int64_t>(in.Uint(1, 1024));
    case 2:
      return tick_ * static_cast<int64_t>(in.Uint(1, 70000));
    case 3:  // whole milliseconds: odd ones are not whole ticks
      return absl::Milliseconds(static_cast<int64_t>(in.Uint(1, 50)));
    case 4:
      return absl::Nanoseconds(static_cast<int64_t>(in.Uint(0, 12000000)));
    case 5: {  // not positive: a periodic timer refuses it, a oneshot runs at once
      const absl::Duration bad[] = {absl::ZeroDuration(), -tick_, -absl::Nanoseconds(1),
                                    -absl::Seconds(1), -absl::InfiniteDuration()};
      return bad[in.Choice(sizeof(bad) / sizeof(bad[0]))];
    }
    case 6: {  // around the limits
      const absl::Duration edge[] = {max,
                                     max - absl::Nanoseconds(1),
                                     max + absl::Nanoseconds(1),
                                     max - tick_,
                                     absl::Hours(24),
                                     absl::Hours(24) + absl::Nanoseconds(1),
                                     absl::Hours(1),
                                     absl::InfiniteDuration()};
      return edge[in.Choice(sizeof(edge) / sizeof(edge[0]))];
    }
    case 7: {  // sub-tick and off-grid periods and delays, served exactly
      const absl::Duration odd[] = {absl::Microseconds(250), absl::Microseconds(500),
                                    absl::Milliseconds(1),   absl::Microseconds(1500),
                                    absl::Milliseconds(3),   absl::Milliseconds(5),
                                    tick_ - absl::Nanoseconds(1), tick_ / 3};
      return odd[in.Choice(sizeof(odd) / sizeof(odd[0]))];
    }
    default:
      return tick_ * static_cast<int64_t>(in.Uint(1, 16));
  }
}

Spec TimerFuzz::DecodeSpec(FuzzInput& in) {
  Spec spec;
  const uint8_t flags = in.Byte();
  spec.model.oneshot = (flags & 1) != 0;
  const int callback = (flags >> 1) & 3;  // 0: none (invalid), 1: plain, 2-3: event
  spec.model.has_callback = callback != 0;
  spec.event_callback = callback >= 2;
  switch (((flags >> 3) & 3) % 3) {
    case 0:
      spec.policy = OverrunPolicy::kSkip;
      spec.model.policy = TimerModel::Policy::kSkip;
      break;
    case 1:
      spec.policy = OverrunPolicy::kDelay;
      spec.model.policy = TimerModel::Policy::kDelay;
      break;
    default:
      spec.policy = OverrunPolicy::kBurst;
      spec.model.policy = TimerModel::Policy::kBurst;
      break;
  }
  spec.model.max_burst = ((flags >> 5) & 7) - 1;  // -1..6
  // Policy bits 3 (kSkip, as 0) also ask for TimerPrecision::kExact (a
  // oneshot's deadline itself; a periodic schedule's origin at Start()).
  spec.model.exact = ((flags >> 3) & 3) == 3;
  spec.model.period = DecodePeriod(in);
  return spec;
}

void TimerFuzz::Configure(int i, const Spec& spec, bool reuse) {
  Slot& s = slots_[i];
  TimerOptions o;
  o.name = Name(i);
  o.period = spec.model.period;
  o.oneshot = spec.model.oneshot;
  o.overrun_policy = spec.policy;
  o.max_burst = spec.model.max_burst;
  o.latency_percentiles = KeepsPercentiles(i);
  o.precision = spec.model.exact ? TimerPrecision::kExact : TimerPrecision::kTick;
  const uint64_t incarnation = ++s.incarnation;  // before the old one stops
  if (spec.model.has_callback) {
    if (spec.event_callback) {
      o.event_callback = [this, i, incarnation](const TimerEvent& e) {
        OnCall(i, incarnation, &e);
      };
    } else {
      o.callback = [this, i, incarnation] { OnCall(i, incarnation, nullptr); };
    }
  }
  const absl::StatusCode code = TimerModel::ConfigCode(spec.model);
  s.model.reset();
  if (reuse && s.timer != nullptr) {
    const absl::Status status = s.timer->Configure(std::move(o));
    FUZZ_CHECK(status.code() == code)
        << "Configure(" << Name(i) << ", period "
        << absl::FormatDuration(spec.model.period) << "): " << status
        << ", expected code " << absl::StatusCodeToString(code);
    FUZZ_CHECK(status.ok() || status.message().find("timer \"" + Name(i) + "\"") !=
                                  std::string::npos)
        << "the error does not name the timer: " << status;
  } else {
    s.timer.reset();
    s.timer = std::make_unique<Timer>(std::move(o), &driver_);
  }
  s.config_code = code;
  if (code == absl::StatusCode::kOk) {
    TimerModel::Options options = spec.model;
    options.max_delay = driver_.wheel().max_delay();
    s.model = std::make_unique<TimerModel>(grid_, options);
  }
}

void TimerFuzz::Schedule(int i) {
  // A oneshot whose delay is <= 0 runs at once: on the tick thread, maybe
  // before Schedule() returns. Its call (OnCall) waits until the model has
  // started too.
  std::lock_guard<std::recursive_mutex> lock(model_mu_);
  Slot& s = slots_[i];
  if (s.timer == nullptr) return;
  const Instant now = clock_.Now();
  const Tick before = processed();
  const absl::Status status = s.timer->Schedule();
  absl::StatusCode want = absl::StatusCode::kOk;
  if (s.model == nullptr) {
    want = s.config_code;
  } else if (shut_down_) {
    want = absl::StatusCode::kFailedPrecondition;
  }
  FUZZ_CHECK(status.code() == want)
      << "Schedule(" << Name(i) << ") at " << now << ": " << status
      << ", expected code " << absl::StatusCodeToString(want)
      << (s.model ? "; period " + absl::FormatDuration(s.model->options().period)
                  : std::string());
  FUZZ_CHECK(status.ok() ||
             status.message().find("timer \"" + Name(i) + "\"") != std::string::npos)
      << "the error does not name the timer: " << status;
  if (status.ok()) s.model->Start(now, before);
}

void TimerFuzz::Stop(int i) {
  Slot& s = slots_[i];
  if (s.timer == nullptr) return;
  s.timer->Stop();
  if (s.model != nullptr) s.model->Stop();
}

void TimerFuzz::Destroy(int i) {
  Slot& s = slots_[i];
  ++s.incarnation;
  s.model.reset();
  s.timer.reset();  // stops it (also from its own callback)
}

absl::Duration TimerFuzz::RunTime(uint8_t pick, absl::Duration period) const {
  const absl::Duration ns = absl::Nanoseconds(1);
  absl::Duration d;
  switch (pick % 16) {
    case 0: d = ns; break;
    case 1: d = tick_ / 2; break;
    case 2: d = tick_ - ns; break;
    case 3: d = tick_; break;
    case 4: d = tick_ + ns; break;
    case 5: d = period / 2 - ns; break;
    case 6: d = period / 2; break;
    case 7: d = period - ns; break;
    case 8: d = period; break;
    case 9: d = period + ns; break;
    case 10: d = period + tick_; break;
    case 11: d = period * 2; break;
    case 12: d = period * 3 + tick_ / 2; break;
    case 13: d = period * 7; break;
    case 14: d = absl::Seconds(1); break;
    default: d = absl::ZeroDuration(); break;
  }
  // Long enough to skip many periods; short enough to stay cheap.
  return std::max(absl::ZeroDuration(), std::min(d, absl::Hours(1)));
}

bool TimerFuzz::PerformAction(int i) {
  Slot& s = slots_[i];
  if (s.script.size() < 2) return false;
  // Past the budget, callbacks do nothing: a oneshot of delay <= 0 that
  // restarts itself runs at once, for ever, without time moving (found as
  // a timeout of the first run; the contract, not a bug).
  if (calls_ >= kMaxEvents) return false;
  if (s.script_pos + 1 >= s.script.size()) s.script_pos = 0;
  const uint8_t kind = static_cast<uint8_t>(s.script[s.script_pos]);
  const uint8_t arg = static_cast<uint8_t>(s.script[s.script_pos + 1]);
  s.script_pos += 2;
  if (Verbose()) {
    std::fprintf(stderr, "timer_ops:   %s call %llu action %d arg %d\n", Name(i).c_str(),
                 static_cast<unsigned long long>(calls_), (kind & 0x0f) % 10, arg);
  }
  const int other = arg % kSlots;
  // Take time first. Once the budget is spent callbacks take none: a
  // callback that always outlasts its period is called back to back for ever
  // (kSkip, kBurst), and simulated time would only move on the tick thread.
  if ((kind & 0x10) != 0 && s.model != nullptr && calls_ < kMaxEvents) {
    const absl::Duration d = RunTime(arg >> 2, s.model->options().period);
    if (d > absl::ZeroDuration()) {
      clock_.Advance(d);
      delayed_ = true;
    }
  }
  switch ((kind & 0x0f) % 10) {
    case 1:
      Stop(i);
      break;
    case 2:
      Stop(other);
      break;
    case 3:
      Schedule(other);
      break;
    case 4:  // restart itself
      Stop(i);
      Schedule(i);
      break;
    case 5:
      Schedule(i);
      break;
    case 6:
      Destroy(other);
      break;
    case 7: {
      const int target = (kind & 0x20) != 0 ? i : other;
      Configure(target, specs_[(arg >> 2) % kSlots], (kind & 0x40) != 0);
      if ((kind & 0x80) != 0) Schedule(target);
      break;
    }
    case 8:
      return true;
    case 9:
      StopFromAnotherThreadWhileRestarting(i);
      break;
    default:
      break;
  }
  return false;
}

// From the callback of periodic timer i: another thread calls Stop(), and
// while that Stop() waits for this very call, the call restarts its timer
// (a watchdog re-arming itself). The stop wins: when it returns the timer
// is stopped (checked by CheckIdle via IsRunning and the model), and no
// further call begins.
void TimerFuzz::StopFromAnotherThreadWhileRestarting(int i) {
  Slot& s = slots_[i];
  if (s.timer == nullptr || s.model == nullptr || s.model->options().oneshot ||
      !s.timer->IsRunning()) {
    return;
  }
  Timer* const timer = s.timer.get();
  helper_.Post([timer] { timer->Stop(); });  // joined in Idle()
  // The waiting Stop() turns IsRunning() false (under the timer's lock, in
  // the same step that registers it as a waiter).
  const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (timer->IsRunning()) {
    FUZZ_CHECK(std::chrono::steady_clock::now() < limit)
        << Name(i) << ": Stop() from another thread did not begin within 30 s";
    std::this_thread::yield();
  }
  const absl::Status restarted = timer->Schedule();
  FUZZ_CHECK(restarted.ok()) << Name(i) << ": restart while Stop() waits: "
                             << restarted;
  s.model->Stop();  // the stop that is waiting wins over that restart
}

void TimerFuzz::OnCall(int i, uint64_t incarnation, const TimerEvent* event) {
  std::lock_guard<std::recursive_mutex> lock(model_mu_);  // see Schedule()
  Slot& s = slots_[i];
  FUZZ_CHECK(s.incarnation == incarnation && s.model != nullptr)
      << Name(i) << ": callback of a destroyed or reconfigured timer";
  const Instant actual = clock_.Now();
  const Tick tick = processed();
  if (event != nullptr) {
    FUZZ_CHECK(event->actual_time == actual)
        << Name(i) << ": TimerEvent.actual_time " << event->actual_time << ", clock "
        << actual;
  }
  s.model->Dispatched(actual);
  const std::string wrong = s.model->CheckCall(
      event != nullptr, event != nullptr ? event->expected_time : Instant(),
      event != nullptr ? event->missed_periods : 0, actual, driver_.wheel().processed(),
      !delayed_);
  FUZZ_CHECK(wrong.empty()) << Name(i) << ": " << wrong;
  const uint64_t generation = s.model->BeginCall(actual);
  ++calls_;
  const bool to_throw = PerformAction(i);
  // The run ends now; the timer re-arms from here (unless the callback
  // stopped, restarted, reconfigured or destroyed it).
  if (s.incarnation == incarnation && s.model != nullptr) {
    s.model->EndRun(generation, clock_.Now(), tick, to_throw);
  }
  if (to_throw) {
    if ((calls_ & 1) != 0) throw std::runtime_error("fuzz: callback throws");
    throw 7;  // not a std::exception
  }
}

void TimerFuzz::CatchUpRefusals() {
  if (!dispatcher_.refuse.load() || shut_down_) return;
  const Instant now = clock_.Now();
  for (Slot& s : slots_) {
    if (s.model == nullptr) continue;
    // Every call due by now was refused in the tick thread's pass at the
    // instant it came due (or at once, if armed after that: no callback
    // ran to delay the tick thread), and each refusal re-armed it later.
    while (s.model->running() && !s.model->never() && s.model->due() <= now) {
      const Instant pass = s.model->pass();
      s.model->Dispatched(pass);
      s.model->Refused(pass, grid_.Floor(pass));
      ++model_refusals_;
    }
  }
}

// What LatencyHistogram promises for `samples`: the exact maximum, and the
// q-quantile (the ceil(q * n)-th smallest sample) reported as at most 1/8
// above itself, never below, never above the maximum (and as the maximum
// from 2^37 ns on). "" if it holds.
std::string CheckDistribution(const char* what, std::vector<absl::Duration> samples,
                              absl::Duration max, const std::pair<double, absl::Duration>* q,
                              size_t quantiles) {
  std::ostringstream out;
  std::sort(samples.begin(), samples.end());
  const absl::Duration want_max =
      samples.empty() ? absl::ZeroDuration() : absl::Nanoseconds(absl::ToInt64Nanoseconds(samples.back()));
  if (max != want_max) {
    out << what << " max " << max << ", expected " << want_max;
    return out.str();
  }
  for (size_t i = 0; i < quantiles; ++i) {
    const double quantile = q[i].first;
    const absl::Duration reported = q[i].second;
    if (samples.empty()) {
      if (reported != absl::ZeroDuration()) out << what << " p" << quantile * 100 << " " << reported << " with no samples";
      continue;
    }
    const uint64_t n = samples.size();
    // ceil(q * n), in integers: q is 0.5 or 0.99.
    const uint64_t rank = quantile == 0.5 ? (n + 1) / 2 : (99 * n + 99) / 100;
    const int64_t truth = absl::ToInt64Nanoseconds(samples[std::max<uint64_t>(rank, 1) - 1]);
    const int64_t got = absl::ToInt64Nanoseconds(reported);
    // From 2^37 ns (~137 s) on, one overflow bucket reports the maximum.
    const bool overflow = truth >= (int64_t{1} << 37);
    if (overflow ? reported != max
                 : (got < truth || got > truth + truth / 8 || reported > max)) {
      out << what << " p" << quantile * 100 << " " << reported << ", but the "
          << rank << "-th of " << n << " samples is " << absl::Nanoseconds(truth)
          << " (max " << max << ")";
    }
  }
  return out.str();
}

void TimerFuzz::CheckIdle() {
  const Instant now = clock_.Now();
  FUZZ_CHECK(dispatcher_.refused.load() == model_refusals_)
      << "dispatches refused: " << dispatcher_.refused.load() << ", model "
      << model_refusals_;
  for (int i = 0; i < kSlots; ++i) {
    const Slot& s = slots_[i];
    if (s.timer == nullptr) continue;
    const bool running = s.model != nullptr && s.model->running();
    if (running && !shut_down_ && !s.model->never()) {
      FUZZ_CHECK(s.model->due() > now)
          << Name(i) << ": lost call: call " << s.model->k() << " expected at "
          << s.model->expected() << " is due at " << s.model->due() << " (armed at "
          << s.model->armed_at() << "), but at " << now << " it has not happened";
    }
    // On a shut-down system nothing will run again: IsRunning() is false.
    FUZZ_CHECK(s.timer->IsRunning() == (running && !shut_down_))
        << Name(i) << ": IsRunning() " << s.timer->IsRunning() << ", model "
        << running << (shut_down_ ? " (system shut down)" : "");
    const TimerStatistics st = s.timer->GetStatistics();
    const TimerModel::Counters want =
        s.model != nullptr ? s.model->counters() : TimerModel::Counters();
    FUZZ_CHECK(st.fires == want.fires && st.overruns == want.overruns &&
               st.missed_periods == want.missed_periods &&
               st.exceptions == want.exceptions &&
               st.dispatch_refusals == want.dispatch_refusals && st.early_fires == 0)
        << Name(i) << ": statistics fires/overruns/missed/exceptions/refusals/early "
        << st.fires << "/" << st.overruns << "/" << st.missed_periods << "/"
        << st.exceptions << "/" << st.dispatch_refusals << "/" << st.early_fires
        << ", model " << want.fires << "/" << want.overruns << "/"
        << want.missed_periods << "/" << want.exceptions << "/"
        << want.dispatch_refusals << "/0";
  }
}

void TimerFuzz::CheckDistributions() {
  for (int i = 0; i < kSlots; ++i) {
    const Slot& s = slots_[i];
    if (s.timer == nullptr || s.model == nullptr) continue;
    const TimerStatistics st = s.timer->GetStatistics();
    // Percentiles only where the options ask for them; zero elsewhere.
    const bool percentiles = KeepsPercentiles(i);
    FUZZ_CHECK(st.percentiles == percentiles) << Name(i) << ": statistics.percentiles";
    if (!percentiles) {
      FUZZ_CHECK(st.lateness_p50 == absl::ZeroDuration() &&
                 st.lateness_p99 == absl::ZeroDuration() &&
                 st.run_time_p99 == absl::ZeroDuration())
          << Name(i) << ": percentiles reported without latency_percentiles";
    }
    const size_t quantiles = percentiles ? 1 : 0;
    const std::pair<double, absl::Duration> lateness[] = {{0.5, st.lateness_p50},
                                                         {0.99, st.lateness_p99}};
    std::string wrong = CheckDistribution("lateness", s.model->lateness(), st.lateness_max,
                                          lateness, 2 * quantiles);
    FUZZ_CHECK(wrong.empty()) << Name(i) << ": statistics: " << wrong;
    const std::pair<double, absl::Duration> run_time[] = {{0.99, st.run_time_p99}};
    wrong = CheckDistribution("run time", s.model->run_times(), st.run_time_max, run_time,
                              quantiles);
    FUZZ_CHECK(wrong.empty()) << Name(i) << ": statistics: " << wrong;
  }
}

void TimerFuzz::Idle() {
  if (!shut_down_) driver_.AwaitIdle();
  helper_.Join();  // a Stop() posted by a callback has returned
  CatchUpRefusals();
  CheckIdle();
}

void TimerFuzz::RunUntil(Instant t) {
  if (shut_down_) {
    if (t > clock_.Now()) clock_.AdvanceTo(t);
    return;
  }
  while (true) {
    Idle();
    if (over_budget()) return;  // stop here: a consistent state, like any other
    const Instant next = driver_.PlannedWake();
    if (next > t) break;
    ++steps_;
    delayed_ = false;
    clock_.AdvanceTo(std::max(next, clock_.Now()));
  }
  if (t > clock_.Now()) clock_.AdvanceTo(t);
  Idle();
}

void TimerFuzz::Run(FuzzInput& in) {
  for (Spec& spec : specs_) spec = DecodeSpec(in);
  while (!in.empty() && !over_budget()) {
    const uint8_t op = in.Byte();
    const int i = (op >> 4) & (kSlots - 1);
    const bool on_helper = (op & 0x40) != 0;
    if (Verbose()) {
      std::fprintf(stderr, "timer_ops: at %s op %d slot %d%s\n",
                   absl::FormatDuration(clock_.Now() - grid_.At(0)).c_str(), op & 0x0f, i,
                   on_helper ? " (helper)" : "");
    }
    auto perform = [&](std::function<void()> fn) {
      if (on_helper) {
        helper_.Run(std::move(fn));
      } else {
        fn();
      }
    };
    switch (op & 0x0f) {
      case 0: {
        const Spec spec = DecodeSpec(in);
        const bool reuse = (op & 0x80) != 0;
        perform([&] { Configure(i, spec, reuse); });
        break;
      }
      case 1:
      case 13:
        perform([&] { Schedule(i); });
        break;
      case 2:
        perform([&] { Stop(i); });
        break;
      case 3:
        perform([&] { Destroy(i); });
        break;
      case 4:
        perform([&] {
          Stop(i);
          Schedule(i);
        });
        break;
      case 5: {  // a few ticks, maybe off the tick grid
        const absl::Duration sub[] = {absl::ZeroDuration(), absl::Nanoseconds(1),
                                      tick_ / 2, tick_ - absl::Nanoseconds(1)};
        // (Two reads: sequenced, not in one expression.)
        const int64_t ticks = static_cast<int64_t>(in.Uint(0, 16));
        RunUntil(clock_.Now() + tick_ * ticks + sub[in.Choice(4)]);
        break;
      }
      case 6:
        RunUntil(clock_.Now() + tick_ * static_cast<int64_t>(in.Uint(0, 600)));
        break;
      case 7:  // up to ~200 days (tickless: cheap when little is due)
        RunUntil(clock_.Now() + tick_ * static_cast<int64_t>(in.Uint(0, uint64_t{1} << 33)));
        break;
      case 8: {  // to just before, or exactly at, the next due call
        Instant due = Instant::InfiniteFuture();
        for (const Slot& s : slots_) {
          if (s.model != nullptr && s.model->running() && !s.model->never()) {
            due = std::min(due, s.model->due());
          }
        }
        if (due == Instant::InfiniteFuture()) break;
        const absl::Duration back[] = {absl::ZeroDuration(), absl::Nanoseconds(1), tick_};
        const Instant target = due - back[in.Choice(3)];
        if (target > clock_.Now()) RunUntil(target);
        break;
      }
      case 9:
        dispatcher_.refuse.store(in.Bool());
        break;
      case 10:
        slots_[i].script = in.Bytes(16);
        slots_[i].script_pos = 0;
        break;
      case 11:
        if (in.Choice(8) == 0 && !shut_down_) {
          driver_.Shutdown();
          shut_down_ = true;
        }
        break;
      case 12:
        RunUntil(clock_.Now() + absl::Nanoseconds(static_cast<int64_t>(in.Uint(1, 1999999))));
        break;
      default:
        break;
    }
    Idle();
  }
  CheckDistributions();
  if (Verbose()) {
    std::fprintf(stderr, "timer_ops: %llu calls, %llu refusals, %llu steps, clock at %s\n",
                 static_cast<unsigned long long>(calls_),
                 static_cast<unsigned long long>(model_refusals_),
                 static_cast<unsigned long long>(steps_),
                 absl::FormatDuration(clock_.Now() - grid_.At(0)).c_str());
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
  cyber::fuzz::TimerFuzz fuzz(in);
  fuzz.Run(in);
  return 0;
}
