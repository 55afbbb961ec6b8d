#include "tests/accuracy/periodic_probe.h"

#include <utility>

#include "cyber/common/log.h"
#include "cyber/time/steady_clock.h"

namespace cyber {
namespace accuracy {

PeriodicProbe::PeriodicProbe(Options options, const timer::TimingWheel* wheel)
    : options_(std::move(options)), wheel_(wheel) {
  ACHECK(options_.period > absl::ZeroDuration());
  ACHECK(options_.calls >= 1);
}

bool PeriodicProbe::OnCall(const timer::TimerEvent& event) {
  bool overrun = false;
  {
    MutexLock lock(&mu_);
    if (!start_.has_value()) {
      const int64_t first = 1 + event.missed_periods;
      start_ = Start{event.expected_time - options_.period * first, first};
    }
    absl::Duration remainder;
    const int64_t k = absl::IDivDuration(event.expected_time - start_->origin,
                                         options_.period, &remainder);
    ACHECK(remainder == absl::ZeroDuration())
        << "expected time " << event.expected_time << " is off the schedule "
        << start_->origin << " + k * " << options_.period;
    const int64_t position = k - start_->first_index;
    if (position < options_.calls) {
      Fire fire;
      fire.index = k;
      fire.expected = event.expected_time;
      fire.actual = event.actual_time;
      if (wheel_ != nullptr) {
        fire.tick =
            wheel_->TickToInstant(wheel_->DeadlineToTick(event.expected_time));
      }
      fire.missed_before = event.missed_periods;
      fires_.push_back(fire);
    }
    if (options_.overrun_at.has_value() && !overrun_index_.has_value() &&
        position >= *options_.overrun_at) {
      overrun_index_ = k;
      overrun = true;
    }
    if (position >= options_.calls - 1) done_ = true;
  }
  changed_.SignalAll();
  return overrun;
}

std::optional<PeriodicProbe::Start> PeriodicProbe::WaitForStart(
    Instant limit) {
  const auto deadline = SteadyClock::ToTimePoint(limit);
  MutexLock lock(&mu_);
  while (!start_.has_value()) {
    if (!changed_.WaitUntil(&mu_, deadline) && !start_.has_value() &&
        SteadyClock::Get()->Now() >= limit) {
      return std::nullopt;
    }
  }
  return start_;
}

bool PeriodicProbe::WaitUntilDone(Instant limit) {
  const auto deadline = SteadyClock::ToTimePoint(limit);
  MutexLock lock(&mu_);
  while (!done_) {
    if (!changed_.WaitUntil(&mu_, deadline) && !done_ &&
        SteadyClock::Get()->Now() >= limit) {
      return false;
    }
  }
  return true;
}

std::vector<Fire> PeriodicProbe::TakeFires() {
  MutexLock lock(&mu_);
  return std::exchange(fires_, {});
}

std::optional<int64_t> PeriodicProbe::overrun_index() const {
  MutexLock lock(&mu_);
  return overrun_index_;
}

}  // namespace accuracy
}  // namespace cyber
