#include "cyber/component/timer_component.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace cyber {

absl::Status TimerComponent::Initialize(const dag::TimerComponentSpec& spec,
                                        const ComponentContext& context) {
  absl::Status s = SetUpFrom(spec, context);
  if (!s.ok()) return s;
  interval_ = spec.interval;
  if (!RunInit()) {
    return absl::FailedPreconditionError(absl::StrCat(
        spec.where.ToString(), ": component \"", name(), "\" (", class_name(),
        "): Init() returned false"));
  }
  TimerOptions options;
  options.name = name();
  options.period = interval_;
  // mainboard's status line shows the lateness p99 of each component.
  options.latency_percentiles = true;
  options.event_callback = [this](const TimerEvent& e) {
    if (shut_down_.load(std::memory_order_acquire)) return;
    {
      MutexLock lock(&calls_mu_);
      if (calls_++ == 0) first_call_ = e.actual_time;
      last_call_ = e.actual_time;
    }
    RunProc([this] { return Proc(); });  // a throw is counted here, not by the timer
  };
  // No runtime given: the current runtime's timer system, bound at start.
  timer_ = std::make_unique<Timer>(
      std::move(options),
      context.runtime != nullptr ? context.runtime->timers() : nullptr);
  s = timer_->Schedule();
  if (!s.ok()) {
    return absl::Status(s.code(), absl::StrCat(spec.where.ToString(), ": ",
                                               s.message()));
  }
  return absl::OkStatus();
}

void TimerComponent::Shutdown() {
  if (shut_down_.exchange(true)) return;
  if (timer_) timer_->Stop();  // synchronous: Proc() is not running after this
  // Readers the component created itself (in Init()) stop too, synchronously,
  // before Clear() and before the component is destroyed.
  if (node()) node()->Shutdown();
  Clear();
}

ComponentStats TimerComponent::Stats() const {
  ComponentStats s = BaseStats();
  s.timer = true;
  if (interval_ > absl::ZeroDuration()) {
    s.configured_hz = 1.0 / absl::ToDoubleSeconds(interval_);
  }
  if (timer_) {
    const TimerStatistics t = timer_->GetStatistics();
    // Achieved rate = calls per second between the first and the latest
    // call: (n - 1) intervals over their span. For a phase-locked timer this
    // is the configured rate up to one call's jitter over the whole run.
    MutexLock lock(&calls_mu_);
    if (calls_ > 1 && last_call_ > first_call_) {
      s.achieved_hz = static_cast<double>(calls_ - 1) /
                      absl::ToDoubleSeconds(last_call_ - first_call_);
    }
    s.lateness_p99 = t.lateness_p99;
    s.lateness_max = t.lateness_max;
    s.overruns = t.overruns;
    s.missed_periods = t.missed_periods;
    s.early_fires = t.early_fires;
  }
  return s;
}

}  // namespace cyber
