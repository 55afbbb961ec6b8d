#include "timer/timer.h"

#include <atomic>
#include <utility>

#include "absl/strings/str_cat.h"
#include "cyber/common/log.h"
#include "timer/period_rules.h"
#include "timer/timer_core.h"
#include "timer/timer_owner.h"

namespace cyber {
namespace timer {

namespace {

TimerOptions FromCyberOption(TimerOption opt) {
  TimerOptions o;
  o.period = absl::Milliseconds(opt.period);
  o.oneshot = opt.oneshot;
  o.callback = std::move(opt.callback);
  return o;
}

std::shared_ptr<TimerSystemCore> FrontEndOf(TimerSystem* driver) {
  return driver != nullptr ? driver->system() : nullptr;
}

}  // namespace

Timer::Timer() : core_(std::make_shared<TimerCore>(nullptr)) {}

Timer::Timer(TimerOption opt) : Timer() { SetTimerOption(std::move(opt)); }

Timer::Timer(uint32_t period, std::function<void()> callback, bool oneshot)
    : Timer(TimerOption(period, std::move(callback), oneshot)) {}

Timer::Timer(TimerOptions options, TimerSystem* driver)
    : core_(std::make_shared<TimerCore>(FrontEndOf(driver))) {
  Configure(std::move(options)).IgnoreError();  // Schedule() returns it
}

Timer::~Timer() { core_->Retire(); }

absl::Status Timer::Configure(TimerOptions options) {
  return ConfigureAs(std::move(options), /*cyber_option=*/false);
}

absl::Status Timer::ConfigureAs(TimerOptions options, bool cyber_option) {
  // No name: keep the one it had (an automatic name is not stored).
  if (options.name.empty()) options.name = core_->given_name();
  const std::string name = options.name.empty() ? core_->name() : options.name;
  absl::Status status = ValidateTimerOptions(options, name);
  if (status.ok() && cyber_option) {
    // Cyber RT refuses a period of 0 for a oneshot as well, so the period
    // rule holds for a TimerOption's oneshot too (the modern surface runs a
    // delay of 0 at once).
    status = CheckPeriod(absl::StrCat("timer \"", name, "\""), "period",
                         options.period);
  }
  const std::shared_ptr<TimerCore> core = core_;  // as in Stop()
  const absl::Duration period = options.period;
  const bool oneshot = options.oneshot;
  core->Configure(std::move(options), status);
  // Listed by the component whose Init() configures it (timer_owner.h).
  if (TimerOwner* const owner = TimerOwner::Current(); owner != nullptr && status.ok()) {
    owner->Adopt(core.get(), period, oneshot, [core] {
      OwnedTimer t;
      t.name = core->name();
      t.statistics = core->Statistics();
      return t;
    });
  }
  return status;
}

void Timer::SetTimerOption(TimerOption opt) {
  const absl::Status status =
      ConfigureAs(FromCyberOption(std::move(opt)), /*cyber_option=*/true);
  if (!status.ok()) AERROR << "SetTimerOption: " << status.message();
}

absl::Status Timer::Schedule() {
  if (core_->has_fixed_system()) return core_->StartFixed(/*reset=*/false);
  return core_->StartDefault(/*reset=*/false);
}

absl::Status Timer::Reset() {
  if (core_->has_fixed_system()) return core_->StartFixed(/*reset=*/true);
  return core_->StartDefault(/*reset=*/true);
}

void Timer::Start() {
  const absl::Status status = Schedule();
  if (!status.ok()) AERROR << "Start: " << status.message();
}

void Timer::Stop() {
  // Held for the whole call: a Stop() that waits may be woken by the call's
  // end and then find the Timer destroyed meanwhile (e.g. by its owner on
  // another thread); its core must outlive this wait.
  const std::shared_ptr<TimerCore> core = core_;
  core->Stop();
}

bool Timer::Cancel() {
  const std::shared_ptr<TimerCore> core = core_;  // as in Stop()
  return core->Cancel();
}

TimerPhase Timer::phase() const { return core_->phase(); }

bool Timer::IsReady() const { return core_->IsReady(); }

absl::Duration Timer::TimeUntilNextCall() const {
  return core_->TimeUntilNextCall();
}

Clock* Timer::clock() const { return core_->clock(); }

bool Timer::IsSteady() const { return core_->IsSteady(); }

bool Timer::IsRunning() const { return core_->IsRunning(); }

TimerStatistics Timer::GetStatistics() const { return core_->Statistics(); }

std::string Timer::name() const { return core_->name(); }

}  // namespace timer
}  // namespace cyber
