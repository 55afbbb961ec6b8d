#include "cyber/mainboard/testing/stuck_stop_components.h"

#include <chrono>
#include <thread>
#include <utility>

#include "cyber/component/component_registry.h"
#include "scheduler/croutine.h"

namespace cyber {
namespace test_components {

bool StuckStop::Init() {
  TimerOptions o;
  o.name = name() + "_worker";
  o.period = absl::Milliseconds(10);
  o.callback = [this] { Work(); };
  // No TimerSystem: the graph's timer system (Init() runs with it ambient).
  worker_ = std::make_unique<Timer>(std::move(o));
  return worker_->Schedule().ok();
}

void StuckStop::Work() {
  // Waits for mu_, saying so at every try (Clear() resets the flag once it
  // holds mu_, and waits for it to be set again by a call that cannot get
  // mu_). try_lock, not try_lock_for: TSan does not see the latter.
  while (!mu_.try_lock()) {
    {
      std::lock_guard<std::mutex> lock(waiting_mu_);
      waiting_ = true;
    }
    waiting_cv_.notify_all();
    PauseBetweenTries();
  }
  mu_.unlock();
}

void StuckStop::PauseBetweenTries() {
  std::this_thread::sleep_for(std::chrono::milliseconds(1));  // a poll, not a settle
}

void StuckStop::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  {
    std::unique_lock<std::mutex> waiting(waiting_mu_);
    waiting_ = false;
    waiting_cv_.wait(waiting, [this] { return waiting_; });
  }
  worker_->Stop();  // waits for a call that waits for mu_: for ever
}

void ParkedStuckStop::PauseBetweenTries() {
  scheduler::CRoutine::SleepFor(absl::Milliseconds(1));  // parks the routine
}

CYBER_REGISTER_COMPONENT(StuckStop)
CYBER_REGISTER_COMPONENT(ParkedStuckStop)
CYBER_REGISTER_COMPONENT(Ticker)

}  // namespace test_components
}  // namespace cyber
