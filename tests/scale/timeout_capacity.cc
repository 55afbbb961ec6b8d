// timeout_capacity: how many live oneshot timeouts one process holds with
// its tick thread under 5% of a core, and what they cost in memory.
//
// Why this tool exists. timer_scale_run measures one fixed, busy workload
// (10^6 timeouts mostly cancelled, 10^5 periodic timers). The figure users
// ask for is a capacity: the largest number of live timeouts (oneshot
// Timers, each of which has fired at least once, as every timeout of a
// long-running module has) that one process can hold while the tick thread
// stays under 5% of one core, and where memory ends it. This tool grows one
// population of timers step by step, in one process, and measures each step
// on the real clock through the production path: cyber::Init() (the process
// timer system, its tick thread "timer-tick" on CLOCK_MONOTONIC, every
// callback a coroutine of the default scheduler) and plain cyber::Timer
// objects used through the public API only.
//
// One step, to N timers (N doubles from --start, the timers of earlier steps
// are kept):
//   1. make:    construct the new timers, each a oneshot with a short delay
//               uniform in [--warmup_min_delay, --warmup_max_delay] =
//               [20 ms, 100 ms];
//   2. warm-up: Schedule() the new timers, paced (see below), and wait until
//               the count of warm-up calls is exactly N; then check that
//               every new timer reports exactly one call
//               (GetStatistics().fires == 1);
//   3. re-arm:  give the new timers (Configure()) their long delay, uniform
//               in [--min_delay, --max_delay] = [30 s, 10 min], and arm all N
//               (Schedule() for the new, Reset() for the old), so all N
//               timeouts are live;
//   4. hold:    for --hold (20 s) a request thread ("scale-req-0") does what
//               a robot module does at a modest rate, --rearm_rate (10^5/s):
//               pick a random timer, Stop() it (the request was answered)
//               and Schedule() it again (the next request's timeout);
//               measured over the hold: the tick thread's CPU (utime +
//               stime from /proc/self/task/<tid>/stat, the thread found by
//               its name, see thread_roles.h) as a percentage of one core,
//               VmRSS at the end, the calls that fired (about 0: no delay is
//               shorter than 30 s, unless re-arming N took that long), and
//               the slowest request (Stop() + Schedule()), which shows how
//               long an arm waited for the wheel while it cascaded.
// CPU time comes in clock ticks (10 ms), so over a 20 s hold a percentage is
// good to about 0.05 points. It is the thread's own CPU time, not wall time:
// other load on the machine changes it only through shared caches and
// memory bandwidth (the load average is printed with the table).
//
// Warm-up pacing. Every call is a coroutine of the scheduler, which holds at
// most 65,536 live routines (Scheduler::Options::max_routines) and refuses
// more (the timer retries with back-off, and logs it). Millions of timers
// armed at once would come due far faster than two cores run calls, so
// Schedule() is paced: at most --warmup_rate a second, and never while more
// than kWarmupBacklog timers armed at least --warmup_min_delay ago have not
// had their call. A timer is never due sooner than warmup_min_delay after
// its Schedule(), so armed-and-not-run stays below kWarmupBacklog +
// warmup_rate x warmup_min_delay (30,000 + 5,000 at the defaults), well
// under the scheduler's limit even if its threads stall. The delays are
// short for the same reason: a timer armed longer ago counts against the
// backlog until it has run, so long delays would throttle the arming.
//
// Memory per timer is (VmRSS at the end of the hold - VmRSS before the first
// timer was made) / N: everything the process holds for its timers,
// including the std::deque that stores the Timer objects (sizeof(Timer)
// bytes each) and the allocator's slack, since that is what a user pays.
//
// When it stops. Before each step it predicts the step's peak RSS from the
// bytes per timer measured so far (plus 10%) and skips the step if that
// exceeds --max_rss_gib or the machine's MemAvailable minus 2 GiB; while
// making timers it re-checks RSS and MemAvailable every 65,536 timers and
// abandons the step if either limit is crossed, so the machine never runs
// out of memory. It also skips a step predicted to end the run past
// --time_budget, and never goes beyond --max_timers.
//
// Measured versus extrapolated. The table has measured rows only. The
// closing "capacity:" line gives the largest measured N whose tick-thread
// CPU stayed under the target, and, separately and labelled as such, the
// memory bound: how many timers --machine_gib would hold at the last step's
// bytes per timer (the whole machine given to timers, the baseline RSS
// subtracted; the OS and other processes need part of it in practice).
//
// How to run it (about 4 minutes at the defaults on a 2-core machine,
// steps of 1, 2, 4, 8 and 16 million timers; peak RSS about 7 GiB at ~470 B
// per timer; the warm-up, about 160,000 calls a second on two cores, and
// the holds take most of it):
//
//   bazel run --config=opt //tests/scale:timeout_capacity
//   bazel run --config=opt //tests/scale:timeout_capacity --
//       --start=100000 --max_timers=400000 --hold=5s           # quick look
//   ... -- --markdown_out=/tmp/capacity.md
//
// Exit status: 0 when every step ran its checks cleanly (a step above the
// CPU target is a measurement, not an error); 1 if a correctness check
// failed (a warm-up call missing or duplicated, a Schedule() that failed);
// 2 for bad flags or a failed setup. Ctrl-C ends the run after the current
// phase and still prints the table. Never reads the wall clock: every
// instant comes from SteadyClock.

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "cyber/common/log.h"
#include "cyber/init/init.h"
#include "cyber/time/steady_clock.h"
#include "gflags/gflags.h"
#include "tests/scale/duration_flag.h"
#include "tests/scale/number_format.h"
#include "tests/scale/proc_stats.h"
#include "tests/scale/thread_roles.h"
#include "timer/timer.h"

DEFINE_int64(start, 1'000'000, "live timeouts in the first step");
DEFINE_int64(max_timers, 16'000'000,
             "never grow beyond this many timers (the steps double from "
             "--start up to it)");
DEFINE_double(max_rss_gib, 16,
              "RSS budget: skip a step whose predicted peak RSS exceeds it");
DEFINE_string(hold, "20s", "measured window of each step");
DEFINE_double(rearm_rate, 100'000,
              "requests per second during the hold (Stop() + Schedule() of "
              "a random timer)");
DEFINE_string(min_delay, "30s", "shortest long (live) timeout delay");
DEFINE_string(max_delay, "10m", "longest long (live) timeout delay");
DEFINE_string(warmup_min_delay, "20ms", "shortest warm-up delay");
DEFINE_string(warmup_max_delay, "100ms", "longest warm-up delay");
DEFINE_double(warmup_rate, 250'000,
              "most warm-up Schedule() calls per second (also held back "
              "while the scheduler lags, see the header)");
DEFINE_string(time_budget, "7m",
              "skip a step predicted to end the run later than this");
DEFINE_double(cpu_target, 5, "tick-thread CPU target, percent of one core");
DEFINE_double(machine_gib, 24, "memory of the machine the bound is for");
DEFINE_string(markdown_out, "", "if set, also write the table to this file");
DEFINE_uint64(seed, 1, "seed of delays and request picks");

namespace {

constexpr char kTool[] = "timeout_capacity";

using cyber::Clock;
using cyber::Instant;
using cyber::SteadyClock;
using cyber::Timer;
using cyber::TimerOptions;
using cyber::scale::Commas;
using cyber::scale::ParseDurationFlag;
using cyber::scale::RoleCpu;
using cyber::scale::ThreadCpu;
using cyber::scale::ThreadRole;
using cyber::scale::ThreadRoles;

constexpr double kBytesPerGiB = 1024.0 * 1024.0 * 1024.0;
constexpr int64_t kMemoryReserve = int64_t{2} << 30;  // kept free on the box
constexpr double kPredictionMargin = 1.10;
constexpr double kFirstStepBytesGuess = 1024;  // before anything is measured
constexpr int64_t kMemoryCheckEvery = 65'536;  // timers made between checks
constexpr absl::Duration kThreadNameWait = absl::Seconds(2);
constexpr absl::Duration kPoll = absl::Milliseconds(20);
constexpr absl::Duration kRequestStep = absl::Milliseconds(1);
// How long the warm-up may take beyond its last deadline.
constexpr absl::Duration kWarmupSlack = absl::Seconds(30);
// Warm-up pacing (see the header): most armed-and-not-run timers, half the
// scheduler's default max_routines; arming in batches of kArmBatch, looking
// again every kArmStep.
constexpr int64_t kWarmupBacklog = 30'000;
constexpr int64_t kArmBatch = 1'000;
constexpr absl::Duration kArmStep = absl::Milliseconds(1);

// --- small helpers -----------------------------------------------------------

double ToGiB(int64_t bytes) { return static_cast<double>(bytes) / kBytesPerGiB; }

double PercentOfCore(absl::Duration cpu, absl::Duration window) {
  return window > absl::ZeroDuration() ? 100.0 * absl::FDivDuration(cpu, window)
                                       : 0.0;
}

std::string Seconds(absl::Duration d) {
  return absl::StrFormat("%.1f", absl::ToDoubleSeconds(d));
}

void Say(const std::string& line) {
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

// A field of /proc/meminfo in bytes ("MemAvailable:   123456 kB"); -1 if
// unreadable.
int64_t MemInfoBytes(const std::string& field) {
  std::ifstream in("/proc/meminfo");
  std::string line;
  const std::string key = field + ":";
  while (std::getline(in, line)) {
    if (line.compare(0, key.size(), key) != 0) continue;
    int64_t kb = 0;
    std::istringstream rest(line.substr(key.size()));
    if (rest >> kb) return kb * 1024;
  }
  return -1;
}

int64_t Rss() { return cyber::scale::ReadMemoryStatus().rss_bytes; }

struct Config {
  absl::Duration hold;
  absl::Duration min_delay;
  absl::Duration max_delay;
  absl::Duration warmup_min_delay;
  absl::Duration warmup_max_delay;
  absl::Duration time_budget;
};

bool ParseFlags(Config* c) {
  bool ok =
      ParseDurationFlag(kTool, "hold", FLAGS_hold, &c->hold) &&
      ParseDurationFlag(kTool, "min_delay", FLAGS_min_delay, &c->min_delay) &&
      ParseDurationFlag(kTool, "max_delay", FLAGS_max_delay, &c->max_delay) &&
      ParseDurationFlag(kTool, "warmup_min_delay", FLAGS_warmup_min_delay,
                        &c->warmup_min_delay) &&
      ParseDurationFlag(kTool, "warmup_max_delay", FLAGS_warmup_max_delay,
                        &c->warmup_max_delay) &&
      ParseDurationFlag(kTool, "time_budget", FLAGS_time_budget, &c->time_budget);
  if (!ok) return false;
  auto fail = [&ok](const std::string& message) {
    AERROR << "timeout_capacity: " << message;
    ok = false;
  };
  const absl::Duration tick = cyber::timer::kTimerResolution;
  if (FLAGS_start < 1 || FLAGS_start > FLAGS_max_timers) {
    fail(absl::StrCat("--start ", FLAGS_start, " must be in [1, --max_timers ",
                      FLAGS_max_timers, "]"));
  }
  if (FLAGS_max_timers > int64_t{1} << 31) {
    fail(absl::StrCat("--max_timers ", FLAGS_max_timers, " must be <= 2^31"));
  }
  if (!(FLAGS_max_rss_gib > 0)) fail("--max_rss_gib must be positive");
  if (!(FLAGS_machine_gib > 0)) fail("--machine_gib must be positive");
  if (!(FLAGS_rearm_rate >= 0)) fail("--rearm_rate must not be negative");
  if (!(FLAGS_warmup_rate > 0)) fail("--warmup_rate must be positive");
  if (!(FLAGS_cpu_target > 0)) fail("--cpu_target must be positive");
  if (c->hold <= absl::ZeroDuration()) fail("--hold must be positive");
  if (c->time_budget <= absl::ZeroDuration()) {
    fail("--time_budget must be positive");
  }
  if (c->min_delay < tick || c->max_delay < c->min_delay ||
      c->max_delay > absl::Hours(24)) {
    fail(absl::StrCat("long delays [", absl::FormatDuration(c->min_delay), ", ",
                      absl::FormatDuration(c->max_delay),
                      "] must satisfy 2ms <= min <= max <= 24h"));
  }
  if (c->warmup_min_delay < tick ||
      c->warmup_max_delay < c->warmup_min_delay ||
      c->warmup_max_delay >= c->min_delay) {
    fail(absl::StrCat("warm-up delays [",
                      absl::FormatDuration(c->warmup_min_delay), ", ",
                      absl::FormatDuration(c->warmup_max_delay),
                      "] must satisfy 2ms <= min <= max < --min_delay"));
  }
  return ok;
}

// --- the timers --------------------------------------------------------------

// The growing population of oneshot timeouts. Timers [0, warmed()) have fired
// once and carry their long delay; [warmed(), size()) are new.
// Threads: Grow/ArmNew/AwaitWarmup/ArmLong/Clear from the owner thread;
// at() (for Stop/Schedule of one timer) from any thread while none of those
// runs; the fire counts from any thread.
class TimeoutPopulation {
 public:
  TimeoutPopulation(Clock* clock, const Config& config, uint64_t seed)
      : clock_(clock), config_(config), rng_(seed) {}
  ~TimeoutPopulation() { Clear(); }
  TimeoutPopulation(const TimeoutPopulation&) = delete;
  TimeoutPopulation& operator=(const TimeoutPopulation&) = delete;

  int64_t size() const { return static_cast<int64_t>(timers_.size()); }
  int64_t warmed() const { return warmed_; }
  Timer& at(int64_t i) { return timers_[static_cast<size_t>(i)]; }
  uint64_t warmup_fires() const { return warmup_fires_.load(); }
  uint64_t long_fires() const { return long_fires_.load(); }

  // Makes timers up to `to`, each a oneshot with a warm-up delay in
  // [warmup_min_delay, warmup_max_delay]. Every kMemoryCheckEvery timers,
  // `memory_ok()` is asked; false stops the growth.
  // Errors: ResourceExhausted when memory_ok() said no (the timers made so
  // far stay, unarmed).
  template <typename MemoryOk>
  absl::Status Grow(int64_t to, MemoryOk memory_ok) {
    std::uniform_int_distribution<int64_t> delay_us(
        absl::ToInt64Microseconds(config_.warmup_min_delay),
        absl::ToInt64Microseconds(config_.warmup_max_delay));
    for (int64_t i = size(); i < to; ++i) {
      if (i % kMemoryCheckEvery == 0 && !memory_ok()) {
        return absl::ResourceExhaustedError(
            absl::StrCat("memory limit reached after ", Commas(static_cast<uint64_t>(i)), " timers"));
      }
      TimerOptions o;
      o.name = Name(i);
      o.period = absl::Microseconds(delay_us(rng_));
      o.oneshot = true;
      std::atomic<uint64_t>* const fires = &warmup_fires_;
      o.callback = [fires] { fires->fetch_add(1, std::memory_order_relaxed); };
      timers_.emplace_back(std::move(o));
    }
    return absl::OkStatus();
  }

  // Schedule()s the new timers, paced as the header describes: at most
  // `rate` a second, and not while more than kWarmupBacklog of those armed
  // warmup_min_delay ago or earlier have not run. Returns how long it held
  // back for the backlog.
  // Errors: the first failed Schedule(); Cancelled (Ctrl-C).
  absl::StatusOr<absl::Duration> ArmNew(double rate) {
    // (when, how many new timers had been armed by then), oldest first.
    struct Mark {
      Instant at;
      int64_t armed;
    };
    std::deque<Mark> marks;
    const uint64_t fired_before = warmup_fires();
    const Instant begin = clock_->Now();
    absl::Duration held = absl::ZeroDuration();
    int64_t armed = 0;
    for (int64_t i = warmed_; i < size();) {
      if (!cyber::OK()) return absl::CancelledError("interrupted");
      const Instant now = clock_->Now();
      // Timers armed by `cutoff` are the only ones that may be due. A mark
      // taken at or after the cutoff bounds how many those are.
      const Instant cutoff = now - config_.warmup_min_delay;
      while (!marks.empty() && marks.front().at < cutoff) marks.pop_front();
      const int64_t may_be_due = marks.empty() ? armed : marks.front().armed;
      const int64_t not_run =
          may_be_due - static_cast<int64_t>(warmup_fires() - fired_before);
      const int64_t allowed =
          static_cast<int64_t>(rate * absl::ToDoubleSeconds(now - begin)) -
          armed;
      if (not_run > kWarmupBacklog || allowed <= 0) {
        clock_->SleepUntil(now + kArmStep);
        if (not_run > kWarmupBacklog) held += clock_->Now() - now;
        continue;
      }
      const int64_t batch =
          std::min({allowed, kArmBatch, size() - i});
      for (int64_t end = i + batch; i < end; ++i) {
        absl::Status s = at(i).Schedule();
        if (!s.ok()) return s;
      }
      armed += batch;
      marks.push_back({clock_->Now(), armed});
    }
    return held;
  }

  // Waits until every timer has had its warm-up call (the count equals
  // size()), until `deadline`; then checks that each new timer ran exactly
  // once. Errors: DeadlineExceeded (calls missing), Internal (a call too
  // many, or a timer whose own count is not 1), Cancelled (Ctrl-C).
  absl::Status AwaitWarmup(Instant deadline) {
    const uint64_t target = static_cast<uint64_t>(size());
    while (warmup_fires() < target) {
      if (!cyber::OK()) return absl::CancelledError("interrupted");
      if (clock_->Now() >= deadline) {
        return absl::DeadlineExceededError(absl::StrCat(
            "warm-up: ", Commas(static_cast<uint64_t>(warmup_fires())), " of ",
            Commas(static_cast<uint64_t>(target)),
            " calls by the deadline; dispatch refusals among the new timers: ",
            Commas(static_cast<uint64_t>(RefusalsOfNew()))));
      }
      clock_->SleepFor(kPoll);
    }
    // The per-timer pass takes a moment, so the second look at the total
    // also catches a late duplicate.
    int64_t wrong = 0;
    int64_t first_wrong = -1;
    last_refusals_ = 0;
    last_fired_at_ = clock_->Now();
    for (int64_t i = warmed_; i < size(); ++i) {
      const cyber::TimerStatistics st = at(i).GetStatistics();
      last_refusals_ += st.dispatch_refusals;
      if (st.fires != 1) {
        if (wrong++ == 0) first_wrong = i;
      }
    }
    if (warmup_fires() != target || wrong > 0) {
      return absl::InternalError(absl::StrCat(
          "warm-up: ", Commas(static_cast<uint64_t>(warmup_fires())),
          " calls for ", Commas(static_cast<uint64_t>(target)), " timers; ",
          Commas(static_cast<uint64_t>(wrong)), " new timers did not run exactly once (first: \"",
          first_wrong >= 0 ? at(first_wrong).name() : "", "\")"));
    }
    return absl::OkStatus();
  }

  // Arms all timers with their long delay: the new ones get it (Configure)
  // and Schedule(), the others Reset() (their countdown restarts now).
  // Errors: the first failed Configure/Schedule/Reset.
  absl::Status ArmLong() {
    std::uniform_int_distribution<int64_t> delay_ms(
        absl::ToInt64Milliseconds(config_.min_delay),
        absl::ToInt64Milliseconds(config_.max_delay));
    for (int64_t i = 0; i < warmed_; ++i) {
      absl::Status s = at(i).Reset();
      if (!s.ok()) return s;
    }
    for (int64_t i = warmed_; i < size(); ++i) {
      TimerOptions o;
      o.name = Name(i);
      o.period = absl::Milliseconds(delay_ms(rng_));
      o.oneshot = true;
      std::atomic<uint64_t>* const fires = &long_fires_;
      o.callback = [fires] { fires->fetch_add(1, std::memory_order_relaxed); };
      absl::Status s = at(i).Configure(std::move(o));
      if (s.ok()) s = at(i).Schedule();
      if (!s.ok()) return s;
    }
    warmed_ = size();
    return absl::OkStatus();
  }

  // Of the last AwaitWarmup(): dispatch refusals (the scheduler's queue was
  // full; the timer retried) among the new timers, and when the last call
  // came.
  uint64_t last_refusals() const { return last_refusals_; }
  Instant last_fired_at() const { return last_fired_at_; }

  // Destroys every timer (each stops first).
  void Clear() {
    timers_.clear();
    warmed_ = 0;
  }

 private:
  // Short enough for the string's inline buffer: no allocation per name.
  static std::string Name(int64_t i) { return absl::StrCat("to", i); }

  uint64_t RefusalsOfNew() {
    uint64_t refusals = 0;
    for (int64_t i = warmed_; i < size(); ++i) {
      refusals += at(i).GetStatistics().dispatch_refusals;
    }
    return refusals;
  }

  Clock* const clock_;
  const Config config_;
  std::mt19937_64 rng_;
  std::deque<Timer> timers_;  // a deque never moves a Timer
  int64_t warmed_ = 0;
  uint64_t last_refusals_ = 0;
  Instant last_fired_at_;
  alignas(64) std::atomic<uint64_t> warmup_fires_{0};
  alignas(64) std::atomic<uint64_t> long_fires_{0};
};

// The request thread of the hold: at `rate` per second, a random timer is
// stopped (its request answered) and scheduled again (the next request).
class RequestLoad {
 public:
  struct Result {
    uint64_t requests = 0;
    uint64_t errors = 0;
    absl::Duration elapsed;
    // The longest Stop() + Schedule() pair: an arm waits for the wheel's
    // lock while the tick thread cascades.
    absl::Duration slowest;
  };

  RequestLoad(TimeoutPopulation* timers, Clock* clock, double rate,
              uint64_t seed)
      : timers_(timers), clock_(clock), rate_(rate), seed_(seed) {}
  ~RequestLoad() { Stop(); }
  RequestLoad(const RequestLoad&) = delete;
  RequestLoad& operator=(const RequestLoad&) = delete;

  void Start() {
    thread_ = std::thread([this] { Loop(); });
  }
  Result Stop() {
    stopping_.store(true);
    if (thread_.joinable()) thread_.join();
    return result_;
  }

 private:
  void Loop() {
    const std::string name =
        absl::StrCat(cyber::scale::kRequestThreadPrefix, 0).substr(0, 15);
    pthread_setname_np(pthread_self(), name.c_str());
    std::mt19937_64 rng(seed_);
    std::uniform_int_distribution<int64_t> pick(0, timers_->size() - 1);
    const Instant begin = clock_->Now();
    uint64_t done = 0;
    uint64_t errors = 0;
    absl::Duration slowest = absl::ZeroDuration();
    while (!stopping_.load(std::memory_order_relaxed)) {
      const Instant now = clock_->Now();
      const uint64_t due =
          static_cast<uint64_t>(rate_ * absl::ToDoubleSeconds(now - begin));
      Instant request_begin = clock_->Now();
      while (done < due && !stopping_.load(std::memory_order_relaxed)) {
        Timer& t = timers_->at(pick(rng));
        t.Stop();
        if (!t.Schedule().ok()) ++errors;
        ++done;
        const Instant request_end = clock_->Now();
        slowest = std::max(slowest, request_end - request_begin);
        request_begin = request_end;
      }
      clock_->SleepUntil(now + kRequestStep);
    }
    result_.requests = done;
    result_.errors = errors;
    result_.elapsed = clock_->Now() - begin;
    result_.slowest = slowest;
  }

  TimeoutPopulation* const timers_;
  Clock* const clock_;
  const double rate_;
  const uint64_t seed_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
  Result result_;  // written by the thread, read after join
};

// --- one step ----------------------------------------------------------------

struct Step {
  int64_t timers = 0;
  int64_t added = 0;
  absl::Duration make;     // constructing the new timers
  absl::Duration warmup;   // first Schedule() to the last check
  absl::Duration rearm;    // Configure/Schedule/Reset of all
  absl::Duration hold;
  int64_t rss = 0;         // VmRSS at the end of the hold
  int64_t peak_rss = 0;    // VmHWM then
  double bytes_per_timer = 0;           // (rss - baseline) / timers
  double marginal_bytes_per_timer = 0;  // this step's growth / added
  double tick_cpu = 0;     // percent of one core over the hold
  double request_cpu = 0;
  double scheduler_cpu = 0;
  double process_cpu = 0;
  uint64_t fired_in_hold = 0;
  uint64_t fired_since_rearm = 0;  // from the start of the re-arm to the end
  RequestLoad::Result requests;
  double load_average = 0;
};

std::map<ThreadRole, RoleCpu> CpuBetween(const ThreadRoles& roles,
                                         const std::vector<ThreadCpu>& before,
                                         const std::vector<ThreadCpu>& after) {
  return roles.CpuByRole(before, after);
}

double RolePercent(const std::map<ThreadRole, RoleCpu>& cpu, ThreadRole role,
                   absl::Duration window) {
  const auto it = cpu.find(role);
  return it == cpu.end() ? 0.0 : PercentOfCore(it->second.cpu, window);
}

// --- the report --------------------------------------------------------------

struct Report {
  std::vector<Step> steps;
  int64_t baseline_rss = 0;
  int64_t mem_total = 0;
  std::string stop_reason;
  std::string error;  // a failed check or setup, if any
  absl::Duration teardown;
  absl::Duration total;
};

std::string Table(const Report& r) {
  const std::string target = absl::StrFormat("%g%%", FLAGS_cpu_target);
  std::string out = absl::StrCat(
      "| live timeouts | RSS GiB | bytes/timer | tick-thread CPU % | < ",
      target,
      " | marginal bytes/timer | fired in hold | requests/s (achieved) | "
      "slowest request ms | request thread CPU % | scheduler CPU % | "
      "make / warm-up / re-arm s |\n"
      "|---:|---:|---:|---:|:---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const Step& s : r.steps) {
    const double achieved =
        s.requests.elapsed > absl::ZeroDuration()
            ? static_cast<double>(s.requests.requests) /
                  absl::ToDoubleSeconds(s.requests.elapsed)
            : 0.0;
    absl::StrAppend(
        &out,
        absl::StrFormat(
            "| %s | %.2f | %.0f | %.2f | %s | %.0f | %s | %s | %.1f | %.1f | "
            "%.1f | %s / %s / %s |\n",
            Commas(static_cast<uint64_t>(s.timers)), ToGiB(s.rss), s.bytes_per_timer, s.tick_cpu,
            s.tick_cpu < FLAGS_cpu_target ? "yes" : "no",
            s.marginal_bytes_per_timer,
            Commas(static_cast<uint64_t>(s.fired_in_hold)),
            Commas(static_cast<uint64_t>(achieved)),
            absl::ToDoubleMilliseconds(s.requests.slowest), s.request_cpu,
            s.scheduler_cpu, Seconds(s.make), Seconds(s.warmup),
            Seconds(s.rearm)));
  }
  return out;
}

std::string Summary(const Report& r, const Config& config) {
  std::string out = absl::StrCat(
      "## Live oneshot timeouts: tick-thread CPU and memory\n\n",
      absl::StrFormat(
          "Each row is measured: N oneshot cyber::Timer objects, each fired "
          "once, then all armed with delays uniform in [%s, %s]; for %s a "
          "request thread stops and re-schedules random timers at %s/s. "
          "CPU is per cent of one core over the hold; bytes/timer is (VmRSS "
          "- %.2f GiB before the first timer) / N, the Timer objects' own "
          "%d bytes included. %d cores, MemTotal %.1f GiB, load average "
          "(1 min) at the last hold %.2f.\n\n",
          absl::FormatDuration(config.min_delay),
          absl::FormatDuration(config.max_delay),
          absl::FormatDuration(config.hold),
          Commas(static_cast<uint64_t>(FLAGS_rearm_rate)),
          ToGiB(r.baseline_rss), static_cast<int>(sizeof(Timer)),
          static_cast<int>(std::thread::hardware_concurrency()),
          ToGiB(r.mem_total),
          r.steps.empty() ? 0.0 : r.steps.back().load_average),
      Table(r), "\n");
  if (!r.error.empty()) absl::StrAppend(&out, "error: ", r.error, "\n");
  absl::StrAppend(&out, "sequence ended: ", r.stop_reason, "\n");
  absl::StrAppend(
      &out, absl::StrFormat("runtime: %s total (teardown of the timers %s)\n",
                            absl::FormatDuration(absl::Trunc(
                                r.total, absl::Milliseconds(100))),
                            absl::FormatDuration(absl::Trunc(
                                r.teardown, absl::Milliseconds(100)))));

  int64_t best = -1;
  for (const Step& s : r.steps) {
    if (s.tick_cpu < FLAGS_cpu_target) best = std::max(best, s.timers);
  }
  if (r.steps.empty()) {
    absl::StrAppend(&out, "capacity: no step completed\n");
    return out;
  }
  const Step& last = r.steps.back();
  const double budget =
      FLAGS_machine_gib * kBytesPerGiB - static_cast<double>(r.baseline_rss);
  const int64_t memory_bound =
      last.bytes_per_timer > 0
          ? static_cast<int64_t>(budget / last.bytes_per_timer)
          : 0;
  const std::string target = absl::StrFormat("%g%%", FLAGS_cpu_target);
  absl::StrAppend(
      &out,
      absl::StrFormat(
          "capacity: the largest measured N with tick-thread CPU < %s is %s; "
          "memory bound at %.0f bytes/timer for %g GiB is %s (extrapolated)\n",
          target,
          best >= 0 ? Commas(static_cast<uint64_t>(best)) : std::string("none (every step was above)"),
          last.bytes_per_timer, FLAGS_machine_gib,
          Commas(static_cast<uint64_t>(memory_bound))));
  // The first step above the target and the one before it bracket the
  // crossing.
  for (size_t i = 1; i < r.steps.size(); ++i) {
    const Step& lo = r.steps[i - 1];
    const Step& hi = r.steps[i];
    if (lo.tick_cpu < FLAGS_cpu_target && hi.tick_cpu >= FLAGS_cpu_target) {
      const double at =
          static_cast<double>(lo.timers) +
          (FLAGS_cpu_target - lo.tick_cpu) / (hi.tick_cpu - lo.tick_cpu) *
              static_cast<double>(hi.timers - lo.timers);
      absl::StrAppend(
          &out,
          absl::StrFormat(
              "(interpolated, not measured: a straight line between %s "
              "(%.2f%%) and %s (%.2f%%) crosses %s at about %s timers)\n",
              Commas(static_cast<uint64_t>(lo.timers)), lo.tick_cpu, Commas(static_cast<uint64_t>(hi.timers)), hi.tick_cpu,
              target, Commas(static_cast<uint64_t>(at))));
      break;
    }
  }
  if (best == last.timers && last.tick_cpu > 0) {
    const double linear =
        static_cast<double>(last.timers) * FLAGS_cpu_target / last.tick_cpu;
    absl::StrAppend(
        &out,
        absl::StrFormat(
            "(extrapolated, not measured: if tick-thread CPU kept growing in "
            "proportion to N, it would reach %s at about %s timers)\n",
            target, Commas(static_cast<uint64_t>(linear))));
  }
  return out;
}

bool WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.close();
  if (!out) {
    AERROR << "timeout_capacity: cannot write " << path;
    return false;
  }
  return true;
}

// --- planning ----------------------------------------------------------------

// What a step to `next` timers is predicted to need, from the steps so far.
struct Prediction {
  int64_t peak_rss = 0;
  absl::Duration duration;
};

Prediction Predict(const Report& r, const Config& config, int64_t current_rss,
                   int64_t current_peak, int64_t next) {
  Prediction p;
  const int64_t have = r.steps.empty() ? 0 : r.steps.back().timers;
  const int64_t added = next - have;
  double bytes = kFirstStepBytesGuess;
  absl::Duration per_new = absl::Microseconds(5);  // make + arm + check
  absl::Duration per_rearm = absl::Microseconds(2);
  absl::Duration per_teardown = absl::Microseconds(2);
  if (!r.steps.empty()) {
    const Step& s = r.steps.back();
    bytes = std::max(s.bytes_per_timer, s.marginal_bytes_per_timer);
    per_new = (s.make + s.warmup) / s.added;
    per_rearm = s.rearm / s.timers;
    per_teardown = per_new;  // not measured until the end; about as slow
  }
  const int64_t base = std::max(current_rss, current_peak);
  p.peak_rss = base + static_cast<int64_t>(static_cast<double>(added) * bytes *
                                           kPredictionMargin);
  p.duration = per_new * added + per_rearm * next + config.hold +
               per_teardown * next;
  if (r.steps.empty()) {  // the warm-up at full rate, at least
    p.duration += absl::Seconds(static_cast<double>(added) / FLAGS_warmup_rate);
  }
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  gflags::SetUsageMessage(
      "timeout capacity: grows a population of live oneshot timeouts (each "
      "fired once) in doubling steps and measures tick-thread CPU and memory "
      "per timer at each; see the header of timeout_capacity.cc");
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  FLAGS_logtostderr = true;
  Config config;
  if (!ParseFlags(&config)) return 2;

  SteadyClock* const clock = SteadyClock::Get();
  const Instant run_start = clock->Now();
  const std::set<int> before_init = ThreadRoles::CurrentTids();
  if (!cyber::Init(argv[0])) return 2;
  const absl::StatusOr<ThreadRoles> found =
      ThreadRoles::Find(before_init, clock, kThreadNameWait);
  if (!found.ok()) {
    AERROR << "timeout_capacity: " << found.status();
    cyber::Shutdown();
    return 2;
  }
  const ThreadRoles roles = *found;

  Report report;
  report.mem_total = MemInfoBytes("MemTotal");
  const int64_t rss_budget =
      static_cast<int64_t>(FLAGS_max_rss_gib * kBytesPerGiB);
  // Our RSS may grow to what we hold plus what the machine has available,
  // less the reserve.
  auto rss_limit = [rss_budget]() {
    const int64_t available = MemInfoBytes("MemAvailable");
    if (available < 0) return rss_budget;
    return std::min(rss_budget, Rss() + available - kMemoryReserve);
  };

  auto timers = std::make_unique<TimeoutPopulation>(clock, config, FLAGS_seed);
  report.baseline_rss = Rss();
  Say(absl::StrFormat(
      "timeout_capacity: baseline RSS %.2f GiB, sizeof(Timer) %d B, RSS "
      "budget %.1f GiB, MemAvailable %.1f GiB, time budget %s",
      ToGiB(report.baseline_rss), static_cast<int>(sizeof(Timer)),
      FLAGS_max_rss_gib, ToGiB(MemInfoBytes("MemAvailable")),
      absl::FormatDuration(config.time_budget)));

  bool failed = false;
  for (int64_t next = FLAGS_start;;) {
    if (!cyber::OK()) {
      report.stop_reason = "interrupted (Ctrl-C)";
      break;
    }
    // --- may the step run? -------------------------------------------------
    const cyber::scale::MemoryStatus mem = cyber::scale::ReadMemoryStatus();
    const Prediction p = Predict(report, config, mem.rss_bytes,
                                 report.steps.empty() ? 0 : mem.peak_bytes,
                                 next);
    const int64_t limit = rss_limit();
    if (p.peak_rss > limit) {
      report.stop_reason = absl::StrFormat(
          "the step to %s timers was not run: predicted peak RSS %.2f GiB > "
          "limit %.2f GiB (min of --max_rss_gib %g and RSS + MemAvailable - 2 "
          "GiB)",
          Commas(static_cast<uint64_t>(next)), ToGiB(p.peak_rss), ToGiB(limit), FLAGS_max_rss_gib);
      break;
    }
    const absl::Duration elapsed = clock->Now() - run_start;
    if (elapsed + p.duration > config.time_budget) {
      report.stop_reason = absl::StrFormat(
          "the step to %s timers was not run: predicted to end at %s, past "
          "--time_budget %s",
          Commas(static_cast<uint64_t>(next)),
          absl::FormatDuration(
              absl::Trunc(elapsed + p.duration, absl::Seconds(1))),
          absl::FormatDuration(config.time_budget));
      break;
    }

    Step s;
    s.timers = next;
    s.added = next - timers->size();
    const int64_t rss_before = Rss();

    // --- 1. make ------------------------------------------------------------
    Say(absl::StrFormat("step %s: making %s timers ...", Commas(static_cast<uint64_t>(next)),
                        Commas(static_cast<uint64_t>(s.added))));
    const Instant make_begin = clock->Now();
    absl::Status status =
        timers->Grow(next, [&] { return Rss() < rss_limit(); });
    s.make = clock->Now() - make_begin;
    if (absl::IsResourceExhausted(status)) {
      report.stop_reason = absl::StrCat("the step to ", Commas(static_cast<uint64_t>(next)),
                                        " timers was abandoned: ",
                                        status.message());
      break;
    }

    // --- 2. warm-up: each new timer fires once ------------------------------
    Say(absl::StrFormat(
        "step %s: made in %ss; warm-up: every new timer fires once, delays "
        "in [%s, %s] ...",
        Commas(static_cast<uint64_t>(next)), Seconds(s.make),
        absl::FormatDuration(config.warmup_min_delay),
        absl::FormatDuration(config.warmup_max_delay)));
    const Instant warm_begin = clock->Now();
    absl::Duration held = absl::ZeroDuration();
    if (status.ok()) {
      const absl::StatusOr<absl::Duration> arm = timers->ArmNew(FLAGS_warmup_rate);
      if (arm.ok()) {
        held = *arm;
      } else {
        status = arm.status();
      }
    }
    const absl::Duration arm_new = clock->Now() - warm_begin;
    if (status.ok()) {
      status = timers->AwaitWarmup(clock->Now() + config.warmup_max_delay +
                                   kWarmupSlack);
    }
    s.warmup = clock->Now() - warm_begin;

    // --- 3. re-arm all with long delays -------------------------------------
    const uint64_t long_fires_before_rearm = timers->long_fires();
    const Instant rearm_begin = clock->Now();
    if (status.ok()) {
      Say(absl::StrFormat("step %s: warm-up done in %ss (paced Schedule() "
                          "%ss, held back %ss for the scheduler, last call "
                          "%ss after the first Schedule(), %s dispatch "
                          "refusals); arming all %s with delays in [%s, %s] "
                          "...",
                          Commas(static_cast<uint64_t>(next)), Seconds(s.warmup), Seconds(arm_new),
                          Seconds(held),
                          Seconds(timers->last_fired_at() - warm_begin),
                          Commas(static_cast<uint64_t>(timers->last_refusals())),
                          Commas(static_cast<uint64_t>(next)),
                          absl::FormatDuration(config.min_delay),
                          absl::FormatDuration(config.max_delay)));
      status = timers->ArmLong();
    }
    s.rearm = clock->Now() - rearm_begin;
    if (!status.ok()) {
      if (absl::IsCancelled(status)) {
        report.stop_reason = "interrupted (Ctrl-C)";
      } else {
        report.error = absl::StrCat("step ", Commas(static_cast<uint64_t>(next)), ": ",
                                    status.ToString());
        report.stop_reason = "a check failed (see error)";
        failed = true;
      }
      break;
    }

    // --- 4. hold ------------------------------------------------------------
    Say(absl::StrFormat("step %s: armed in %ss; holding %s with %s "
                        "requests/s ...",
                        Commas(static_cast<uint64_t>(next)), Seconds(s.rearm),
                        absl::FormatDuration(config.hold),
                        Commas(static_cast<uint64_t>(FLAGS_rearm_rate))));
    RequestLoad requests(timers.get(), clock, FLAGS_rearm_rate,
                         FLAGS_seed * 7919 + static_cast<uint64_t>(next));
    const uint64_t fires_begin = timers->long_fires();
    const std::vector<ThreadCpu> threads_begin = cyber::scale::SampleThreads();
    const absl::Duration process_begin = cyber::scale::ProcessCpuTime();
    const Instant hold_begin = clock->Now();
    requests.Start();
    while (clock->Now() < hold_begin + config.hold && cyber::OK()) {
      clock->SleepUntil(std::min(hold_begin + config.hold,
                                 clock->Now() + absl::Milliseconds(100)));
    }
    // Sampled before the request thread ends: a thread gone by the second
    // sample is not counted.
    const Instant hold_end = clock->Now();
    const std::vector<ThreadCpu> threads_end = cyber::scale::SampleThreads();
    const absl::Duration process_end = cyber::scale::ProcessCpuTime();
    s.requests = requests.Stop();
    const cyber::scale::MemoryStatus after = cyber::scale::ReadMemoryStatus();
    s.hold = hold_end - hold_begin;
    s.fired_in_hold = timers->long_fires() - fires_begin;
    s.fired_since_rearm = timers->long_fires() - long_fires_before_rearm;
    const auto cpu = CpuBetween(roles, threads_begin, threads_end);
    s.tick_cpu = RolePercent(cpu, ThreadRole::kTick, s.hold);
    s.request_cpu = RolePercent(cpu, ThreadRole::kRequests, s.hold);
    s.scheduler_cpu = RolePercent(cpu, ThreadRole::kScheduler, s.hold);
    s.process_cpu = PercentOfCore(process_end - process_begin, s.hold);
    s.rss = after.rss_bytes;
    s.peak_rss = after.peak_bytes;
    s.bytes_per_timer = static_cast<double>(s.rss - report.baseline_rss) /
                        static_cast<double>(s.timers);
    s.marginal_bytes_per_timer = static_cast<double>(s.rss - rss_before) /
                                 static_cast<double>(s.added);
    s.load_average = cyber::scale::LoadAverage1();
    report.steps.push_back(s);
    Say(absl::StrFormat(
        "step %s: tick thread %.2f%% of a core, RSS %.2f GiB (%.0f B/timer, "
        "this step %.0f B/timer), %s fired in the hold, %s requests (%s "
        "failed, slowest %.1f ms), request thread %.1f%%, process %.1f%%, "
        "load %.2f",
        Commas(static_cast<uint64_t>(next)), s.tick_cpu, ToGiB(s.rss), s.bytes_per_timer,
        s.marginal_bytes_per_timer,
        Commas(static_cast<uint64_t>(s.fired_in_hold)),
        Commas(static_cast<uint64_t>(s.requests.requests)),
        Commas(static_cast<uint64_t>(s.requests.errors)),
        absl::ToDoubleMilliseconds(s.requests.slowest), s.request_cpu,
        s.process_cpu, s.load_average));
    if (s.requests.errors > 0) {
      report.error = absl::StrCat("step ", Commas(static_cast<uint64_t>(next)), ": ",
                                  s.requests.errors,
                                  " Schedule() calls failed in the hold");
      report.stop_reason = "a check failed (see error)";
      failed = true;
      break;
    }
    if (!cyber::OK()) {
      report.stop_reason = "interrupted (Ctrl-C)";
      break;
    }
    if (next >= FLAGS_max_timers) {
      report.stop_reason =
          absl::StrCat("reached --max_timers ", Commas(static_cast<uint64_t>(FLAGS_max_timers)));
      break;
    }
    next = std::min(next * 2, FLAGS_max_timers);
  }

  Say(absl::StrCat("teardown: destroying ", Commas(timers->size()),
                   " timers ..."));
  const Instant teardown_begin = clock->Now();
  timers.reset();  // timers go before the timer system they run on
  report.teardown = clock->Now() - teardown_begin;
  cyber::Shutdown();
  report.total = clock->Now() - run_start;

  const std::string summary = Summary(report, config);
  std::printf("\n%s", summary.c_str());
  std::fflush(stdout);
  bool written = true;
  if (!FLAGS_markdown_out.empty()) {
    written = WriteFile(FLAGS_markdown_out, summary);
  }
  if (failed) return 1;
  return written ? 0 : 2;
}
