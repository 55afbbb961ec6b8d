#include "cyber/mainboard/shutdown_deadline.h"

#include <utility>

#include "cyber/init/init.h"

namespace cyber {

namespace {

using SteadyClock = std::chrono::steady_clock;

// `from + d`, or never (max) for a duration that is not positive and finite
// or that a time_point cannot hold (longer than a century).
SteadyClock::time_point After(SteadyClock::time_point from, absl::Duration d) {
  if (d <= absl::ZeroDuration() || d >= absl::Hours(24 * 365 * 100)) {
    return SteadyClock::time_point::max();
  }
  return from + std::chrono::duration_cast<SteadyClock::duration>(absl::ToChronoNanoseconds(d));
}

}  // namespace

ShutdownDeadline::ShutdownDeadline(Options options)
    : options_(std::move(options)), started_(SteadyClock::now()), thread_([this] { Watch(); }) {}

ShutdownDeadline::~ShutdownDeadline() {
  ShutdownFinished();
  thread_.join();
}

void ShutdownDeadline::ShutdownBegins() {
  MutexLock lock(&mu_);
  if (phase_ != Phase::kRunning) return;
  phase_ = Phase::kShuttingDown;
  shutdown_began_ = SteadyClock::now();
  cv_.SignalAll();
}

void ShutdownDeadline::ShutdownFinished() {
  MutexLock lock(&mu_);
  while (phase_ == Phase::kExpired) cv_.Wait(&mu_);
  phase_ = Phase::kFinished;
  cv_.SignalAll();
}

void ShutdownDeadline::Watch() {
  const SteadyClock::time_point run_end = After(started_, options_.run_for);
  bool shutdown_requested = false;
  mu_.Lock();
  while (phase_ == Phase::kRunning) {
    if (!shutdown_requested && SteadyClock::now() >= run_end) {
      shutdown_requested = true;
      AsyncShutdown();  // the thread in WaitForShutdown() calls ShutdownBegins()
      continue;
    }
    if (shutdown_requested || run_end == SteadyClock::time_point::max()) {
      cv_.Wait(&mu_);
    } else {
      cv_.WaitUntil(&mu_, run_end);
    }
  }
  const SteadyClock::time_point deadline = After(shutdown_began_, options_.deadline);
  while (phase_ == Phase::kShuttingDown) {
    if (SteadyClock::now() >= deadline) {
      // Stuck: the watched threads will not finish. on_expired is expected
      // not to return; if it does, the shutdown goes on unbounded.
      phase_ = Phase::kExpired;
      mu_.Unlock();
      if (options_.on_expired) options_.on_expired();
      mu_.Lock();
      phase_ = Phase::kFinished;
      cv_.SignalAll();
      break;
    }
    if (deadline == SteadyClock::time_point::max()) {
      cv_.Wait(&mu_);
    } else {
      cv_.WaitUntil(&mu_, deadline);
    }
  }
  mu_.Unlock();
}

}  // namespace cyber
