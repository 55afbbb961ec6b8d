#include "timer/timer_stop_registry.h"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <system_error>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "cyber/common/log.h"
#include "cyber/common/mutex.h"
#include "cyber/time/wait_list.h"

namespace {

bool IsPositiveDuration(const char* flag, const std::string& value) {
  absl::Duration d;
  if (absl::ParseDuration(value, &d) && d > absl::ZeroDuration()) return true;
  std::fprintf(stderr,
               "flag --%s: \"%s\" is not a positive duration (e.g. 1s, 250ms; "
               "inf: never)\n",
               flag, value.c_str());
  return false;
}

}  // namespace

DEFINE_string(timer_stop_warn_after, "1s",
              "log a warning (and again at 2, 4, 8... times this) when a "
              "timer's Stop() has waited this long for its running callback "
              "(a duration, e.g. 1s, 250ms; inf: never)");
DEFINE_validator(timer_stop_warn_after, &IsPositiveDuration);

namespace cyber {
namespace timer {

namespace {

using SteadyClock = std::chrono::steady_clock;
constexpr absl::Duration kDefaultStopWarnAfter = absl::Seconds(1);
// Past this the next warning is never due (and doubling cannot overflow).
constexpr SteadyClock::duration kLongestWarningInterval = std::chrono::hours(24 * 365);

std::string Rounded(absl::Duration d) {
  return absl::FormatDuration(absl::Trunc(d, absl::Milliseconds(1)));
}

}  // namespace

absl::Duration StopWarnAfter() {
  absl::Duration d;
  if (!absl::ParseDuration(FLAGS_timer_stop_warn_after, &d) || d <= absl::ZeroDuration()) {
    return kDefaultStopWarnAfter;
  }
  return d;
}

std::string ToString(const StopInProgress& stop) {
  return absl::StrCat("timer \"", stop.timer, "\": Stop() waiting ", Rounded(stop.waited),
                      " for its running callback; caller: ", stop.caller);
}

namespace timer_internal {

// The waiting stops and the callers' descriptions, and the thread that
// warns about stops that wait too long. One per process, never destroyed
// (a Stop() may wait on any thread at exit).
class StopRegistry {
 public:
  static StopRegistry& Get() {
    static StopRegistry* const registry = new StopRegistry;
    return *registry;
  }

  // Returns whether the caller must start the watcher (StartWatcher(),
  // holding no lock): true for one stop, the first in this process with a
  // warning to give (or the first after a failed start).
  bool Add(StopWaitRecord* r) {
    MutexLock lock(&mu_);
    r->next_ = records_;
    if (records_ != nullptr) records_->prev_ = r;
    records_ = r;
    if (r->next_warning_ == SteadyClock::time_point::max()) return false;  // never
    if (watcher_pid_ != getpid()) {
      watcher_pid_ = getpid();  // claimed: the watcher runs soon
      return true;
    }
    if (r->next_warning_ < watcher_wakes_at_) {
      watcher_wakes_at_ = r->next_warning_;
      cv_->Signal();
    }
    return false;
  }

  // Starts the watcher that Add() claimed. It begins by looking at every
  // record, those added meanwhile too.
  void StartWatcher() {
    try {
      std::thread([this] { Watch(); }).detach();
      return;
    } catch (const std::system_error& e) {
      // No thread, no warnings: the stops themselves still work, and the
      // next one that waits tries again.
      bool say;
      {
        MutexLock lock(&mu_);
        if (watcher_pid_ == getpid()) watcher_pid_ = 0;
        say = no_watcher_said_pid_ != getpid();  // once per process
        no_watcher_said_pid_ = getpid();
      }
      if (say) std::fprintf(stderr, "timer: no thread to watch stuck Stop()s: %s\n", e.what());
    }
  }

  // Returns what to log now that the stop returned ("" if it never warned).
  std::string Remove(StopWaitRecord* r) {
    MutexLock lock(&mu_);
    if (r->prev_ != nullptr) r->prev_->next_ = r->next_;
    if (r->next_ != nullptr) r->next_->prev_ = r->prev_;
    if (records_ == r) records_ = r->next_;
    if (!r->warned_) return std::string();
    return absl::StrCat("timer \"", r->timer_, "\": Stop() returned after ",
                        Rounded(absl::FromChrono(SteadyClock::now() - r->since_)),
                        " (caller: ", CallerLocked(*r), ")");
  }

  void AddCaller(ScopedStopCaller* c) {
    MutexLock lock(&mu_);
    c->next_ = callers_;
    if (callers_ != nullptr) callers_->prev_ = c;
    callers_ = c;
  }

  void RemoveCaller(ScopedStopCaller* c) {
    MutexLock lock(&mu_);
    if (c->prev_ != nullptr) c->prev_->next_ = c->next_;
    if (c->next_ != nullptr) c->next_->prev_ = c->prev_;
    if (callers_ == c) callers_ = c->next_;
  }

  std::vector<StopInProgress> Snapshot() {
    MutexLock lock(&mu_);
    const SteadyClock::time_point now = SteadyClock::now();
    std::vector<StopInProgress> stops;
    for (const StopWaitRecord* r = records_; r != nullptr; r = r->next_) {
      stops.push_back({r->timer_, CallerLocked(*r), absl::FromChrono(now - r->since_)});
    }
    std::stable_sort(stops.begin(), stops.end(),
                     [](const StopInProgress& a, const StopInProgress& b) {
                       return a.waited > b.waited;
                     });
    return stops;
  }

 private:
  StopRegistry() : cv_(new CondVar) {
    pthread_atfork(&BeforeFork, &AfterForkInParent, &AfterForkInChild);
  }

  // A fork (a gtest death test) copies the lock as it is and none of the
  // threads: the lock is held across it, and the child's watcher (none yet)
  // starts at its first waiting Stop(), on a fresh condition variable (the
  // copy may list the parent's watcher as a waiter). The parent's waiting
  // stops are not the child's (their threads do not exist there; listed,
  // they would be warned about for ever), nor are its callers, except those
  // of the execution that forked, which goes on in the child.
  static void BeforeFork() ABSL_NO_THREAD_SAFETY_ANALYSIS { Get().mu_.Lock(); }
  static void AfterForkInParent() ABSL_NO_THREAD_SAFETY_ANALYSIS { Get().mu_.Unlock(); }
  static void AfterForkInChild() ABSL_NO_THREAD_SAFETY_ANALYSIS {
    StopRegistry& r = Get();
    r.records_ = nullptr;  // the forking execution was not waiting in a Stop()
    const void* const me = CurrentExecutionId();
    ScopedStopCaller* kept = nullptr;  // in the same order (innermost first)
    ScopedStopCaller* last = nullptr;
    for (ScopedStopCaller* c = r.callers_; c != nullptr;) {
      ScopedStopCaller* const next = c->next_;
      if (c->execution_ == me) {
        c->prev_ = last;
        c->next_ = nullptr;
        (last == nullptr ? kept : last->next_) = c;
        last = c;
      }
      c = next;
    }
    r.callers_ = kept;
    r.cv_ = new CondVar;  // the parent's is leaked: it may be unusable here
    r.watcher_pid_ = 0;
    r.watcher_wakes_at_ = SteadyClock::time_point::max();
    r.mu_.Unlock();
  }

  // Describes who waits: the thread or routine, and what a ScopedStopCaller
  // on it says it does.
  std::string CallerLocked(const StopWaitRecord& r) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    std::string who;
    if (r.coroutine_ != nullptr) {
      const std::string name = r.coroutine_->DebugName();
      who = name.empty() ? "a routine" : absl::StrCat("routine \"", name, "\"");
    } else {
      who = absl::StrCat("thread ", r.thread_id_, " \"", r.thread_name_, "\"");
    }
    for (const ScopedStopCaller* c = callers_; c != nullptr; c = c->next_) {
      if (c->execution_ == r.execution_) return absl::StrCat(who, ", in ", c->what_);
    }
    return who;
  }

  std::string WarningLocked(const StopWaitRecord& r, SteadyClock::time_point now) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return absl::StrCat("timer \"", r.timer_, "\": Stop() has waited ",
                        Rounded(absl::FromChrono(now - r.since_)),
                        " for its running callback to return (caller: ", CallerLocked(r),
                        "); still waiting. If the caller holds a lock the callback "
                        "needs, it never will.");
  }

  // The watcher thread: logs the warnings that are due, then sleeps until
  // the next one (indefinitely while none is planned).
  void Watch() ABSL_NO_THREAD_SAFETY_ANALYSIS {  // holds mu_ but to log
    mu_.Lock();
    while (true) {
      const SteadyClock::time_point now = SteadyClock::now();
      std::vector<std::string> due;
      SteadyClock::time_point next = SteadyClock::time_point::max();
      for (StopWaitRecord* r = records_; r != nullptr; r = r->next_) {
        if (r->next_warning_ <= now) {
          due.push_back(WarningLocked(*r, now));
          r->warned_ = true;
          // Again after twice as long in all: at 1x, 2x, 4x ... the threshold.
          const SteadyClock::duration waited = r->next_warning_ - r->since_;
          r->next_warning_ = waited > kLongestWarningInterval
                                 ? SteadyClock::time_point::max()
                                 : r->next_warning_ + waited;
        }
        next = std::min(next, r->next_warning_);
      }
      if (!due.empty()) {
        mu_.Unlock();  // glog takes its own locks
        for (const std::string& w : due) AWARN << w;
        mu_.Lock();
        continue;
      }
      watcher_wakes_at_ = next;
      if (next == SteadyClock::time_point::max()) {
        cv_->Wait(&mu_);
      } else {
        cv_->WaitUntil(&mu_, next);
      }
    }
  }

  Mutex mu_;
  CondVar* cv_ ABSL_GUARDED_BY(mu_);  // wakes the watcher
  StopWaitRecord* records_ ABSL_GUARDED_BY(mu_) = nullptr;
  ScopedStopCaller* callers_ ABSL_GUARDED_BY(mu_) = nullptr;
  // The process whose watcher runs or is being started (after a fork, not
  // the child).
  pid_t watcher_pid_ ABSL_GUARDED_BY(mu_) = 0;
  // The process that said it has no watcher thread.
  pid_t no_watcher_said_pid_ ABSL_GUARDED_BY(mu_) = 0;
  // When the watcher wakes next (max: not before it is signalled).
  SteadyClock::time_point watcher_wakes_at_ ABSL_GUARDED_BY(mu_) =
      SteadyClock::time_point::max();
};

StopWaitRecord::StopWaitRecord(std::string timer_name)
    : timer_(std::move(timer_name)),
      execution_(CurrentExecutionId()),
      coroutine_(CurrentCoroutine()),
      since_(SteadyClock::now()) {
  if (coroutine_ == nullptr) {
    thread_id_ = gettid();
    pthread_getname_np(pthread_self(), thread_name_, sizeof(thread_name_));
  }
  const absl::Duration after = StopWarnAfter();
  next_warning_ = after >= absl::FromChrono(kLongestWarningInterval)
                      ? SteadyClock::time_point::max()
                      : since_ + std::chrono::duration_cast<SteadyClock::duration>(
                                     absl::ToChronoNanoseconds(after));
  must_start_watcher_ = StopRegistry::Get().Add(this);
}

void StopWaitRecord::StartWatcher() { StopRegistry::Get().StartWatcher(); }

StopWaitRecord::~StopWaitRecord() {
  const std::string returned = StopRegistry::Get().Remove(this);
  if (!returned.empty()) AWARN << returned;
}

}  // namespace timer_internal

std::vector<StopInProgress> StopsInProgress() {
  return timer_internal::StopRegistry::Get().Snapshot();
}

ScopedStopCaller::ScopedStopCaller(std::string what)
    : execution_(CurrentExecutionId()), what_(std::move(what)) {
  timer_internal::StopRegistry::Get().AddCaller(this);
}

ScopedStopCaller::~ScopedStopCaller() { timer_internal::StopRegistry::Get().RemoveCaller(this); }

}  // namespace timer
}  // namespace cyber
