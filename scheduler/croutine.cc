#include "scheduler/croutine.h"

#include <cstdlib>
#include <exception>
#include <utility>

#include "cyber/common/log.h"
#include "timer/timer_system_core.h"

namespace cyber {
namespace scheduler {

namespace {

std::atomic<uint64_t> g_next_id{1};

using croutine_internal::t_current;

}  // namespace

CRoutine::CRoutine(std::string name, std::function<void()> body, int priority,
                   int processor, Host* host,
                   std::shared_ptr<const void> owner)
    : name_(std::move(name)),
      body_(std::move(body)),
      priority_(priority),
      processor_(processor),
      host_(host),
      id_(g_next_id.fetch_add(1, std::memory_order_relaxed)),
      owner_(std::move(owner)) {
  entry_ = [this] {
    try {
      CancellationPoint();  // cancelled before it ever ran
      body_();
    } catch (const RoutineCancelled&) {
      // Clean end of a cancelled routine.
    } catch (const boost::context::detail::forced_unwind&) {
      throw;  // Boost's own unwinding: must pass through
    } catch (const std::exception& e) {
      AERROR << "routine \"" << name_ << "\" threw: " << e.what();
    } catch (...) {
      AERROR << "routine \"" << name_ << "\" threw a non-std::exception";
    }
    body_ = nullptr;  // release its captures now
    owner_.reset();
    MutexLock lock(&mu_);
    state_ = State::kFinished;
  };
}

CRoutine::~CRoutine() {
  // A started routine is always run to completion (cancellation unwinds
  // it), so its fiber is empty here and nothing needs forced unwinding.
  ACHECK(!context_) << "routine \"" << name_ << "\" destroyed while suspended";
  // Never in a wheel: no wheel lock to take.
  if (timer::TimerSystemCore* system = ArmedSystemAtDestruction()) {
    system->Cancel(this);
  }
}

// Not inline: a routine may resume on another thread, and the thread_local
// must be looked up afresh on every call, never cached across a switch.
__attribute__((noinline)) CRoutine* CRoutine::Current() { return t_current; }

std::shared_ptr<CRoutine> CRoutine::Self() {
  return std::static_pointer_cast<CRoutine>(shared_from_this());
}

CRoutine::State CRoutine::state() const { return state_.load(); }

std::function<void()>* CRoutine::AcquireContext() {
  context_ = host_->context_pool()->Acquire();
  return &entry_;
}

void CRoutine::ReleaseContext() {
  host_->context_pool()->Release(std::move(context_));
}

void CRoutine::AfterSwitchOut() {
  bool requeue = false;
  {
    MutexLock lock(&mu_);
    // A cancelled routine is queued again to unwind at its suspension point,
    // unless it is parked in Park(), which is not one.
    const bool in_park = state_ == State::kDataWait && data_wait_ == DataWait::kUnpark;
    if (wake_pending_ || (cancelled() && !in_park)) {
      wake_pending_ = false;
      state_ = State::kReady;
      requeue = true;
    } else {
      parked_ = true;
    }
  }
  if (requeue) host_->MakeReady(Self());
}

void CRoutine::YieldOutsideRoutine() {
  AFATAL << "CRoutine::Yield() called outside a routine";
  std::abort();
}

void CRoutine::Park() {
  ACHECK(Current() == this) << "routine \"" << name_
                            << "\": Park() called from outside the routine";
  while (true) {
    {
      MutexLock lock(&mu_);
      if (unpark_pending_) {
        unpark_pending_ = false;
        return;
      }
      state_ = State::kDataWait;
      data_wait_ = DataWait::kUnpark;
    }
    SwitchOut();
  }
}

void CRoutine::Unpark() {
  {
    MutexLock lock(&mu_);
    unpark_pending_ = true;
  }
  Wake(kUnpark);
}

bool CRoutine::ParkUntil(Instant deadline, Clock* clock) {
  timer::TimerSystemCore* driver = host_->timer_system();
  if (driver == nullptr || driver->clock() != clock) return false;
  SleepUntil(deadline);
  return true;
}

void CRoutine::SleepFor(absl::Duration d) {
  CRoutine* self = Current();
  ACHECK(self != nullptr) << "CRoutine::SleepFor() called outside a routine";
  if (d == absl::InfiniteDuration()) {
    SleepUntil(Instant::InfiniteFuture());
    return;
  }
  timer::TimerSystemCore* driver = self->host_->timer_system();
  ACHECK(driver != nullptr) << "routine \"" << self->name_
                            << "\": SleepFor needs a timing wheel";
  Instant now;
  if (!driver->TryNow(&now)) {
    AERROR << "routine \"" << self->name_
           << "\": cannot sleep (the timer system is shut down); cancelling it";
    throw RoutineCancelled();
  }
  SleepUntil(now + d);
}

void CRoutine::SleepUntil(Instant deadline) {
  CRoutine* self = Current();
  ACHECK(self != nullptr) << "CRoutine::SleepUntil() called outside a routine";
  self->CancellationPoint();
  timer::TimerSystemCore* driver = self->host_->timer_system();
  ACHECK(driver != nullptr) << "routine \"" << self->name_
                            << "\": SleepUntil needs a timing wheel";
  Instant start;
  if (driver->TryNow(&start) && start >= deadline) {
    Yield();  // already due: still give others a turn
    return;
  }
  // Legs of at most the wheel's maximum delay, until the deadline has come
  // (the wheel never fires early, so the last leg ends at or after it).
  while (true) {
    Instant now;
    if (!driver->TryNow(&now)) now = start;  // shut down: the Arm below says so
    if (now >= deadline) return;
    const bool forever = deadline.IsInfiniteFuture();
    const Instant leg = forever || deadline - now > driver->max_delay()
                            ? now + driver->max_delay()
                            : deadline;
    {
      MutexLock lock(&self->mu_);
      self->state_ = State::kSleep;
      if (forever) {
        // Nothing to arm: only cancellation ends this sleep.
        self->sleep_seq_ = 0;
      } else {
        // Armed under our lock: OnExpired (which takes it) sees sleep_seq_.
        auto armed = driver->ArmExact(self, leg);  // at the deadline itself
        if (!armed.ok()) {
          // Only a shut-down timer system refuses an arm within the maximum
          // delay: the process is shutting down and the sleep can never end,
          // so the routine ends instead, loudly.
          self->state_ = State::kReady;
          AERROR << "routine \"" << self->name_ << "\": cannot sleep ("
                 << armed.status().message() << "); cancelling it";
          throw RoutineCancelled();
        }
        self->sleep_seq_ = armed->arm_seq;
        self->armed_system_ = driver;
      }
    }
    self->SwitchOut();
    if (!forever) driver->Cancel(self);  // woken early by cancellation
    self->CancellationPoint();
  }
}

void CRoutine::WaitForData() {
  CRoutine* self = Current();
  ACHECK(self != nullptr) << "CRoutine::WaitForData() called outside a routine";
  while (true) {
    self->CancellationPoint();
    {
      MutexLock lock(&self->mu_);
      if (self->data_pending_) {
        self->data_pending_ = false;
        return;
      }
      self->state_ = State::kDataWait;
      self->data_wait_ = DataWait::kNotify;
    }
    self->SwitchOut();
  }
}

CRoutine::PrivateWait::PrivateWait()
    : routine_(Current()),
      ticket_([this] {
        ACHECK(routine_ != nullptr)
            << "CRoutine::PrivateWait made outside a routine";
        MutexLock lock(&routine_->mu_);
        ACHECK(routine_->wait_ticket_ == 0)
            << "routine \"" << routine_->name_ << "\": a second PrivateWait";
        routine_->wait_woken_ = false;
        routine_->wait_ticket_ = ++routine_->last_ticket_;
        return routine_->wait_ticket_;
      }()) {}

CRoutine::PrivateWait::~PrivateWait() {
  MutexLock lock(&routine_->mu_);
  routine_->wait_ticket_ = 0;
  routine_->wait_woken_ = false;
}

void CRoutine::PrivateWait::Park() {
  CRoutine* const self = routine_;
  ACHECK(Current() == self) << "routine \"" << self->name_
                            << "\": PrivateWait::Park() called from outside it";
  while (true) {
    self->CancellationPoint();
    {
      MutexLock lock(&self->mu_);
      if (self->wait_woken_) {
        self->wait_woken_ = false;
        return;
      }
      self->state_ = State::kDataWait;
      self->data_wait_ = DataWait::kPrivate;
    }
    self->SwitchOut();
  }
}

void CRoutine::WakeWait(uint64_t ticket) {
  bool enqueue = false;
  {
    MutexLock lock(&mu_);
    if (ticket == 0 || ticket != wait_ticket_) return;  // ended, or another
    wait_woken_ = true;
    enqueue = WakeLocked(kPrivate);
  }
  if (enqueue) host_->MakeReady(Self());
}

void CRoutine::Notify() {
  {
    MutexLock lock(&mu_);
    data_pending_ = true;
  }
  Wake(kData);
}

void CRoutine::Cancel() {
  cancel_.store(true, std::memory_order_release);
  Wake(kCancel);
}

void CRoutine::OnExpired(uint32_t arm_seq) {
  {
    MutexLock lock(&mu_);
    if (arm_seq != sleep_seq_ || arm_seq == 0) return;  // a stale sleep
  }
  Wake(kTimer);
}

void CRoutine::Recycle(std::function<void()> body, int priority, int group,
                       std::shared_ptr<const void> owner) {
  // Nobody else can reach the routine: the lock is uncontended, taken for
  // the fields it guards.
  MutexLock lock(&mu_);
  DCHECK(state_ == State::kFinished && !context_ && !body_ && !owner_ &&
         !cancelled() && !named_task_ && live_link_.self == nullptr)
      << "routine \"" << name_ << "\": recycled while not a finished one-off";
  body_ = std::move(body);
  owner_ = std::move(owner);
  priority_ = priority;
  group_ = group;
  // Its last run left no sleep armed (SleepUntil cancels its entry before
  // returning) and no wake-up owed: whatever flag a late one set is reset.
  armed_system_ = nullptr;
  wake_pending_ = data_pending_ = unpark_pending_ = wait_woken_ = false;
  data_wait_ = DataWait::kNotify;
  wait_ticket_ = 0;
  parked_ = false;
  sleep_seq_ = 0;
  state_ = State::kReady;
}

void CRoutine::Wake(WakeReason reason) {
  bool enqueue = false;
  {
    MutexLock lock(&mu_);
    enqueue = WakeLocked(reason);
  }
  if (enqueue) host_->MakeReady(Self());
}

bool CRoutine::WakeLocked(WakeReason reason) {
  // Each wake-up ends its own kind of wait only. A Park() waits for
  // Unpark() only: neither data nor cancellation ends it (its caller is
  // waiting for something that finishes regardless).
  const bool data_wait = state_ == State::kDataWait;
  const bool waiting =
      (reason == kTimer && state_ == State::kSleep) ||
      (reason == kData && data_wait && data_wait_ == DataWait::kNotify) ||
      (reason == kUnpark && data_wait && data_wait_ == DataWait::kUnpark) ||
      (reason == kPrivate && data_wait && data_wait_ == DataWait::kPrivate) ||
      (reason == kCancel &&
       (state_ == State::kSleep || (data_wait && data_wait_ != DataWait::kUnpark)));
  if (!waiting) return false;
  if (parked_) {
    parked_ = false;
    state_ = State::kReady;
    return true;
  }
  wake_pending_ = true;  // still switching out: the processor requeues it
  return false;
}

}  // namespace scheduler
}  // namespace cyber
