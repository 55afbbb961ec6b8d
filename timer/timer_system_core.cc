#include "timer/timer_system_core.h"

#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "cyber/common/log.h"
#include "cyber/time/steady_clock.h"

namespace cyber {
namespace timer {

namespace {

// The early hand-over's lead for a dispatcher on a timer system with this
// tick: what the dispatcher asks, at most a quarter tick. The cap keeps
// the wheel's lead on the clock small next to any period: a periodic
// timer's next expiry must not come while its previous call, handed over
// early, may still be waiting for its instant (a 1 kHz timer has half a
// tick between calls).
absl::Duration HandOverLeadFor(const Dispatcher* dispatcher, bool steady,
                               absl::Duration tick) {
  if (!steady || dispatcher == nullptr) return absl::ZeroDuration();
  const absl::Duration asked = absl::FromChrono(dispatcher->HandOverLead());
  return std::clamp(asked, absl::ZeroDuration(), tick / 4);
}

}  // namespace

TimerSystemCore::TimerSystemCore(Clock* clock, Dispatcher* dispatcher, Options options)
    : options_(std::move(options)),
      clock_(clock),
      dispatcher_(dispatcher),
      wheel_(clock->Now(), options_.tick),
      announces_(clock->ToSteadyTime(Instant()).has_value()),
      clock_immortal_(clock == SteadyClock::Get()),
      lead_(HandOverLeadFor(dispatcher, announces_, options_.tick)) {
  pending_.cap.store(options_.max_pending_timers, std::memory_order_relaxed);
  if (options_.default_timeout.has_value()) {
    set_default_timeout(*options_.default_timeout);
  }
  ACHECK(dispatcher != nullptr) << "timer system \"" << options_.name
                                << "\": dispatcher is null";
}

TimerSystemCore::~TimerSystemCore() {
  ACHECK(!thread_.joinable()) << "timer system \"" << options_.name
                              << "\": destroyed with its tick thread running";
}

void TimerSystemCore::Start() {
  if (!options_.run_thread || thread_.joinable() || closed()) return;
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), options_.name.substr(0, 15).c_str());
    Loop();
  });
}

void TimerSystemCore::Shutdown() {
  MutexLock lock(&shutdown_mu_);
  if (closed()) return;
  stopping_.store(true);
  wakeup_.Notify();
  if (thread_.joinable()) thread_.join();
  Close();
  MutexLock idle(&idle_mu_);
  idle_changed_.SignalAll();
}

void TimerSystemCore::AwaitIdle() const {
  if (!options_.run_thread) return;  // nothing runs behind the caller's back
  if (!track_idle_.exchange(true)) {
    // One pass more, which records its sleep. Counted: a plan recorded
    // before this pass (the thread may already have read track_idle_) must
    // not count as idle, or the pass would follow as an unexpected wake-up.
    RequestWake();
  }
  MutexLock lock(&idle_mu_);
  // Idle: asleep, on a plan that includes every arm that asked for a wake,
  // until a time that has not come yet.
  while (!closed() && (!sleeping_ || planned_requests_ != wake_requests() ||
                       sleeping_until_ <= clock_->Now())) {
    // Each of these states ends with the tick thread going back to sleep,
    // which signals: a due deadline or a notification makes its wait return
    // at once.
    idle_changed_.Wait(&idle_mu_);
  }
}

Instant TimerSystemCore::PlannedWake() const {
  MutexLock lock(&idle_mu_);
  return sleeping_until_;
}

TimerSystemCore::Stats TimerSystemCore::stats() const {
  Stats s;
  s.wakeups = wakeups_.load(std::memory_order_relaxed);
  s.expired = expired_.load(std::memory_order_relaxed);
  s.early_passes = early_passes_.load(std::memory_order_relaxed);
  return s;
}

Instant TimerSystemCore::Step(Instant now) {
  ACHECK(!options_.run_thread) << "timer system \"" << options_.name
                               << "\": Step() on a system with a tick thread";
  const Instant wake = StepWith(now, &step_due_);
  MutexLock lock(&idle_mu_);
  sleeping_until_ = wake;
  return wake;
}

Instant TimerSystemCore::StepWith(Instant now, std::vector<Due>* due) {
  // Advance by measured time: every tick whose instant has passed; with an
  // early hand-over, also the next event if it is at most the lead away
  // (one event per pass: each pass's work has one not-before instant).
  // Every entry this pass expires is due at or before `due_by`: a held
  // exact deadline at most `due_by`, a tick at most `due_by`'s (an arm for
  // a tick an earlier early pass processed went to a later tick, or exact).
  Instant due_by = now;
  if (lead_ > absl::ZeroDuration()) {
    const Instant next = wheel_.NextEvent();
    if (next > now && next - now <= lead_) due_by = next;
  }
  wheel_.AdvanceToInstant(due_by, [due](WheelEntry* e) {
    // Armed implies alive: its owner cancels before releasing it, and that
    // cancel needs the lock we are under.
    due->push_back({static_cast<ExpiryTarget*>(e)->shared_from_this(),
                    e->arm_seq()});
  });
  // Tickless: sleep until the next expiry or cascade, forever if none. The
  // dispatcher learns it too, on real steady time only
  // (Dispatcher::ExpectWork): its workers get ready for that hand-off.
  const auto plan = [this] {
    const Instant next = wheel_.PlanWake();
    AnnouncePlan();
    return next;
  };
  Instant next;
  if (due->empty()) {
    next = plan();
  } else {
    // One hand-over for the whole pass: the dispatcher queues what the
    // expiries dispatch (and the routines they wake) under one lock, with
    // at most one wake-up per processor, at the end of this scope. Ahead
    // of time (early hand-over) it must hold them until `due_by`.
    std::optional<DispatchBatch> batch;
    if (lead_ > absl::ZeroDuration() && due_by > now) {
      // Rounded up to the next whole nanosecond: never before `due_by`.
      batch.emplace(dispatcher_, *clock_->ToSteadyTime(due_by) +
                                     std::chrono::nanoseconds(1));
      early_passes_.fetch_add(1, std::memory_order_relaxed);
    } else {
      batch.emplace(dispatcher_);
    }
    // Expire each in order; the owners a few places ahead are fetched
    // meanwhile (their entries are in cache from the wheel, the rest of
    // each owner, e.g. a timer's state and schedule, is not): with many
    // live timers those misses overlap instead of coming one by one.
    // Each reference is dropped right after its expiry, before the batch
    // hands the work over: a routine woken here and finished by a
    // processor is then held by nobody else (its scheduler reuses it).
    constexpr size_t kAhead = 4;
    const size_t n = due->size();
    for (size_t i = 0; i < n; ++i) {
      if (i + kAhead < n) {
        const uintptr_t ahead =
            reinterpret_cast<uintptr_t>((*due)[i + kAhead].target.get());
        __builtin_prefetch(reinterpret_cast<const void*>(ahead + 64));
        __builtin_prefetch(reinterpret_cast<const void*>(ahead + 128));
        __builtin_prefetch(reinterpret_cast<const void*>(ahead + 192));
      }
      Due& d = (*due)[i];
      d.target->Expire(d.arm_seq);
      d.target.reset();
    }
    // Planned (after the expiries' re-arms) and announced before the
    // hand-over: a worker that runs this pass's work and goes idle reads
    // the next event, not this one.
    next = plan();
  }
  expired_.fetch_add(due->size(), std::memory_order_relaxed);
  due->clear();
  return next;
}

void TimerSystemCore::Loop() {
  std::vector<Due> due;  // reused: no allocation once it has grown
  while (!stopping_.load()) {
    // Only for AwaitIdle(), once somebody uses it (tests, simulations); the
    // production loop reads no counter and takes no lock for it. A pass that
    // misses the flag is followed by one that sees it: AwaitIdle() requests
    // a wake after setting it.
    const bool track = track_idle_.load(std::memory_order_acquire);
    // Read before planning: a request counted here is in the plan (an arm
    // counts itself after it is in the wheel) or is still pending below.
    const uint64_t requests_seen = track ? wake_requests() : 0;
    const Instant next = StepWith(clock_->Now(), &due);
    // With an early hand-over, the lead before the event (StepWith then
    // processes it): the tick thread's own wake-up latency is spent before
    // the event, not after it.
    const Instant wake = next.IsInfiniteFuture() ? next : next - lead_;
    // A pending notification ends the wait below at once: not asleep yet
    // (AwaitIdle() would return and a wake-up would follow it).
    if (track && !wakeup_.pending()) {
      MutexLock lock(&idle_mu_);
      sleeping_ = true;
      sleeping_until_ = wake;
      planned_requests_ = requests_seen;
      idle_changed_.SignalAll();
    }
    // An Arm() that beats this plan notifies the wake-up event (sticky, so
    // even one that lands before the wait begins is not lost).
    clock_->WaitUntil(wake, &wakeup_);
    if (track) {
      MutexLock lock(&idle_mu_);
      sleeping_ = false;
    }
    wakeups_.fetch_add(1, std::memory_order_relaxed);
  }
}

absl::StatusOr<TimingWheel::ArmResult> TimerSystemCore::Arm(ExpiryTarget* target,
                                                          Instant deadline) {
  return ArmWith(target, deadline, /*exact=*/false);
}

absl::StatusOr<TimingWheel::ArmResult> TimerSystemCore::ArmExact(
    ExpiryTarget* target, Instant deadline) {
  return ArmWith(target, deadline, /*exact=*/true);
}

absl::StatusOr<TimingWheel::ArmResult> TimerSystemCore::ArmWith(
    ExpiryTarget* target, Instant deadline, bool exact) {
  if (closed()) {
    return absl::FailedPreconditionError(
        "timer system \"" + options_.name + "\": shut down, cannot arm");
  }
  // The deadline's tick (unused by an exact arm): computed once, for the
  // arm and for the early hand-over's check below.
  const Tick tick = exact ? kNoTick : wheel_.DeadlineToTick(deadline);
  const auto arm = [&](Tick present) {
    return exact ? wheel_.ArmExact(target, deadline, present)
                 : wheel_.Arm(target, tick, present);
  };
  auto result = arm(0);
  if (!result.ok() && result.status().code() == absl::StatusCode::kOutOfRange &&
      !deadline.IsInfiniteFuture()) {
    // The wheel measures the maximum delay from its last processed tick,
    // which lags the clock while the wheel is idle. Measure it from the
    // present instead (rounded up, so that a delay of exactly the maximum
    // from an instant between ticks fits). Only on this rare path is the
    // clock read.
    Instant now;
    if (!TryNow(&now)) {
      return absl::FailedPreconditionError(
          "timer system \"" + options_.name + "\": shut down, cannot arm");
    }
    result = arm(wheel_.DeadlineToTick(now));
  }
  if (result.ok() && !exact && lead_ > absl::ZeroDuration()) {
    if (result->expires > tick) {
      // The wheel moved it to the tick after its own, processed already.
      // If that was an early hand-over's pass (the tick's instant has not
      // come), it would be served a tick late: arm it for the tick's
      // instant exactly instead, which the next pass (woken for it) serves
      // on time. Rare: an arm for less than the lead, during the lead.
      const Instant on_tick = wheel_.TickToInstant(tick);
      Instant now;
      if (TryNow(&now) && on_tick > now) {
        result = wheel_.ArmExact(target, on_tick);
      }
    }
  }
  if (result.ok() && result->wake_needed) {
    // After the wheel arm: a plan that counts this request includes it.
    RequestWake();
  } else if (result.ok() && (result->plan_later || result->plan_earlier)) {
    // The plan moved, but the tick thread wakes before it anyway.
    AnnouncePlan();
  }
  return result;
}

void TimerSystemCore::AnnouncePlan() {
  if (!announces_) return;
  MutexLock lock(&announce_mu_);
  if (closed()) return;  // the dispatcher and clock may be gone
  // Read under announce_mu_: whoever announces last tells the latest plan.
  const Instant plan = wheel_.planned_wake();
  if (plan == announced_) return;
  announced_ = plan;
  dispatcher_->ExpectWork(plan.IsInfiniteFuture()
                              ? std::nullopt
                              : clock_->ToSteadyTime(plan));
}

bool TimerSystemCore::TryNow(Instant* now) const {
  if (clock_immortal_) {
    // A read that races with Close() reads a clock that still exists.
    if (closed_.load(std::memory_order_acquire)) return false;
    *now = clock_->Now();
    return true;
  }
  // Dekker-style with Close(): either Close() sees this reader and waits for
  // it, or this reader sees closed_ and does not touch the clock.
  clock_readers_.fetch_add(1, std::memory_order_seq_cst);
  if (closed_.load(std::memory_order_seq_cst)) {
    clock_readers_.fetch_sub(1, std::memory_order_release);
    return false;
  }
  *now = clock_->Now();
  clock_readers_.fetch_sub(1, std::memory_order_release);
  return true;
}


void TimerSystemCore::Close() {
  closed_.store(true, std::memory_order_seq_cst);
  // Clock reads take nanoseconds (a simulated clock's, a lock): wait them out.
  while (clock_readers_.load(std::memory_order_seq_cst) != 0) {
    std::this_thread::yield();
  }
  // An announcement in progress ends before this; later ones see closed_.
  // Nothing will expire from now on: say so.
  MutexLock lock(&announce_mu_);
  if (!announced_.IsInfiniteFuture()) {
    announced_ = Instant::InfiniteFuture();
    dispatcher_->ExpectWork(std::nullopt);
  }
}

}  // namespace timer
}  // namespace cyber
