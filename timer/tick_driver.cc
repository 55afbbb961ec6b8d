#include "timer/tick_driver.h"

#include <pthread.h>

#include <vector>

#include "absl/status/status.h"
#include "cyber/common/log.h"

namespace cyber {
namespace timer {

TickDriver::TickDriver(Clock* clock, Dispatcher* dispatcher, Options options)
    : options_(std::move(options)),
      front_(std::make_shared<TimerSystem>(options_.name, clock, dispatcher,
                                             options_.tick)) {
  ACHECK(dispatcher != nullptr) << "TickDriver: dispatcher is null";
  if (!options_.run_thread) return;
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), options_.name.substr(0, 15).c_str());
    Loop();
  });
}

TickDriver::~TickDriver() { Shutdown(); }

void TickDriver::Shutdown() {
  MutexLock lock(&shutdown_mu_);
  if (front_->closed()) return;
  stopping_.store(true);
  front_->wakeup()->Notify();
  if (thread_.joinable()) thread_.join();
  front_->Close();
  MutexLock idle(&idle_mu_);
  idle_changed_.SignalAll();
}

void TickDriver::AwaitIdle() const {
  if (!options_.run_thread) return;  // nothing runs behind the caller's back
  if (!track_idle_.exchange(true)) {
    // One pass more, which records its sleep. Counted: a plan recorded
    // before this pass (the thread may already have read track_idle_) must
    // not count as idle, or the pass would follow as an unexpected wake-up.
    front_->RequestWake();
  }
  MutexLock lock(&idle_mu_);
  // Idle: asleep, on a plan that includes every arm that asked for a wake,
  // until a time that has not come yet.
  while (!front_->closed() &&
         (!sleeping_ || planned_requests_ != front_->wake_requests() ||
          sleeping_until_ <= front_->clock()->Now())) {
    // Each of these states ends with the tick thread going back to sleep,
    // which signals: a due deadline or a notification makes its wait return
    // at once.
    idle_changed_.Wait(&idle_mu_);
  }
}

Instant TickDriver::PlannedWake() const {
  MutexLock lock(&idle_mu_);
  return sleeping_until_;
}

TickDriver::Stats TickDriver::stats() const {
  Stats s;
  s.wakeups = wakeups_.load(std::memory_order_relaxed);
  s.expired = expired_.load(std::memory_order_relaxed);
  return s;
}

Instant TickDriver::Step(Instant now) {
  ACHECK(!options_.run_thread)
      << "TickDriver \"" << options_.name
      << "\": Step() on a driver with a tick thread";
  const Instant wake = StepWith(now, &step_due_);
  MutexLock lock(&idle_mu_);
  sleeping_until_ = wake;
  return wake;
}

Instant TickDriver::StepWith(Instant now, std::vector<Due>* due) {
  TimingWheel& wheel = front_->wheel();
  // Advance by measured time: every tick whose instant has passed.
  wheel.AdvanceTo(wheel.InstantToTick(now), [due](WheelEntry* e) {
    // Armed implies alive: its owner cancels before releasing it, and that
    // cancel needs the lock we are under.
    due->push_back({static_cast<ExpiryTarget*>(e)->shared_from_this(),
                    e->arm_seq()});
  });
  if (!due->empty()) {
    // One hand-over for the whole pass: the dispatcher queues what the
    // expiries dispatch (and the routines they wake) under one lock, with
    // at most one wake-up per processor, at the end of this scope.
    DispatchBatch batch(front_->dispatcher());
    for (Due& d : *due) d.target->Expire(d.arm_seq);
  }
  expired_.fetch_add(due->size(), std::memory_order_relaxed);
  due->clear();
  // Tickless: sleep until the next expiry or cascade, forever if none.
  return wheel.TickToInstant(wheel.PlanWake());
}

void TickDriver::Loop() {
  std::vector<Due> due;  // reused: no allocation once it has grown
  Clock* const clock = front_->clock();
  while (!stopping_.load()) {
    // Only for AwaitIdle(), once somebody uses it (tests, simulations); the
    // production loop reads no counter and takes no lock for it. A pass that
    // misses the flag is followed by one that sees it: AwaitIdle() requests
    // a wake after setting it.
    const bool track = track_idle_.load(std::memory_order_acquire);
    // Read before planning: a request counted here is in the plan (an arm
    // counts itself after it is in the wheel) or is still pending below.
    const uint64_t requests_seen = track ? front_->wake_requests() : 0;
    const Instant wake = StepWith(clock->Now(), &due);
    // A pending notification ends the wait below at once: not asleep yet
    // (AwaitIdle() would return and a wake-up would follow it).
    if (track && !front_->wakeup()->pending()) {
      MutexLock lock(&idle_mu_);
      sleeping_ = true;
      sleeping_until_ = wake;
      planned_requests_ = requests_seen;
      idle_changed_.SignalAll();
    }
    // An Arm() that beats this plan notifies the wake-up event (sticky, so
    // even one that lands before the wait begins is not lost).
    clock->WaitUntil(wake, front_->wakeup());
    if (track) {
      MutexLock lock(&idle_mu_);
      sleeping_ = false;
    }
    wakeups_.fetch_add(1, std::memory_order_relaxed);
  }
}

}  // namespace timer
}  // namespace cyber
