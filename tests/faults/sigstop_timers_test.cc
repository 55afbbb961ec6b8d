// Fault injection: the whole process is stopped for 2 s (SIGSTOP, then
// SIGCONT) while 1,000 periodic timers of 2-100 ms run. Every timer must
// resume per its overrun policy, none early, no burst under kSkip, missed
// periods counted exactly (the rules: stall_invariants.h).
//
// How: the test fork()s a child (the parent has no thread yet, checked) that
// runs the timer system — cyber::Init, 1,000 cyber::Timers on the modern
// surface with a TimerEvent callback — and a parent that plays the fault:
//
//   child                                   parent
//   Init, schedule 1,000 timers
//   every timer called once  --"RUNNING"-->
//                                           timers run for 1 s
//                                           SIGSTOP; waitpid sees it stopped
//                                           (the clock reading: `stopped`)
//        (the whole process stopped)        2 s pass
//                                           `resumed` = the clock; SIGCONT
//                            <--stopped, resumed--
//   1.5 s more; each timer stops itself at
//   its first call at/after resumed + 1.5 s
//   Stop() all, read statistics, check
//   cyber::Shutdown()     --"PASS"/"FAIL" + report, exit status 0/1-->
//                                           prints the report, asserts
//
// Why real time: the fault is the process not running while CLOCK_MONOTONIC
// (the timers' clock, cyber::SteadyClock) goes on. A simulated clock cannot
// stop the tick thread, the processors and the callbacks mid-flight and let
// time pass under them; only stopping the real process does. The 1 s / 2 s /
// 1.5 s phases are the scenario itself, never a wait for something to
// happen: every hand-over is a message on the socket or a condition
// variable, and the limits below only end a broken run.
//
// Why the margins are sound: no check has one. Both processes read the same
// CLOCK_MONOTONIC; the parent reads `stopped` after waitpid() has reported
// the child stopped and `resumed` before it sends SIGCONT, so nothing in the
// child can run in [stopped, resumed): an exact window. Every rule judges a
// call against the timer's own schedule (expected times, and the callback's
// clock readings at its start and end, which bracket the run the timer
// measures), so CPU load, sanitizers or a busy machine can make calls later
// but cannot make a correct timer fail. The 2 s stall is 20-1000 periods of
// every timer, so every timer really misses periods. The record of each
// timer holds 20 s of calls (the scenario takes about 5 s of them).
//
// The child writes its verdict and a summary (calls, missed periods,
// lateness after the resume) to the socket; the parent prints it to the test
// log.

#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "cyber/common/mutex.h"
#include "cyber/init/init.h"
#include "cyber/time/instant.h"
#include "cyber/time/steady_clock.h"
#include "gtest/gtest.h"
#include "tests/faults/stall_invariants.h"
#include "timer/timer.h"

namespace cyber {
namespace faults {
namespace {

using timer::OverrunPolicy;

// --- The scenario ------------------------------------------------------------

constexpr int kTimers = 1000;
constexpr uint32_t kSeed = 20240607;
constexpr int kMinPeriodMs = 2;
constexpr int kMaxPeriodMs = 100;
constexpr absl::Duration kRunBeforeStop = absl::Seconds(1);
constexpr absl::Duration kStall = absl::Seconds(2);
constexpr absl::Duration kRunAfterResume = absl::Milliseconds(1500);
// How much running time each timer's preallocated record covers.
constexpr absl::Duration kRecordSpan = absl::Seconds(20);

// Limits that only end a broken run; a passing run never waits for them.
constexpr absl::Duration kChildStartLimit = absl::Seconds(60);   // all called once
constexpr absl::Duration kChildFinishLimit = absl::Seconds(90);  // all stopped
constexpr absl::Duration kParentStartLimit = absl::Seconds(100);
constexpr absl::Duration kParentFinishLimit = absl::Seconds(150);

Instant Now() { return SteadyClock::Get()->Now(); }
int64_t Ns(Instant t) { return absl::ToInt64Nanoseconds(t.SinceEpoch()); }
int64_t NowNs() { return Ns(Now()); }
std::chrono::steady_clock::time_point ChronoDeadline(absl::Duration from_now) {
  return SteadyClock::ToTimePoint(Now() + from_now);
}
std::string Ms(int64_t ns) {
  return absl::StrFormat("%.3fms", static_cast<double>(ns) / 1e6);
}

// What the parent tells the child after SIGCONT.
struct StallMessage {
  int64_t stopped_ns;
  int64_t resumed_ns;
};

bool SendAll(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = send(fd, p, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// --- Child: the timer system under the fault ---------------------------------

// One timer and its record. The record fields are written only by the
// timer's own callback, which never runs concurrently with itself (the
// timer's lock orders consecutive calls), and read by the main thread only
// after the timer's final Stop() returned (Stop() waits out a running call).
struct Slot {
  std::string name;
  int64_t period_ns = 0;
  OverrunPolicy policy = OverrunPolicy::kSkip;
  int max_burst = 0;
  std::unique_ptr<timer::Timer> timer;
  std::unique_ptr<CallRecord[]> record;  // allocated before the timer runs
  size_t capacity = 0;                   // (~34 MB for all 1,000 together)
  size_t calls = 0;
  bool stopped_itself = false;
  std::atomic<uint64_t> calls_after_stop{0};
};

class ChildScenario {
 public:
  ChildScenario() : slots_(new Slot[kTimers]) {}

  // Runs the child's side; returns the verdict, appends the report.
  bool Run(int fd, std::string* report);

 private:
  // The callback of every timer: records the call, and at the first call at
  // or after stop_after_ns_ stops its own timer (so nothing is skipped after
  // the last recorded call: the statistics' missed count must equal the sum
  // over the calls exactly). Cheap: two clock reads and a few stores; the
  // lock is taken twice per timer in the whole run.
  void OnCall(Slot* s, const timer::TimerEvent& e);
  void MakeTimers();
  void NoteProgress(bool first, bool stopped);
  std::string Summary(const std::vector<TimerFindings>& findings,
                      const std::vector<timer::TimerStatistics>& stats,
                      const StallWindow& stall) const;

  std::unique_ptr<Slot[]> slots_;
  std::atomic<int64_t> stop_after_ns_{std::numeric_limits<int64_t>::max()};
  Mutex mu_;
  CondVar progress_;
  int first_calls_ ABSL_GUARDED_BY(mu_) = 0;
  int stopped_ ABSL_GUARDED_BY(mu_) = 0;
};

void ChildScenario::OnCall(Slot* s, const timer::TimerEvent& e) {
  const int64_t entry = NowNs();
  if (s->stopped_itself) {
    s->calls_after_stop.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  CallRecord* r = s->calls < s->capacity ? &s->record[s->calls] : nullptr;
  if (r != nullptr) {
    r->expected_ns = Ns(e.expected_time);
    r->actual_ns = Ns(e.actual_time);
    r->entry_ns = entry;
    r->missed = e.missed_periods;
  }
  const bool first = s->calls == 0;
  const bool stop = Ns(e.actual_time) >= stop_after_ns_.load(std::memory_order_acquire);
  if (stop) {
    s->stopped_itself = true;
    s->timer->Stop();  // from its own callback: does not wait for itself
  }
  ++s->calls;
  if (r != nullptr) r->end_ns = NowNs();
  if (first || stop) NoteProgress(first, stop);
}

void ChildScenario::NoteProgress(bool first, bool stopped) {
  MutexLock lock(&mu_);
  if (first) ++first_calls_;
  if (stopped) ++stopped_;
  progress_.SignalAll();
}

void ChildScenario::MakeTimers() {
  // Fixed seed: the same 1,000 timers every run. The first six pin the
  // extremes (2 ms and 100 ms under each policy).
  std::mt19937 rng(kSeed);
  std::uniform_int_distribution<int> period_ms(kMinPeriodMs, kMaxPeriodMs);
  std::uniform_int_distribution<int> percent(0, 99);
  std::uniform_int_distribution<int> burst(1, 4);
  const OverrunPolicy pinned[] = {OverrunPolicy::kSkip, OverrunPolicy::kDelay,
                                  OverrunPolicy::kBurst};
  for (int i = 0; i < kTimers; ++i) {
    Slot& s = slots_[i];
    int ms = period_ms(rng);
    const int draw = percent(rng);
    s.policy = draw < 80   ? OverrunPolicy::kSkip
               : draw < 90 ? OverrunPolicy::kDelay
                           : OverrunPolicy::kBurst;
    s.max_burst = burst(rng);
    if (i < 6) {
      ms = i < 3 ? kMinPeriodMs : kMaxPeriodMs;
      s.policy = pinned[i % 3];
    }
    if (s.policy != OverrunPolicy::kBurst) s.max_burst = 0;
    s.period_ns = int64_t{ms} * 1000000;
    s.name = absl::StrCat("stall#", i, "/", ms, "ms/",
                          timer::OverrunPolicyName(s.policy));
    s.capacity = static_cast<size_t>(absl::ToInt64Milliseconds(kRecordSpan) / ms) + 16;
    s.record.reset(new CallRecord[s.capacity]);

    timer::TimerOptions o;
    o.name = s.name;
    o.period = absl::Milliseconds(ms);
    o.overrun_policy = s.policy;
    if (s.policy == OverrunPolicy::kBurst) o.max_burst = s.max_burst;
    Slot* slot = &s;
    o.event_callback = [this, slot](const timer::TimerEvent& e) { OnCall(slot, e); };
    s.timer = std::make_unique<timer::Timer>(std::move(o));
  }
}

bool ChildScenario::Run(int fd, std::string* report) {
  if (!cyber::Init("sigstop_timers_child")) {
    absl::StrAppend(report, "cyber::Init failed\n");
    return false;
  }
  MakeTimers();  // every slot complete before any timer can call back
  bool ok = true;
  for (int i = 0; i < kTimers && ok; ++i) {
    const absl::Status status = slots_[i].timer->Schedule();
    if (!status.ok()) {
      absl::StrAppend(report, "Schedule() failed: ", status.ToString(), "\n");
      ok = false;
    }
  }

  // Every timer running (called at least once), then tell the parent.
  if (ok) {
    const auto deadline = ChronoDeadline(kChildStartLimit);
    MutexLock lock(&mu_);
    while (first_calls_ < kTimers && progress_.WaitUntil(&mu_, deadline)) {
    }
    if (first_calls_ < kTimers) {
      absl::StrAppend(report, "only ", first_calls_, " of ", kTimers,
                      " timers were called within ",
                      absl::FormatDuration(kChildStartLimit), "\n");
      ok = false;
    }
  }
  StallMessage stall_msg{};
  if (ok) {
    ok = SendAll(fd, "RUNNING\n", 8);
    // Blocks across the stop; the parent writes after SIGCONT.
    size_t got = 0;
    while (ok && got < sizeof(stall_msg)) {
      const ssize_t n =
          recv(fd, reinterpret_cast<char*>(&stall_msg) + got, sizeof(stall_msg) - got, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        absl::StrAppend(report, "lost the parent before the stall message\n");
        ok = false;
      } else {
        got += static_cast<size_t>(n);
      }
    }
  }
  if (ok) {
    // 1.5 s more of the scenario; each timer then stops itself.
    stop_after_ns_.store(stall_msg.resumed_ns + absl::ToInt64Nanoseconds(kRunAfterResume),
                         std::memory_order_release);
    const auto deadline = ChronoDeadline(kRunAfterResume + kChildFinishLimit);
    MutexLock lock(&mu_);
    while (stopped_ < kTimers && progress_.WaitUntil(&mu_, deadline)) {
    }
    if (stopped_ < kTimers) {
      absl::StrAppend(report, kTimers - stopped_,
                      " timers made no call after SIGCONT + ",
                      absl::FormatDuration(kRunAfterResume), " (not resumed?)\n");
      ok = false;  // the checks below say which
    }
  }

  // Stop every timer (most already stopped themselves), then judge.
  std::vector<timer::TimerStatistics> stats(kTimers);
  for (int i = 0; i < kTimers; ++i) {
    slots_[i].timer->Stop();
    stats[i] = slots_[i].timer->GetStatistics();
  }
  if (stall_msg.resumed_ns != 0) {
    const StallWindow stall{stall_msg.stopped_ns, stall_msg.resumed_ns};
    std::vector<TimerFindings> findings;
    findings.reserve(kTimers);
    size_t violations = 0;
    std::string details;
    for (int i = 0; i < kTimers; ++i) {
      const Slot& s = slots_[i];
      ObservedTimer t;
      t.name = s.name;
      t.period_ns = s.period_ns;
      t.policy = s.policy;
      t.max_burst = s.max_burst;
      t.calls = absl::Span<const CallRecord>(s.record.get(),
                                             std::min(s.calls, s.capacity));
      t.overflowed = s.calls > s.capacity;
      t.calls_after_stop = s.calls_after_stop.load();
      t.stats = stats[i];
      findings.push_back(CheckStalledTimer(t, stall));
      for (const std::string& v : findings.back().violations) {
        if (++violations <= 30) absl::StrAppend(&details, "  ", v, "\n");
      }
    }
    absl::StrAppend(report, Summary(findings, stats, stall));
    if (violations != 0) {
      absl::StrAppend(report, "VIOLATIONS: ", violations,
                      violations > 30 ? " (first 30 shown)" : "", "\n", details);
      ok = false;
    }
  }

  for (int i = 0; i < kTimers; ++i) slots_[i].timer.reset();
  cyber::Shutdown();
  return ok;
}

std::string ChildScenario::Summary(
    const std::vector<TimerFindings>& findings,
    const std::vector<timer::TimerStatistics>& stats,
    const StallWindow& stall) const {
  struct PerPolicy {
    int timers = 0;
    std::map<int, int> stall_calls;  // backlog calls -> timers
  };
  std::map<std::string, PerPolicy> policies;
  uint64_t calls = 0, calls_after = 0, fires = 0;
  int64_t missed = 0, stall_missed = 0;
  uint64_t stats_missed = 0, overruns = 0, refusals = 0;
  int64_t worst_latency = -1, worst_lateness = -1;
  std::string worst_latency_name, worst_lateness_name;
  int close_next = 0, close_other = 0;
  std::string close_example;
  std::vector<int64_t> latenesses, before, settled;
  std::vector<double> skip_second;  // kSkip: 2nd stall call after the 1st, in periods
  int example = -1;  // the longest-period kSkip timer with 2 stall calls
  for (int i = 0; i < kTimers; ++i) {
    const TimerFindings& f = findings[i];
    const Slot& s = slots_[i];
    PerPolicy& p = policies[timer::OverrunPolicyName(s.policy)];
    ++p.timers;
    ++p.stall_calls[f.stall_calls];
    calls += f.calls;
    calls_after += f.calls_after_resume;
    missed += f.missed;
    stall_missed += f.stall_missed;
    const timer::TimerStatistics& st = stats[i];
    fires += st.fires;
    stats_missed += st.missed_periods;
    overruns += st.overruns;
    refusals += st.dispatch_refusals;
    if (f.resume_latency_ns > worst_latency) {
      worst_latency = f.resume_latency_ns;
      worst_latency_name = s.name;
    }
    if (f.max_lateness_ns > worst_lateness) {
      worst_lateness = f.max_lateness_ns;
      worst_lateness_name = s.name;
    }
    latenesses.push_back(f.max_lateness_ns);
    if (s.policy == OverrunPolicy::kSkip && f.stall_second_call_after_ns >= 0) {
      skip_second.push_back(static_cast<double>(f.stall_second_call_after_ns) /
                            static_cast<double>(s.period_ns));
      if (example < 0 || s.period_ns > slots_[example].period_ns) example = i;
    }
    before.push_back(f.max_lateness_before_ns);
    settled.push_back(f.max_lateness_settled_ns);
    close_next += f.close_to_next_on_phase;
    close_other += f.close_other;
    if (close_example.empty()) close_example = f.close_other_example;
  }
  // "median / p90 / max" of the per-timer maxima.
  auto spread = [](std::vector<int64_t> v) {
    std::sort(v.begin(), v.end());
    return absl::StrCat(Ms(v[v.size() / 2]), " / ", Ms(v[v.size() * 9 / 10]),
                        " / ", Ms(v.back()));
  };
  std::string out = absl::StrFormat(
      "timers: %d periodic, periods %d-%d ms (seed %u)\n"
      "stall: process confirmed stopped -> SIGCONT: %s\n",
      kTimers, kMinPeriodMs, kMaxPeriodMs, kSeed,
      Ms(stall.resumed_ns - stall.stopped_ns));
  for (const auto& [name, p] : policies) {
    std::string dist;
    for (const auto& [n, timers] : p.stall_calls) {
      absl::StrAppend(&dist, dist.empty() ? "" : ", ", timers, "x", n);
    }
    absl::StrAppend(&out, "  ", name, ": ", p.timers,
                    " timers; calls after SIGCONT for periods inside the stall "
                    "(timers x calls): ",
                    dist, "\n");
  }
  absl::StrAppendFormat(
      &out,
      "calls: %u (%u after SIGCONT); statistics: fires %u, overruns %u, "
      "dispatch refusals %u\n"
      "missed periods: %d reported by the calls (%d of them after SIGCONT), "
      "%u counted by the statistics\n"
      "first call after SIGCONT: within %s for every timer (worst: %s)\n"
      "lateness of calls expected after SIGCONT: max %s (%s)\n"
      "per-timer max lateness (median / p90 / max over timers): before the "
      "stop %s; expected after SIGCONT %s; expected >= 1 s after SIGCONT %s\n",
      calls, calls_after, fires, overruns, refusals, missed, stall_missed,
      stats_missed, Ms(worst_latency), worst_latency_name, Ms(worst_lateness),
      worst_lateness_name, spread(before), spread(latenesses), spread(settled));
  std::sort(skip_second.begin(), skip_second.end());
  if (!skip_second.empty()) {
    absl::StrAppendFormat(
        &out,
        "kSkip timers with 2 calls for stall periods (the call due at the stop, "
        "then the one late call): %d; the 2nd started after the 1st by "
        "min %.3f / median %.3f periods; %d of them < 0.5 period\n",
        skip_second.size(), skip_second.front(), skip_second[skip_second.size() / 2],
        std::lower_bound(skip_second.begin(), skip_second.end(), 0.5) - skip_second.begin());
    // Its calls from the last one before the stop, times from SIGCONT.
    const Slot& x = slots_[example];
    const size_t n = std::min(x.calls, x.capacity);
    size_t i = 0;
    while (i + 1 < n && x.record[i + 1].actual_ns < stall.stopped_ns) ++i;
    absl::StrAppend(&out, "  e.g. ", x.name, ":\n");
    for (size_t k = i; k < n && k < i + 4; ++k) {
      absl::StrAppend(&out, "    #", k, " ", DescribeCall(x.record[k], stall.resumed_ns), "\n");
    }
  }
  absl::StrAppend(&out,
                  "kSkip call pairs after SIGCONT closer than period/2 (allowed "
                  "when the first call started late): ",
                  close_next, " followed by the next on-phase call, ",
                  close_other, " by another call",
                  close_example.empty() ? "" : ", e.g.\n    ", close_example,
                  "\n");
  return out;
}

int RunChild(int fd) {
  ChildScenario scenario;
  std::string report;
  const bool ok = scenario.Run(fd, &report);
  report = absl::StrCat(ok ? "PASS" : "FAIL", "\n", report);
  SendAll(fd, report.data(), report.size());
  return ok ? 0 : 1;
}

// --- Parent: the fault ---------------------------------------------------------

int CountThreads() {
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return -1;
  int n = 0;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] != '.') ++n;
  }
  closedir(dir);
  return n;
}

// The child process: killed and reaped if the test leaves early.
class Child {
 public:
  Child(pid_t pid, int fd) : pid_(pid), fd_(fd) {}
  ~Child() {
    if (!reaped_) {
      kill(pid_, SIGKILL);
      int status;
      waitpid(pid_, &status, 0);
    }
    close(fd_);
  }

  // Reads from the child until `stop` (a newline, or EOF if '\0') or the
  // deadline. False on timeout (the text so far is in *out).
  bool Read(std::string* out, char stop, absl::Duration limit) {
    const Instant deadline = Now() + limit;
    char c;
    while (true) {
      const int64_t left_ms = absl::ToInt64Milliseconds(deadline - Now());
      if (left_ms <= 0) return false;
      pollfd p{fd_, POLLIN, 0};
      const int r = poll(&p, 1, static_cast<int>(std::min<int64_t>(left_ms, 1000)));
      if (r < 0 && errno != EINTR) return false;
      if (r <= 0) continue;
      const ssize_t n = recv(fd_, &c, 1, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return stop == '\0';  // EOF
      if (c == stop && stop != '\0') return true;
      out->push_back(c);
    }
  }

  bool Send(const void* data, size_t size) { return SendAll(fd_, data, size); }

  // Blocks until the child has stopped; false if it exited instead.
  bool AwaitStopped(std::string* why) {
    int status = 0;
    while (waitpid(pid_, &status, WUNTRACED) < 0) {
      if (errno != EINTR) {
        *why = absl::StrCat("waitpid: ", std::strerror(errno));
        return false;
      }
    }
    if (WIFSTOPPED(status)) return true;
    reaped_ = true;
    *why = Describe(status);
    return false;
  }

  // Reaps the child. After EOF on the socket its exit is imminent (the
  // socket closes only when it exits); otherwise (`kill_first`) it is
  // killed, as a broken run.
  std::string Reap(bool kill_first, int* exit_code) {
    if (kill_first) kill(pid_, SIGKILL);
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    reaped_ = true;
    *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return absl::StrCat(kill_first ? "killed after the time limit; " : "",
                        Describe(status));
  }

 private:
  static std::string Describe(int status) {
    if (WIFEXITED(status)) return absl::StrCat("exited with ", WEXITSTATUS(status));
    if (WIFSIGNALED(status)) {
      return absl::StrCat("killed by signal ", WTERMSIG(status), " (",
                          strsignal(WTERMSIG(status)), ")");
    }
    return absl::StrCat("wait status ", status);
  }

  const pid_t pid_;
  const int fd_;
  bool reaped_ = false;
};

TEST(SigstopTimersTest, PeriodicTimersResumePerPolicyAfterATwoSecondStop) {
  // fork() copies only the calling thread: it must be the only one.
  ASSERT_EQ(CountThreads(), 1) << "the test process must not have threads "
                                  "before fork()";
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0)
      << std::strerror(errno);
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0) << std::strerror(errno);
  if (pid == 0) {
    close(sv[0]);
    _exit(RunChild(sv[1]));  // never back into gtest
  }
  close(sv[1]);
  Child child(pid, sv[0]);
  const Instant start = Now();

  std::string line;
  ASSERT_TRUE(child.Read(&line, '\n', kParentStartLimit))
      << "the child did not report its timers running: " << line;
  if (line != "RUNNING") {
    // It failed before the fault; the rest of its report says why.
    const bool ended = child.Read(&line, '\0', kParentFinishLimit);
    int code;
    const std::string exit = child.Reap(!ended, &code);
    FAIL() << "child (" << exit << ") before the stop:\n" << line;
  }
  const Instant running = Now();

  // The fault: run 1 s, stop the whole process for 2 s, continue.
  SteadyClock::Get()->SleepUntil(running + kRunBeforeStop);
  ASSERT_EQ(kill(pid, SIGSTOP), 0) << std::strerror(errno);
  std::string why;
  ASSERT_TRUE(child.AwaitStopped(&why)) << "child " << why << " instead of stopping";
  const Instant stopped = Now();  // the child is stopped from here on
  SteadyClock::Get()->SleepUntil(stopped + kStall);
  const Instant resumed = Now();  // nothing in the child runs before this
  ASSERT_EQ(kill(pid, SIGCONT), 0) << std::strerror(errno);
  const StallMessage msg{Ns(stopped), Ns(resumed)};
  ASSERT_TRUE(child.Send(&msg, sizeof(msg))) << "the child went away";

  std::string report;
  const bool complete = child.Read(&report, '\0', kParentFinishLimit);
  int exit_code = -1;
  const std::string exit = child.Reap(!complete, &exit_code);
  const Instant done = Now();

  std::printf(
      "--- sigstop child report (child %s) ---\n%s--- timeline: timers running "
      "after %s, stopped %s later for %s, child done %s after SIGCONT ---\n",
      exit.c_str(), report.c_str(), Ms(Ns(running) - Ns(start)).c_str(),
      Ms(Ns(stopped) - Ns(running)).c_str(), Ms(Ns(resumed) - Ns(stopped)).c_str(),
      Ms(Ns(done) - Ns(resumed)).c_str());
  std::fflush(stdout);
  ASSERT_TRUE(complete) << "the child's report did not end within "
                        << absl::FormatDuration(kParentFinishLimit);
  EXPECT_EQ(report.rfind("PASS\n", 0), 0u) << "the child found violations (above)";
  EXPECT_EQ(exit_code, 0) << "child " << exit;
}

}  // namespace
}  // namespace faults
}  // namespace cyber
