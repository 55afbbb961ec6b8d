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
  DrainTicket(SerialDeliveryBase* d, std::shared_ptr<const void> o, int l,
              uint64_t g)
      : delivery(d), owner(std::move(o)), lane(l), generation(g) {}
  ~DrainTicket() {
    if (!started) delivery->ReleaseDrain(lane, generation);  // `owner` still holds it
  }
  DrainTicket(const DrainTicket&) = delete;
  DrainTicket& operator=(const DrainTicket&) = delete;

  SerialDeliveryBase* const delivery;
  const std::shared_ptr<const void> owner;
  const int lane;
  const uint64_t generation;
  bool started = false;  // set by the drain routine, read when released
};

SerialDeliveryBase::SerialDeliveryBase(Options options)
    : options_(std::move(options)),
      lanes_(static_cast<size_t>(options_.lanes < 1 ? 1 : options_.lanes)) {}

SerialDeliveryBase::~SerialDeliveryBase() = default;

SerialDeliveryBase::DrainScope::~DrainScope() {
  if (finished_) return;
  MutexLock lock(&delivery_->mu_);
  delivery_->EndRunLocked(lane_, /*threw=*/false);
  delivery_->EndDrainLocked(lane_);
}

bool SerialDeliveryBase::StartDrainLocked(int* lane, uint64_t* generation) {
  // Drains in flight that are not in the handler take the queued items
  // first: a new one only when the queue holds more than they will take.
  const size_t free_drains = static_cast<size_t>(in_flight_ - running_);
  if (stats_.pending <= free_drains) return false;
  for (size_t i = 0; i < lanes_.size(); ++i) {
    Lane& l = lanes_[i];
    if (l.in_flight) continue;
    l.in_flight = true;
    l.generation = ++generation_;
    ++in_flight_;
    *lane = static_cast<int>(i);
    *generation = l.generation;
    return true;
  }
  return false;  // every lane is in flight
}

void SerialDeliveryBase::ScheduleDrain(int lane, uint64_t generation,
                                       std::shared_ptr<const void> owner) {
  auto ticket = std::make_shared<DrainTicket>(this, std::move(owner), lane, generation);
  // One word: std::function keeps it inline; the scheduler holds the ticket
  // beside the task until it has run or been dropped.
  DrainTicket* const raw = ticket.get();
  if (options_.scheduler->Dispatch(
          [raw] {
            raw->started = true;
            raw->delivery->Drain(raw->lane);
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
  ReleaseDrain(lane, generation);  // in case the scheduler still holds the ticket
  AERROR_EVERY(100) << options_.name << ": scheduler \""
                    << options_.scheduler->name() << "\" refused the "
                    << options_.routine << " routine (refusals so far: "
                    << refusals << "); " << pending
                    << " item(s) stay queued until the next one is added";
}

void SerialDeliveryBase::ReleaseDrain(int lane, uint64_t generation) {
  MutexLock lock(&mu_);
  // A drain that never started has no handler running; a newer drain of
  // the lane is not this one's to end.
  if (lanes_[static_cast<size_t>(lane)].generation == generation) EndDrainLocked(lane);
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
  for (;;) {
    bool wait = false;
    for (const Lane& l : lanes_) {
      if (l.running && (caller == nullptr || caller != l.routine) && !skip(l.routine)) {
        wait = true;
        break;
      }
    }
    if (!wait) return;
    idle_.Wait(&mu_);
  }
}

void SerialDeliveryBase::RecheckWaiters() {
  MutexLock lock(&mu_);
  idle_.WakeAll();
}

bool SerialDeliveryBase::RunsHandlerIn(const scheduler::CRoutine* routine) const {
  MutexLock lock(&mu_);
  for (const Lane& l : lanes_) {
    if (l.running && l.routine == routine) return true;
  }
  return false;
}

int SerialDeliveryBase::running() const {
  MutexLock lock(&mu_);
  return running_;
}

SerialDeliveryStats SerialDeliveryBase::stats() const {
  MutexLock lock(&mu_);
  return stats_;
}

}  // namespace transport_internal
}  // namespace cyber
