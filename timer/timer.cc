#include "timer/timer.h"

#include <atomic>
#include <utility>

#include "absl/strings/str_cat.h"
#include "cyber/common/log.h"
#include "timer/default_timer_system.h"
#include "timer/timer_core.h"

namespace cyber {
namespace timer {

namespace {

std::string UniqueTimerName() {
  static std::atomic<uint64_t> next{1};
  return absl::StrCat("timer#", next.fetch_add(1));
}

TimerOptions FromCyberOption(TimerOption opt) {
  TimerOptions o;
  o.period = absl::Milliseconds(opt.period);
  o.oneshot = opt.oneshot;
  o.callback = std::move(opt.callback);
  return o;
}

}  // namespace

Timer::Timer() : driver_(DefaultTickDriver()) {
  MutexLock lock(&mu_);
  name_ = UniqueTimerName();
}

Timer::Timer(TimerOption opt) : Timer() { SetTimerOption(std::move(opt)); }

Timer::Timer(uint32_t period, std::function<void()> callback, bool oneshot)
    : Timer(TimerOption(period, std::move(callback), oneshot)) {}

Timer::Timer(TimerOptions options, TickDriver* driver)
    : driver_(driver != nullptr ? driver : DefaultTickDriver()) {
  {
    MutexLock lock(&mu_);
    name_ = options.name.empty() ? UniqueTimerName() : options.name;
  }
  Configure(std::move(options)).IgnoreError();  // kept in config_status_
}

Timer::~Timer() {
  std::shared_ptr<TimerCore> core;
  {
    MutexLock lock(&mu_);
    core = std::move(core_);
  }
  if (core) core->Retire();
}

absl::Status Timer::Configure(TimerOptions options) {
  std::shared_ptr<TimerCore> old;
  absl::Status status;
  {
    MutexLock lock(&mu_);
    if (options.name.empty()) options.name = name_;
    name_ = options.name;
    status = ValidateTimerOptions(options, driver_->tick(),
                                  driver_->wheel().max_delay());
    configured_ = true;
    config_status_ = status;
    old = std::move(core_);
    if (status.ok()) {
      core_ = std::make_shared<TimerCore>(driver_, std::move(options));
    }
  }
  if (old) old->Retire();  // outside our lock: may wait for its callback
  return status;
}

void Timer::SetTimerOption(TimerOption opt) {
  const absl::Status status = Configure(FromCyberOption(std::move(opt)));
  if (!status.ok()) AERROR << "SetTimerOption: " << status.message();
}

absl::Status Timer::Schedule() {
  std::shared_ptr<TimerCore> core;
  {
    MutexLock lock(&mu_);
    if (!configured_) {
      return absl::FailedPreconditionError(
          absl::StrCat("timer \"", name_,
                       "\": Start() before SetTimerOption()/Configure(): no "
                       "period or callback set"));
    }
    if (!config_status_.ok()) return config_status_;
    core = core_;
  }
  if (driver_->is_shut_down()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "timer \"", name(), "\": the timer system is shut down"));
  }
  return core->Start();
}

void Timer::Start() {
  const absl::Status status = Schedule();
  if (!status.ok()) AERROR << "Start: " << status.message();
}

void Timer::Stop() {
  std::shared_ptr<TimerCore> c = core();
  if (c) c->Stop();  // not under mu_: may wait for the callback
}

bool Timer::IsRunning() const {
  std::shared_ptr<TimerCore> c = core();
  return c && c->IsRunning();
}

TimerStatistics Timer::GetStatistics() const {
  std::shared_ptr<TimerCore> c = core();
  return c ? c->Statistics() : TimerStatistics();
}

std::string Timer::name() const {
  MutexLock lock(&mu_);
  return name_;
}

std::shared_ptr<TimerCore> Timer::core() const {
  MutexLock lock(&mu_);
  return core_;
}

}  // namespace timer
}  // namespace cyber
