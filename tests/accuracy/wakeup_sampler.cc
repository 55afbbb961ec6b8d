#include "tests/accuracy/wakeup_sampler.h"

#include <utility>

#include "cyber/common/log.h"

namespace cyber {
namespace accuracy {

WakeupSampler::WakeupSampler(SteadyClock* clock,
                             const timer::TimerSystem* driver,
                             absl::Duration interval)
    : clock_(clock), driver_(driver), interval_(interval) {
  ACHECK(interval_ > absl::ZeroDuration());
}

WakeupSampler::~WakeupSampler() {
  if (thread_.joinable()) Stop();
}

void WakeupSampler::Start() {
  ACHECK(!thread_.joinable()) << "WakeupSampler started twice";
  Instant first;
  {
    MutexLock lock(&mu_);
    stopping_ = false;
    samples_.clear();
    last_at_ = clock_->Now();
    last_wakeups_ = driver_->stats().wakeups;
    first = last_at_;
  }
  thread_ = std::thread([this, first] { Loop(first); });
}

void WakeupSampler::Loop(Instant first) {
  MutexLock lock(&mu_);
  for (int64_t k = 1; !stopping_; ++k) {
    const Instant next = first + interval_ * k;
    const auto deadline = SteadyClock::ToTimePoint(next);
    while (!stopping_ && clock_->Now() < next) {
      stop_requested_.WaitUntil(&mu_, deadline);
    }
    if (stopping_) return;  // Stop() takes the last sample
    SampleLocked();
  }
}

void WakeupSampler::SampleLocked() {
  const Instant now = clock_->Now();
  const uint64_t wakeups = driver_->stats().wakeups;
  samples_.push_back({last_at_, now - last_at_, wakeups - last_wakeups_});
  last_at_ = now;
  last_wakeups_ = wakeups;
}

std::vector<WakeupSample> WakeupSampler::Stop() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  stop_requested_.SignalAll();
  if (thread_.joinable()) thread_.join();
  MutexLock lock(&mu_);
  if (clock_->Now() > last_at_) SampleLocked();
  return std::exchange(samples_, {});
}

}  // namespace accuracy
}  // namespace cyber
