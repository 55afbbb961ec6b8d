#include "scheduler/croutine.h"

#include <exception>
#include <utility>

#include "cyber/common/log.h"

namespace cyber {
namespace scheduler {

namespace {

std::atomic<uint64_t> g_next_id{1};

thread_local CRoutine* t_current = nullptr;

}  // namespace

CRoutine::CRoutine(std::string name, std::function<void()> body, int priority,
                   int processor, Host* host)
    : name_(std::move(name)),
      body_(std::move(body)),
      priority_(priority),
      processor_(processor),
      host_(host),
      id_(g_next_id.fetch_add(1)) {
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
    MutexLock lock(&mu_);
    state_ = State::kFinished;
  };
}

CRoutine::~CRoutine() {
  // A started routine is always run to completion (cancellation unwinds
  // it), so its fiber is empty here and nothing needs forced unwinding.
  ACHECK(!context_) << "routine \"" << name_ << "\" destroyed while suspended";
  if (auto* driver = host_->timer_driver()) driver->Cancel(this);
}

// Not inline: a routine may resume on another thread, and the thread_local
// must be looked up afresh on every call, never cached across a switch.
__attribute__((noinline)) CRoutine* CRoutine::Current() { return t_current; }

std::shared_ptr<CRoutine> CRoutine::Self() {
  return std::static_pointer_cast<CRoutine>(shared_from_this());
}

CRoutine::State CRoutine::state() const { return state_.load(); }

CRoutine::State CRoutine::Resume() {
  // Queued implies kReady (a wake sets it before queueing): nothing to set.
  std::function<void()>* first_entry = nullptr;
  if (!context_) {
    context_ = host_->context_pool()->Acquire();
    first_entry = &entry_;
  }
  CRoutine* const outer = t_current;
  t_current = this;
  const bool finished = context_->Enter(first_entry);
  t_current = outer;
  if (finished) host_->context_pool()->Release(std::move(context_));
  return state_.load();
}

void CRoutine::AfterSwitchOut() {
  bool requeue = false;
  {
    MutexLock lock(&mu_);
    if (wake_pending_ || cancelled()) {
      wake_pending_ = false;
      state_ = State::kReady;
      requeue = true;
    } else {
      parked_ = true;
    }
  }
  if (requeue) host_->MakeReady(Self());
}

void CRoutine::CancellationPoint() const {
  if (cancelled() || host_->stopping()) throw RoutineCancelled();
}

void CRoutine::Yield() {
  CRoutine* self = Current();
  ACHECK(self != nullptr) << "CRoutine::Yield() called outside a routine";
  // Running means kReady already: switch out without touching any lock; the
  // processor sees kReady and queues the routine again. (A cancellation
  // pending now is seen right after the switch back.)
  self->SwitchOut();
  self->CancellationPoint();
}

bool CRoutine::YieldWithoutCancellation() {
  CRoutine* self = Current();
  if (self == nullptr) return false;
  self->SwitchOut();
  return true;
}

void CRoutine::SleepFor(absl::Duration d) {
  CRoutine* self = Current();
  ACHECK(self != nullptr) << "CRoutine::SleepFor() called outside a routine";
  timer::TickDriver* driver = self->host_->timer_driver();
  ACHECK(driver != nullptr) << "routine \"" << self->name_
                            << "\": SleepFor needs a timing wheel";
  SleepUntil(driver->clock()->Now() + d);
}

void CRoutine::SleepUntil(Instant deadline) {
  CRoutine* self = Current();
  ACHECK(self != nullptr) << "CRoutine::SleepUntil() called outside a routine";
  self->CancellationPoint();
  timer::TickDriver* driver = self->host_->timer_driver();
  ACHECK(driver != nullptr) << "routine \"" << self->name_
                            << "\": SleepUntil needs a timing wheel";
  if (driver->clock()->Now() >= deadline) {
    Yield();  // already due: still give others a turn
    return;
  }
  {
    MutexLock lock(&self->mu_);
    self->state_ = State::kSleep;
    // Armed under our lock: OnExpired (which takes it) sees sleep_seq_.
    auto armed = driver->Arm(self, deadline);
    if (!armed.ok()) {
      // The timer system is shut down (process shutdown in progress): the
      // sleep can never end, so the routine ends instead.
      self->state_ = State::kReady;
      AWARN << "routine \"" << self->name_ << "\": cannot sleep ("
            << armed.status().message() << "); cancelling it";
      throw RoutineCancelled();
    }
    self->sleep_seq_ = armed->arm_seq;
  }
  self->SwitchOut();
  driver->Cancel(self);  // woken early by cancellation: disarm
  self->CancellationPoint();
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
    }
    self->SwitchOut();
  }
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
    if (arm_seq != sleep_seq_) return;  // a stale sleep
  }
  Wake(kTimer);
}

void CRoutine::Wake(WakeReason reason) {
  bool enqueue = false;
  {
    MutexLock lock(&mu_);
    const bool waiting =
        (reason == kTimer && state_ == State::kSleep) ||
        (reason == kData && state_ == State::kDataWait) ||
        (reason == kCancel &&
         (state_ == State::kSleep || state_ == State::kDataWait));
    if (!waiting) return;
    if (parked_) {
      parked_ = false;
      state_ = State::kReady;
      enqueue = true;
    } else {
      wake_pending_ = true;  // still switching out: the processor requeues it
    }
  }
  if (enqueue) host_->MakeReady(Self());
}

}  // namespace scheduler
}  // namespace cyber
