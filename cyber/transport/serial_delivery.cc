#include "cyber/transport/serial_delivery.h"

#include <exception>
#include <utility>

#include "boost/context/fiber.hpp"  // forced_unwind, which must pass through
#include "cyber/common/log.h"

namespace cyber {
namespace transport_internal {

// Keeps the owner (and so the SerialDelivery) alive while its drain is
// queued or running, and notices a drain the scheduler destroys without
// running it (refused, or dropped at its shutdown).
struct SerialDeliveryBase::DrainTicket {
  DrainTicket(SerialDeliveryBase* d, std::shared_ptr<const void> o, uint64_t g)
      : delivery(d), owner(std::move(o)), generation(g) {}
  ~DrainTicket() {
    if (!started) delivery->ReleaseDrain(generation);  // `owner` still holds it
  }
  DrainTicket(const DrainTicket&) = delete;
  DrainTicket& operator=(const DrainTicket&) = delete;

  SerialDeliveryBase* const delivery;
  const std::shared_ptr<const void> owner;
  const uint64_t generation;
  bool started = false;  // set by the drain routine, read when released
};

SerialDeliveryBase::SerialDeliveryBase(Options options)
    : options_(std::move(options)) {}

SerialDeliveryBase::~SerialDeliveryBase() = default;

SerialDeliveryBase::DrainScope::~DrainScope() {
  if (finished_) return;
  MutexLock lock(&delivery_->mu_);
  delivery_->running_ = false;
  delivery_->running_routine_ = nullptr;
  delivery_->in_flight_ = false;
  delivery_->idle_.WakeAll();
}

bool SerialDeliveryBase::StartDrainLocked(uint64_t* generation) {
  if (in_flight_) return false;
  in_flight_ = true;
  *generation = ++generation_;
  return true;
}

void SerialDeliveryBase::ScheduleDrain(uint64_t generation,
                                       std::shared_ptr<const void> owner) {
  auto ticket = std::make_shared<DrainTicket>(this, std::move(owner), generation);
  // One word: std::function keeps it inline; the scheduler holds the ticket
  // beside the task until it has run or been dropped.
  DrainTicket* const raw = ticket.get();
  if (options_.scheduler->Dispatch(
          [raw] {
            raw->started = true;
            raw->delivery->Drain();
          },
          options_.route, std::move(ticket))) {
    return;
  }
  uint64_t refusals = 0;
  size_t pending = 0;
  {
    MutexLock lock(&mu_);
    refusals = ++stats_.dispatch_refusals;
    pending = stats_.pending;
  }
  ReleaseDrain(generation);  // in case the scheduler still holds the ticket
  AERROR_EVERY(100) << options_.name << ": scheduler \""
                    << options_.scheduler->name() << "\" refused the "
                    << options_.routine << " routine (refusals so far: "
                    << refusals << "); " << pending
                    << " item(s) stay queued until the next one is added";
}

void SerialDeliveryBase::ReleaseDrain(uint64_t generation) {
  MutexLock lock(&mu_);
  // Only the newest drain can be in flight, and one that never started has
  // no handler running.
  if (in_flight_ && generation_ == generation) in_flight_ = false;
}

void SerialDeliveryBase::EndRunLocked(bool threw) {
  if (!running_) return;
  running_ = false;
  running_routine_ = nullptr;
  if (threw) ++stats_.handler_exceptions;
  idle_.WakeAll();
}

bool SerialDeliveryBase::Invoke(absl::FunctionRef<void()> handler) {
  try {
    handler();
    return true;
  } catch (const scheduler::RoutineCancelled&) {
    throw;  // the scheduler is stopping: the drain ends
  } catch (const boost::context::detail::forced_unwind&) {
    throw;  // Boost's own unwinding must pass through
  } catch (const std::exception& e) {
    AERROR_EVERY(100) << options_.name << ": " << options_.handler
                      << " threw: " << e.what();
  } catch (...) {
    AERROR_EVERY(100) << options_.name << ": " << options_.handler
                      << " threw a non-std::exception";
  }
  return false;
}

void SerialDeliveryBase::AwaitIdle() {
  AwaitIdleExcept([](const scheduler::CRoutine*) { return false; });
}

void SerialDeliveryBase::AwaitIdleExcept(
    absl::FunctionRef<bool(const scheduler::CRoutine*)> skip) {
  const scheduler::CRoutine* const caller = scheduler::CRoutine::Current();
  MutexLock lock(&mu_);
  while (running_ && (caller == nullptr || caller != running_routine_) &&
         !skip(running_routine_)) {
    idle_.Wait(&mu_);
  }
}

void SerialDeliveryBase::RecheckWaiters() {
  MutexLock lock(&mu_);
  idle_.WakeAll();
}

bool SerialDeliveryBase::RunsHandlerIn(const scheduler::CRoutine* routine) const {
  MutexLock lock(&mu_);
  return running_ && running_routine_ == routine;
}

bool SerialDeliveryBase::stopped() const {
  MutexLock lock(&mu_);
  return stopped_;
}

SerialDeliveryStats SerialDeliveryBase::stats() const {
  MutexLock lock(&mu_);
  return stats_;
}

}  // namespace transport_internal
}  // namespace cyber
