#include "tests/scale/progress_sampler.h"

#include <pthread.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <vector>

#include "tests/scale/proc_stats.h"
#include "tests/scale/scale_report.h"

namespace cyber {
namespace scale {

namespace {

constexpr absl::Duration kSamplePeriod = absl::Seconds(1);
// Longest single sleep, so that Stop() is noticed soon.
constexpr absl::Duration kStopPoll = absl::Milliseconds(100);

}  // namespace

void ProgressSampler::Range::Add(int64_t v) {
  min = samples == 0 ? v : std::min(min, v);
  max = samples == 0 ? v : std::max(max, v);
  ++samples;
}

ProgressSampler::ProgressSampler(Clock* clock, TimeoutLoad* timeouts,
                                 const PeriodicLoad* periodics,
                                 const timer::TimerSystem* driver,
                                 const ThreadRoles* roles,
                                 absl::Duration progress)
    : clock_(clock),
      timeouts_(timeouts),
      periodics_(periodics),
      driver_(driver),
      roles_(roles),
      progress_(progress) {}

void ProgressSampler::Start() {
  begin_ = clock_->Now();
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), kSamplerThreadName);
    Loop();
  });
}

void ProgressSampler::Stop() {
  stopping_.store(true);
  if (thread_.joinable()) thread_.join();
}

void ProgressSampler::SetPhase(const std::string& phase) {
  MutexLock lock(&mu_);
  phase_ = phase;
}

void ProgressSampler::SetMeasuring(bool measuring) {
  MutexLock lock(&mu_);
  measuring_ = measuring;
}

ProgressSampler::Range ProgressSampler::rss() const {
  MutexLock lock(&mu_);
  return rss_;
}

ProgressSampler::Range ProgressSampler::live_timeouts() const {
  MutexLock lock(&mu_);
  return live_;
}

ProgressSampler::Range ProgressSampler::wheel_entries() const {
  MutexLock lock(&mu_);
  return wheel_;
}

void ProgressSampler::Loop() {
  Instant next = clock_->Now();
  Instant last_print = next;
  TimeoutCounters last_timeouts = timeouts_->counters();
  uint64_t last_calls = periodics_->counters().calls;
  std::vector<ThreadCpu> last_threads = SampleThreads();
  while (true) {
    next += kSamplePeriod;
    while (!stopping_.load() && clock_->Now() < next) {
      clock_->SleepUntil(std::min(next, clock_->Now() + kStopPoll));
    }
    if (stopping_.load()) return;
    const MemoryStatus memory = ReadMemoryStatus();
    const TimeoutCounters t = timeouts_->counters();
    const int64_t wheel = static_cast<int64_t>(driver_->wheel().size());
    std::string phase;
    {
      MutexLock lock(&mu_);
      if (measuring_) {
        rss_.Add(memory.rss_bytes);
        live_.Add(t.live);
        wheel_.Add(wheel);
      }
      phase = phase_;
    }
    const Instant now = clock_->Now();
    if (progress_ <= absl::ZeroDuration() || now - last_print < progress_) {
      continue;
    }
    const absl::Duration interval = now - last_print;
    const double secs = absl::ToDoubleSeconds(interval);
    const uint64_t calls = periodics_->counters().calls;
    const std::vector<ThreadCpu> threads = SampleThreads();
    std::map<ThreadRole, RoleCpu> cpu =
        roles_->CpuByRole(last_threads, threads);
    auto rate = [secs](uint64_t now_count, uint64_t then_count) {
      return Rate(static_cast<double>(now_count - then_count) / secs);
    };
    std::printf(
        "[%6.1f s %s] rss %s | live timeouts %s, wheel %s | armed %s, "
        "cancelled %s, fired %s, request lag max %.1f ms | periodic calls %s "
        "| CPU: tick %.1f%%, processors %.1f%%, requests %.1f%%\n",
        absl::ToDoubleSeconds(now - begin_), phase.c_str(),
        GiB(memory.rss_bytes).c_str(),
        Commas(static_cast<uint64_t>(std::max<int64_t>(t.live, 0))).c_str(),
        Commas(static_cast<uint64_t>(wheel)).c_str(),
        rate(t.armed, last_timeouts.armed).c_str(),
        rate(t.cancelled, last_timeouts.cancelled).c_str(),
        rate(t.fired, last_timeouts.fired).c_str(),
        absl::ToDoubleMilliseconds(timeouts_->TakeMaxLag()),
        rate(calls, last_calls).c_str(),
        Percent(cpu[ThreadRole::kTick].cpu, interval),
        Percent(cpu[ThreadRole::kScheduler].cpu, interval),
        Percent(cpu[ThreadRole::kRequests].cpu, interval));
    std::fflush(stdout);
    last_print = now;
    last_timeouts = t;
    last_calls = calls;
    last_threads = threads;
  }
}

}  // namespace scale
}  // namespace cyber
