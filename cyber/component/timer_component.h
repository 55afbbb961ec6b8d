// TimerComponent: a component whose Proc() runs periodically, at the
// `interval` (milliseconds) of its graph entry — sensor pollers, monitors.
//
//   class ImuPoller : public cyber::TimerComponent {
//    public:
//     bool Init() override { /* GetInterval() is already valid here */ }
//     bool Proc() override { ...; return true; }
//   };
//   CYBER_REGISTER_COMPONENT(ImuPoller)
//
// Proc() runs on the timer: phase-locked to start + k * interval (no drift),
// never concurrently with itself, in a scheduler routine. A Proc() that
// returns false or throws is a failed call: counted in Stats() (a throw also
// in `exceptions`) and logged with the running count (ComponentBase::RunProc);
// the timer keeps running. Shutdown() stops the timer synchronously before
// the component is destroyed.

#ifndef CYBER_COMPONENT_TIMER_COMPONENT_H_
#define CYBER_COMPONENT_TIMER_COMPONENT_H_

#include <cstdint>
#include <memory>

#include "absl/time/time.h"
#include "cyber/common/mutex.h"
#include "cyber/component/component_base.h"
#include "cyber/component/component_registry.h"  // CYBER_REGISTER_COMPONENT, as in Cyber RT
#include "timer/timer.h"

namespace cyber {

class TimerComponent : public ComponentBase {
 public:
  virtual bool Proc() = 0;

  // The period in milliseconds (Cyber RT's interface), valid from Init() on.
  uint64_t GetInterval() const {
    return static_cast<uint64_t>(absl::ToInt64Milliseconds(interval_));
  }
  absl::Duration interval() const { return interval_; }

  using ComponentBase::Initialize;
  absl::Status Initialize(const dag::TimerComponentSpec& spec,
                          const ComponentContext& context) override;
  void Shutdown() override;
  ComponentStats Stats() const override;

 private:
  absl::Duration interval_ = absl::ZeroDuration();
  std::unique_ptr<Timer> timer_;
  // Calls and their first and latest actual times (for the achieved rate),
  // written by the timer callback, read by Stats(), kept consistent together.
  mutable Mutex calls_mu_;
  uint64_t calls_ ABSL_GUARDED_BY(calls_mu_) = 0;
  Instant first_call_ ABSL_GUARDED_BY(calls_mu_);
  Instant last_call_ ABSL_GUARDED_BY(calls_mu_);
};

}  // namespace cyber

#endif  // CYBER_COMPONENT_TIMER_COMPONENT_H_
