// timer_soak: the bounded soak of issue 7. Not a test: a tool that runs the
// production timer path on the real clock for a given time under heavy
// arm/stop churn and checks timer/timer.h's guarantees on every single call.
//
// Why a soak on top of the unit tests: the unit tests pin the semantics on
// simulated time, one interleaving at a time. Races between Stop(),
// Configure(), ~Timer() and a callback that is being dispatched, queued in the
// scheduler or running on another processor, and slow leaks, only show up
// when hundreds of thousands of operations interleave for minutes.
//
// What it runs: cyber::Init() (the process timer system with the coroutine
// scheduler as its dispatcher, as a robot binary has), then --timers
// cyber::Timer objects (a --periodic_fraction of them periodic; periods and
// delays uniform in [--min_period, --max_period]; a --compat_fraction built
// and driven through the Cyber RT surface: period in ms, Start()/Stop()/
// SetTimerOption(); the rest through TimerOptions/Schedule()/Configure() with
// a TimerEvent callback and a mix of overrun policies). They are split
// among --threads churn threads; each arms all of its timers, then picks one
// at random about every --touch_interval per timer and, depending on its
// state: arms it; stops it; stops and re-arms it; reconfigures it while
// running (Configure stops it); destroys it while running and creates a new
// one; calls Schedule() again on a running periodic timer; stops an idle
// one; or asks its callback to act on its own timer at the next call (Stop,
// Stop + Schedule, or — for a oneshot — Schedule alone). The main thread
// scans every timer for due calls that did not come (--scan_interval) and
// samples VmRSS every second.
//
// What it checks (per timer, see soak_timer.h for how it stays race-free):
// no call before arm instant + delay (or + n periods: the instant is read
// before Schedule()); no call after Stop(), Configure() or ~Timer() returned;
// a oneshot called exactly once per Schedule(), none lost (a due call must
// come within --lost_after of *alive time* after the latest on-time instant,
// see soak_context.h); TimerEvent consistent (expected >= that lower bound
// and increasing, actual >= expected); TimerStatistics::early_fires == 0;
// after --rss_warmup, memory grows by at most --max_rss_growth_mb (see
// memory_usage.h); the timer system keeps running (a 10 ms heartbeat timer),
// and no Timer call or step of the shutdown hangs for --hang_timeout. At the
// end it stops the churn, stops every timer, watches a --grace period for
// stray calls, destroys the timers and calls cyber::Shutdown().
//
// Output: progress lines every --progress_interval, the first --max_printed
// violations in full ("VIOLATION <kind> #n: <timer, configuration, epoch
// (the generation of its schedule), who armed it, instants>"), a summary
// table, optionally --json_out, and a last line
//   soak: PASS (...)   or   soak: FAIL (<kind>=<count> ...)
// Exit status 0 on PASS, 1 on any violation, 2 on bad flags; a hang aborts
// (SIGABRT) after printing the FAIL line.
//
// Bounds, and why they suit a loaded 2-core CI machine:
//  * Early calls, duplicates and calls after Stop()/Configure()/~Timer()
//    returned need no bound at all: one is a bug, whatever the load.
//  * --lost_after 2s of alive time: a correct timer is at most a tick plus
//    dispatch late; on this shared 2-core VM with parallel builds the p99 is
//    tens of ms and the worst call a few hundred ms. Alive time (a 10 ms
//    heartbeat timer; each gap between its calls counts at most 100 ms)
//    leaves out stretches where the whole process or VM was not running, so
//    a descheduled machine cannot fake a lost call, while a call that is
//    really lost never comes and is caught, only later.
//  * --max_rss_growth_mb 32 on live memory (VmRSS minus malloc's free pool,
//    memory_usage.h explains why not raw VmRSS): 100,000 timers hold about
//    0.9 GB (a TimerCore carries two fixed histograms, about 9 KB per
//    timer), so 32 MiB is about 4% of it, room for the coroutine stack pool
//    and thread caches to settle; a leak of one TimerCore per recreate or
//    reconfigure (thousands per second) exceeds it within a second, and one
//    small allocation (32 bytes) per arm or per call within CI's 30 s run
//    (about 1.5 million of them after the warm-up).
//  * --hang_timeout 30s: Stop() waits at most for one callback of
//    microseconds; 30 s without returning is a deadlock, not load.
//
// --inject_fault=early|lost|leak plants a bug of that kind in the soak's own
// bookkeeping (timers seem armed later than they were / one arm in a
// thousand is recorded but not made / 64 bytes leak per call), to show that
// the checks catch it: such a run must FAIL.
//
// How to run (optimized; the sanitizers with fewer timers):
//   tools/run_soak.sh                  # 30 s, as CI does
//   tools/run_soak.sh 10m
//   bazel run --config=opt //tests/soak:timer_soak -- --duration=60s
//   bazel run --config=tsan //tests/soak:timer_soak -- --duration=20s --timers=20000
//
// Never reads the wall clock: every instant is on the timers' SteadyClock.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "cyber/common/mutex.h"
#include "cyber/init/init.h"
#include "cyber/time/clock.h"
#include "cyber/time/instant.h"
#include "gflags/gflags.h"
#include "scheduler/default_scheduler.h"
#include "tests/soak/memory_usage.h"
#include "tests/soak/soak_context.h"
#include "tests/soak/soak_timer.h"
#include "tests/soak/violation_log.h"
#include "cyber/runtime/process_runtime.h"
#include "timer/latency_histogram.h"
#include "timer/timer_options.h"

DEFINE_string(duration, "30s", "how long the churn runs (the end adds a few seconds)");
DEFINE_int32(timers, 100000, "number of timers");
DEFINE_int32(threads, 4, "churn threads; the timers are split among them");
DEFINE_uint64(seed, 1, "seed of every random choice (timings still vary)");
DEFINE_string(rss_warmup, "10s",
              "memory growth is measured from this long after the churn "
              "started (at most a third of --duration)");
DEFINE_double(max_rss_growth_mb, 32,
              "largest allowed memory growth after the warm-up, MiB");
DEFINE_string(rss_basis, "auto",
              "what --max_rss_growth_mb judges: live (VmRSS minus malloc's free "
              "pool, see memory_usage.h), raw (VmRSS), none, or auto: live, "
              "none under AddressSanitizer/ThreadSanitizer (their quarantine "
              "and shadow memory grow by design; LeakSanitizer checks leaks)");
DEFINE_string(json_out, "", "also write the results to this JSON file");
DEFINE_string(lost_after, "2s",
              "a due call not seen this long after the latest instant it may "
              "come counts as lost (one that comes later, as late)");
DEFINE_string(touch_interval, "5s",
              "each timer is picked by its churn thread about once per this "
              "interval (sets the operation rate: timers / interval)");
DEFINE_double(periodic_fraction, 0.2, "share of periodic timers");
DEFINE_double(compat_fraction, 0.25,
              "share of timers driven through the Cyber RT surface");
DEFINE_string(min_period, "2ms", "shortest period / oneshot delay");
DEFINE_string(max_period, "2s", "longest period / oneshot delay");
DEFINE_bool(callback_rearm, true,
            "callbacks may re-arm their own oneshot with Schedule()/Start() "
            "alone (no Stop() first), as timer.h allows");
DEFINE_string(grace, "1s",
              "after the final Stop() of every timer, how long to watch for "
              "stray calls");
DEFINE_string(hang_timeout, "30s",
              "a Timer call, or the whole end (stops, destruction, "
              "Shutdown), taking longer than this is a hang: abort");
DEFINE_string(scan_interval, "250ms", "how often every timer is checked for lost calls");
DEFINE_string(progress_interval, "5s", "progress line interval (0: none)");
DEFINE_int32(max_printed, 20, "violations printed in full (all are counted)");
DEFINE_string(inject_fault, "",
              "plant a bug in the soak's own bookkeeping to show the checks "
              "catch it (the run must FAIL): early, lost or leak");

namespace cyber {
namespace soak {
namespace {

using timer::LatencyHistogram;
using timer::OverrunPolicy;

// --- Configuration ----------------------------------------------------------

// Built with a sanitizer that replaces the allocator (its memory figures then
// say nothing about leaks in the code under test).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitizerAllocator = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitizerAllocator = true;
#else
constexpr bool kSanitizerAllocator = false;
#endif
#else
constexpr bool kSanitizerAllocator = false;
#endif

// What the memory growth check judges (see memory_usage.h).
enum class RssBasis { kLive, kRaw, kNone };

struct SoakConfig {
  absl::Duration duration;
  int timers = 0;
  int threads = 0;
  uint64_t seed = 0;
  absl::Duration rss_warmup;
  double max_rss_growth_mb = 0;
  RssBasis rss_basis = RssBasis::kLive;
  std::string json_out;
  absl::Duration lost_after;
  absl::Duration touch_interval;
  double periodic_fraction = 0;
  double compat_fraction = 0;
  absl::Duration min_period;
  absl::Duration max_period;
  bool callback_rearm = true;
  absl::Duration grace;
  absl::Duration hang_timeout;
  absl::Duration scan_interval;
  absl::Duration progress_interval;
  int max_printed = 0;
  SoakContext::Fault fault = SoakContext::Fault::kNone;
};

// "30s", "10m", "250ms"; a bare number is seconds.
absl::Status ParseDurationFlag(const char* name, const std::string& text,
                               absl::Duration* out) {
  double seconds;
  if (absl::SimpleAtod(text, &seconds)) {
    *out = absl::Seconds(seconds);
  } else if (!absl::ParseDuration(text, out)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, "=", text, ": not a duration (e.g. 30s, 10m, 250ms)"));
  }
  if (*out < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, "=", text, ": must not be negative"));
  }
  return absl::OkStatus();
}

absl::StatusOr<SoakConfig> ConfigFromFlags() {
  SoakConfig c;
  const struct {
    const char* name;
    const std::string& text;
    absl::Duration* out;
  } durations[] = {
      {"duration", FLAGS_duration, &c.duration},
      {"rss_warmup", FLAGS_rss_warmup, &c.rss_warmup},
      {"lost_after", FLAGS_lost_after, &c.lost_after},
      {"touch_interval", FLAGS_touch_interval, &c.touch_interval},
      {"min_period", FLAGS_min_period, &c.min_period},
      {"max_period", FLAGS_max_period, &c.max_period},
      {"grace", FLAGS_grace, &c.grace},
      {"hang_timeout", FLAGS_hang_timeout, &c.hang_timeout},
      {"scan_interval", FLAGS_scan_interval, &c.scan_interval},
      {"progress_interval", FLAGS_progress_interval, &c.progress_interval},
  };
  for (const auto& d : durations) {
    absl::Status s = ParseDurationFlag(d.name, d.text, d.out);
    if (!s.ok()) return s;
  }
  c.timers = FLAGS_timers;
  c.threads = FLAGS_threads;
  c.seed = FLAGS_seed;
  c.max_rss_growth_mb = FLAGS_max_rss_growth_mb;
  c.json_out = FLAGS_json_out;
  c.periodic_fraction = FLAGS_periodic_fraction;
  c.compat_fraction = FLAGS_compat_fraction;
  c.callback_rearm = FLAGS_callback_rearm;
  c.max_printed = FLAGS_max_printed;

  auto bad = [](const std::string& what) { return absl::InvalidArgumentError(what); };
  if (c.duration <= absl::ZeroDuration()) return bad("--duration must be positive");
  if (c.threads < 1) return bad(absl::StrCat("--threads=", c.threads, ": at least 1"));
  if (c.timers < c.threads) {
    return bad(absl::StrCat("--timers=", c.timers, ": at least one per thread (--threads=",
                            c.threads, ")"));
  }
  if (c.min_period < timer::kTimerResolution) {
    return bad(absl::StrCat("--min_period=", FLAGS_min_period, ": below the ",
                            absl::FormatDuration(timer::kTimerResolution),
                            " timer resolution"));
  }
  if (c.max_period < c.min_period) {
    return bad(absl::StrCat("--max_period=", FLAGS_max_period,
                            " is below --min_period=", FLAGS_min_period));
  }
  if (c.periodic_fraction < 0 || c.periodic_fraction > 1 || c.compat_fraction < 0 ||
      c.compat_fraction > 1) {
    return bad("--periodic_fraction and --compat_fraction must be in [0, 1]");
  }
  if (c.lost_after <= absl::ZeroDuration() || c.touch_interval <= absl::ZeroDuration() ||
      c.hang_timeout <= absl::ZeroDuration() || c.scan_interval <= absl::ZeroDuration()) {
    return bad("--lost_after, --touch_interval, --hang_timeout and --scan_interval "
               "must be positive");
  }
  if (c.max_rss_growth_mb < 0) return bad("--max_rss_growth_mb must not be negative");
  if (FLAGS_inject_fault == "early") {
    c.fault = SoakContext::Fault::kEarly;
  } else if (FLAGS_inject_fault == "lost") {
    c.fault = SoakContext::Fault::kLost;
  } else if (FLAGS_inject_fault == "leak") {
    c.fault = SoakContext::Fault::kLeak;
  } else if (!FLAGS_inject_fault.empty()) {
    return bad(absl::StrCat("--inject_fault=", FLAGS_inject_fault,
                            ": early, lost or leak"));
  }
  if (FLAGS_rss_basis == "live") {
    c.rss_basis = RssBasis::kLive;
  } else if (FLAGS_rss_basis == "raw") {
    c.rss_basis = RssBasis::kRaw;
  } else if (FLAGS_rss_basis == "none") {
    c.rss_basis = RssBasis::kNone;
  } else if (FLAGS_rss_basis == "auto") {
    c.rss_basis = kSanitizerAllocator ? RssBasis::kNone : RssBasis::kLive;
  } else {
    return bad(absl::StrCat("--rss_basis=", FLAGS_rss_basis, ": live, raw, none or auto"));
  }
  // Memory must settle before it is judged, and be judged for most of the run.
  c.rss_warmup = absl::Trunc(std::min(c.rss_warmup, c.duration / 3), absl::Milliseconds(1));
  return c;
}

// A random timer configuration.
TimerSpec RandomSpec(std::mt19937_64& rng, const SoakConfig& c) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  TimerSpec s;
  s.oneshot = unit(rng) >= c.periodic_fraction;
  s.compat = unit(rng) < c.compat_fraction;
  const double lo = absl::ToDoubleMicroseconds(c.min_period);
  const double hi = absl::ToDoubleMicroseconds(c.max_period);
  const double us = lo + (hi - lo) * unit(rng);
  if (s.compat) {
    // Whole milliseconds, within the flags' range.
    const double lo_ms = std::ceil(lo / 1000.0);
    const double hi_ms = std::max(lo_ms, std::floor(hi / 1000.0));
    s.period = absl::Milliseconds(
        static_cast<int64_t>(std::clamp(std::round(us / 1000.0), lo_ms, hi_ms)));
  } else {
    s.period = absl::Microseconds(static_cast<int64_t>(us));
    if (!s.oneshot) {
      const double r = unit(rng);
      s.policy = r < 0.8   ? OverrunPolicy::kSkip
                 : r < 0.9 ? OverrunPolicy::kDelay
                           : OverrunPolicy::kBurst;
      s.max_burst = 1 + static_cast<int>(rng() % 4);
    }
  }
  return s;
}

int64_t NowNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The heartbeat timer's period: fine enough that alive time follows the
// clock closely while the timer system runs (100 calls a second cost
// nothing next to the soak's load).
constexpr absl::Duration kHeartbeatPeriod = absl::Milliseconds(10);

// --- Churn ------------------------------------------------------------------

// What a churn thread is doing, for the hang check (read by the main thread).
struct ChurnActivity {
  std::atomic<int64_t> since_ns{0};  // steady clock; 0: between operations
  std::atomic<size_t> timer{0};
  std::atomic<const char*> what{""};
};

// One churn thread: owns timers [first, first + count).
class Churn {
 public:
  Churn(int id, std::vector<std::unique_ptr<SoakTimer>>* timers, size_t first,
        size_t count, const SoakConfig* config, SoakContext* ctx,
        const std::atomic<bool>* stop)
      : id_(id),
        timers_(timers),
        first_(first),
        count_(count),
        config_(config),
        ctx_(ctx),
        stop_(stop),
        rng_(config->seed * 1000003 + static_cast<uint64_t>(id)) {}

  void Run() {
    // Ramp: every timer armed once.
    for (size_t i = first_; i < first_ + count_ && !Stopping(); ++i) {
      SoakTimer& t = *(*timers_)[i];
      if (!t.Claim()) continue;
      Begin(i, "Schedule (ramp)");
      t.Arm();
      End();
      t.Release();
    }
    // Churn, paced: timers / touch_interval operations per second, in small
    // batches; a backlog after a stall is capped at 100 ms of operations.
    const double rate =
        static_cast<double>(count_) / absl::ToDoubleSeconds(config_->touch_interval);
    const double max_backlog = std::max(1.0, rate * 0.1);
    const Instant start = ctx_->Now();
    double done = 0;
    while (!Stopping()) {
      const Instant now = ctx_->Now();
      const double due = absl::ToDoubleSeconds(now - start) * rate;
      done = std::max(done, due - max_backlog);
      while (done + 1 <= due && !Stopping()) {
        Once();
        done += 1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }

  const ChurnActivity& activity() const { return activity_; }
  int id() const { return id_; }

 private:
  bool Stopping() const { return stop_->load(std::memory_order_acquire); }

  void Begin(size_t index, const char* what) {
    activity_.timer.store(index, std::memory_order_relaxed);
    activity_.what.store(what, std::memory_order_relaxed);
    activity_.since_ns.store(NowNanos(), std::memory_order_release);
  }
  void End() { activity_.since_ns.store(0, std::memory_order_release); }

  double Unit() { return std::uniform_real_distribution<double>(0.0, 1.0)(rng_); }

  void Once() {
    const size_t index =
        first_ + std::uniform_int_distribution<size_t>(0, count_ - 1)(rng_);
    SoakTimer& t = *(*timers_)[index];
    if (!t.Claim()) {
      ctx_->counters().busy_skips.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    const double r = Unit();
    const bool coin = Unit() < 0.5;
    if (t.phase() == Phase::kArmed) {
      if (r < 0.30) {
        Begin(index, "Stop");
        t.Stop();
      } else if (r < 0.45) {
        Begin(index, "Stop + Schedule");
        t.Stop();
        t.Arm();
      } else if (r < 0.55) {
        Begin(index, "Configure/SetTimerOption of a running timer");
        t.Reconfigure(RandomSpec(rng_, *config_));
        if (coin) t.Arm();
      } else if (r < 0.65) {
        Begin(index, "~Timer of a running timer + new Timer");
        t.Recreate(RandomSpec(rng_, *config_));
        if (coin) t.Arm();
      } else if (r < 0.85) {
        Begin(index, "request a self action");
        t.RequestSelfAction(PickSelfAction(t.spec().oneshot));
      } else {
        Begin(index, "Schedule of a running timer");
        t.ScheduleWhileRunning();
      }
    } else {
      if (r < 0.80) {
        Begin(index, "Schedule");
        t.Arm();
      } else if (r < 0.85) {
        Begin(index, "Stop of an idle timer");
        t.Stop();
      } else if (r < 0.925) {
        Begin(index, "Configure/SetTimerOption + Schedule");
        t.Reconfigure(RandomSpec(rng_, *config_));
        t.Arm();
      } else {
        Begin(index, "~Timer + new Timer + Schedule");
        t.Recreate(RandomSpec(rng_, *config_));
        t.Arm();
      }
    }
    End();
    t.Release();
  }

  SelfAction PickSelfAction(bool oneshot) {
    const double r = Unit();
    if (!oneshot) return r < 0.5 ? SelfAction::kStop : SelfAction::kRestart;
    if (r < 1.0 / 3) return SelfAction::kStop;
    if (r < 2.0 / 3 || !config_->callback_rearm) return SelfAction::kRestart;
    return SelfAction::kRearm;
  }

  const int id_;
  std::vector<std::unique_ptr<SoakTimer>>* const timers_;
  const size_t first_;
  const size_t count_;
  const SoakConfig* const config_;
  SoakContext* const ctx_;
  const std::atomic<bool>* const stop_;
  std::mt19937_64 rng_;
  ChurnActivity activity_;
};

// --- Hang watchdog for the end ----------------------------------------------

// Armed for the end of the run (stopping churn, the final stops, the grace
// period, destruction, cyber::Shutdown()): if that does not finish within the
// timeout it prints the FAIL line naming the stage and aborts.
class EndWatchdog {
 public:
  explicit EndWatchdog(absl::Duration timeout)
      : deadline_(std::chrono::steady_clock::now() +
                  absl::ToChronoNanoseconds(timeout)),
        timeout_(timeout),
        thread_([this] { Watch(); }) {}
  ~EndWatchdog() { Disarm(); }
  EndWatchdog(const EndWatchdog&) = delete;
  EndWatchdog& operator=(const EndWatchdog&) = delete;

  void Stage(const char* stage) { stage_.store(stage, std::memory_order_release); }

  void Disarm() {
    {
      MutexLock lock(&mu_);
      done_ = true;
    }
    cv_.SignalAll();
    if (thread_.joinable()) thread_.join();
  }

 private:
  void Watch() {
    MutexLock lock(&mu_);
    while (!done_) {
      cv_.WaitUntil(&mu_, deadline_);
      if (!done_ && std::chrono::steady_clock::now() >= deadline_) {
        std::fprintf(stdout,
                     "VIOLATION hang: the end of the soak did not finish within "
                     "%s; stuck in: %s\nsoak: FAIL (hang in %s)\n",
                     absl::FormatDuration(timeout_).c_str(),
                     stage_.load(std::memory_order_acquire),
                     stage_.load(std::memory_order_acquire));
        std::fflush(stdout);
        std::abort();
      }
    }
  }

  const std::chrono::steady_clock::time_point deadline_;
  const absl::Duration timeout_;
  std::atomic<const char*> stage_{"starting"};
  Mutex mu_;
  CondVar cv_;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

// --- Memory -------------------------------------------------------------------

struct MemoryTrack {
  MemoryTrack(absl::Duration warmup, RssBasis basis) : growth(warmup), basis(basis) {}
  bool judging() const { return basis != RssBasis::kNone; }
  const MemoryGrowth::Basis& judged() const {
    return basis == RssBasis::kRaw ? growth.raw() : growth.live();
  }
  const char* judged_name() const {
    return basis == RssBasis::kRaw ? "VmRSS" : "live memory";
  }

  MemoryUsage before_timers;
  MemoryUsage after_timers;
  MemoryGrowth growth;  // sampled once a second from the churn's start
  const RssBasis basis;
  bool growth_reported = false;
};

// --- Summary ------------------------------------------------------------------

std::string Rate(uint64_t n, absl::Duration over) {
  const double s = absl::ToDoubleSeconds(over);
  return s > 0 ? absl::StrFormat("%.1fk/s", static_cast<double>(n) / s / 1000.0) : "-";
}

std::string Ms(absl::Duration d) {
  return absl::StrFormat("%.3f ms", absl::ToDoubleMilliseconds(d));
}

struct EndTimes {
  absl::Duration join;
  absl::Duration final_stop;
  absl::Duration destroy;
  absl::Duration shutdown;
  uint64_t grace_calls = 0;
};

struct Composition {
  int oneshot = 0;
  int periodic = 0;
  int compat = 0;
};

void WriteJson(const std::string& path, const SoakConfig& c, absl::Duration ran,
               const Composition& comp, SoakContext& ctx, const LatencyHistogram& late,
               const MemoryTrack& mem, int64_t hwm_kib, absl::Duration alive,
               const scheduler::Scheduler::Stats& sched, const EndTimes& end,
               bool pass) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    std::fprintf(stderr, "cannot write --json_out=%s\n", path.c_str());
    return;
  }
  SoakCounters& n = ctx.counters();
  auto u = [](const std::atomic<uint64_t>& a) {
    return static_cast<unsigned long long>(a.load(std::memory_order_relaxed));
  };
  std::fprintf(f, "{\n  \"result\": \"%s\",\n", pass ? "PASS" : "FAIL");
  std::fprintf(f,
               "  \"config\": {\"duration_s\": %.3f, \"timers\": %d, \"threads\": %d, "
               "\"seed\": %llu, \"lost_after_s\": %.3f, \"touch_interval_s\": %.3f, "
               "\"periodic_fraction\": %.3f, \"compat_fraction\": %.3f, "
               "\"min_period_s\": %.6f, \"max_period_s\": %.6f, "
               "\"rss_warmup_s\": %.3f, \"max_rss_growth_mb\": %.1f, "
               "\"callback_rearm\": %s},\n",
               absl::ToDoubleSeconds(c.duration), c.timers, c.threads,
               static_cast<unsigned long long>(c.seed), absl::ToDoubleSeconds(c.lost_after),
               absl::ToDoubleSeconds(c.touch_interval), c.periodic_fraction,
               c.compat_fraction, absl::ToDoubleSeconds(c.min_period),
               absl::ToDoubleSeconds(c.max_period), absl::ToDoubleSeconds(c.rss_warmup),
               c.max_rss_growth_mb, c.callback_rearm ? "true" : "false");
  std::fprintf(f,
               "  \"ran_s\": %.3f,\n  \"timers_at_start\": {\"oneshot\": %d, "
               "\"periodic\": %d, \"compat\": %d},\n",
               absl::ToDoubleSeconds(ran), comp.oneshot, comp.periodic, comp.compat);
  std::fprintf(f,
               "  \"counts\": {\"calls\": %llu, \"arms\": %llu, \"stops\": %llu, "
               "\"reconfigures\": %llu, \"recreates\": %llu, \"self_actions\": %llu, "
               "\"redundant_schedules\": %llu, \"busy_skips\": %llu, "
               "\"close_skip_calls\": %llu, \"stats_fires\": %llu, "
               "\"stats_overruns\": %llu, \"stats_missed_periods\": %llu, "
               "\"stats_dispatch_refusals\": %llu, \"grace_calls\": %llu},\n",
               u(n.calls), u(n.arms), u(n.stops), u(n.reconfigures), u(n.recreates),
               u(n.self_actions), u(n.redundant_schedules), u(n.busy_skips),
               u(n.close_skip_calls), u(n.stats_fires), u(n.stats_overruns),
               u(n.stats_missed_periods), u(n.stats_dispatch_refusals),
               static_cast<unsigned long long>(end.grace_calls));
  std::fprintf(f,
               "  \"lateness_us\": {\"samples\": %llu, \"p50\": %.1f, \"p99\": %.1f, "
               "\"max\": %.1f},\n",
               static_cast<unsigned long long>(late.count()),
               absl::ToDoubleMicroseconds(late.Percentile(0.5)),
               absl::ToDoubleMicroseconds(late.Percentile(0.99)),
               absl::ToDoubleMicroseconds(late.max()));
  std::fprintf(f,
               "  \"heartbeat\": {\"period_ms\": %.1f, \"calls\": %llu, "
               "\"max_gap_ms\": %.3f, \"alive_s\": %.3f},\n",
               absl::ToDoubleMilliseconds(kHeartbeatPeriod),
               static_cast<unsigned long long>(ctx.heartbeats()),
               absl::ToDoubleMilliseconds(ctx.max_heartbeat_gap_seen()),
               absl::ToDoubleSeconds(alive));
  const MemoryGrowth& g = mem.growth;
  std::fprintf(f,
               "  \"memory_mib\": {\"judged\": \"%s\", \"rss_before_timers\": %.1f, "
               "\"rss_after_timers\": %.1f, \"rss_at_warmup\": %.1f, "
               "\"rss_max_after_warmup\": %.1f, \"rss_growth\": %.1f, "
               "\"live_at_warmup\": %.1f, \"live_max_after_warmup\": %.1f, "
               "\"live_growth\": %.1f, \"hwm\": %.1f,\n    \"samples\": "
               "{\"columns\": [\"s\", \"rss\", \"heap_in_use\", \"heap_held\", "
               "\"live\"], \"rows\": [",
               !mem.judging()                  ? "none"
               : mem.basis == RssBasis::kRaw ? "rss"
                                               : "live",
               KibToMib(mem.before_timers.rss_kib),
               KibToMib(mem.after_timers.rss_kib), KibToMib(g.raw().at_warmup_kib),
               KibToMib(g.raw().max_after_kib), g.raw().GrowthMib(),
               KibToMib(g.live().at_warmup_kib), KibToMib(g.live().max_after_kib),
               g.live().GrowthMib(), KibToMib(hwm_kib));
  for (size_t i = 0; i < g.samples().size(); ++i) {
    const MemoryGrowth::Sample& x = g.samples()[i];
    std::fprintf(f, "%s[%.1f, %.1f, %.1f, %.1f, %.1f]", i == 0 ? "" : ", ", x.seconds,
                 KibToMib(x.usage.rss_kib), KibToMib(x.usage.heap_in_use_kib),
                 KibToMib(x.usage.heap_held_kib), KibToMib(x.usage.live_kib()));
  }
  std::fprintf(f, "]}},\n");
  std::fprintf(f,
               "  \"scheduler\": {\"dispatched\": %llu, \"refused\": %llu, "
               "\"finished\": %llu},\n",
               static_cast<unsigned long long>(sched.dispatched),
               static_cast<unsigned long long>(sched.refused),
               static_cast<unsigned long long>(sched.finished));
  std::fprintf(f,
               "  \"end_ms\": {\"join\": %.3f, \"final_stop\": %.3f, \"destroy\": %.3f, "
               "\"shutdown\": %.3f},\n",
               absl::ToDoubleMilliseconds(end.join), absl::ToDoubleMilliseconds(end.final_stop),
               absl::ToDoubleMilliseconds(end.destroy),
               absl::ToDoubleMilliseconds(end.shutdown));
  std::fprintf(f, "  \"violations\": {");
  for (int k = 0; k < kViolationKinds; ++k) {
    const Violation v = static_cast<Violation>(k);
    std::fprintf(f, "%s\"%s\": %llu", k == 0 ? "" : ", ", ViolationName(v),
                 static_cast<unsigned long long>(ctx.log().count(v)));
  }
  std::fprintf(f, "}\n}\n");
  std::fclose(f);
}

// --- The run ----------------------------------------------------------------

int RunSoak(const SoakConfig& config, const char* argv0) {
  ViolationLog log(config.max_printed, stdout);
  MemoryTrack mem(config.rss_warmup, config.rss_basis);
  mem.before_timers = ReadMemoryUsage();

  if (!cyber::Init(argv0)) {
    std::printf("soak: FAIL (cyber::Init failed)\n");
    return 1;
  }
  timer::TimerSystem* driver = ProcessRuntime()->timers();
  Clock* clock = driver->clock();
  SoakContext::Bounds bounds;
  bounds.lost_after = config.lost_after;
  bounds.tick = driver->tick();
  SoakContext ctx(clock, &log, bounds, clock->Now(), config.fault);
  if (config.fault != SoakContext::Fault::kNone) {
    std::printf("soak: --inject_fault=%s: this run plants a bug and must FAIL\n",
                FLAGS_inject_fault.c_str());
  }

  // The heartbeat that measures alive time (soak_context.h).
  timer::TimerOptions heartbeat_options;
  heartbeat_options.name = "soak_heartbeat";
  heartbeat_options.period = kHeartbeatPeriod;
  heartbeat_options.callback = [&ctx] { ctx.Heartbeat(ctx.Now()); };
  timer::Timer heartbeat(heartbeat_options);
  if (const absl::Status s = heartbeat.Schedule(); !s.ok()) {
    std::printf("soak: FAIL (the heartbeat timer did not start: %s)\n", s.ToString().c_str());
    return 1;
  }

  // Create every timer (none armed yet).
  std::vector<std::unique_ptr<SoakTimer>> timers;
  timers.reserve(static_cast<size_t>(config.timers));
  Composition comp;
  {
    std::mt19937_64 rng(config.seed);
    for (int i = 0; i < config.timers; ++i) {
      timers.push_back(std::make_unique<SoakTimer>(&ctx, static_cast<size_t>(i)));
      const TimerSpec spec = RandomSpec(rng, config);
      (spec.oneshot ? comp.oneshot : comp.periodic) += 1;
      comp.compat += spec.compat ? 1 : 0;
      SoakTimer& t = *timers.back();
      t.Claim();
      t.Recreate(spec);
      t.Release();
    }
  }
  mem.after_timers = ReadMemoryUsage();
  std::printf(
      "soak: %d timers (%d oneshot, %d periodic; %d Cyber-compatible), %d churn "
      "threads, %s, seed %llu; lost after %s; each timer touched about every %s; "
      "VmRSS %.1f MiB (%.0f bytes per timer)\n",
      config.timers, comp.oneshot, comp.periodic, comp.compat, config.threads,
      absl::FormatDuration(config.duration).c_str(),
      static_cast<unsigned long long>(config.seed),
      absl::FormatDuration(config.lost_after).c_str(),
      absl::FormatDuration(config.touch_interval).c_str(),
      KibToMib(mem.after_timers.rss_kib),
      static_cast<double>(mem.after_timers.rss_kib - mem.before_timers.rss_kib) * 1024.0 /
          config.timers);
  std::fflush(stdout);

  // Churn threads.
  std::atomic<bool> stop{false};
  std::vector<std::unique_ptr<Churn>> churns;
  std::vector<std::thread> threads;
  const size_t n = timers.size();
  for (int i = 0; i < config.threads; ++i) {
    const size_t first = n * static_cast<size_t>(i) / static_cast<size_t>(config.threads);
    const size_t last = n * static_cast<size_t>(i + 1) / static_cast<size_t>(config.threads);
    churns.push_back(std::make_unique<Churn>(i, &timers, first, last - first, &config,
                                             &ctx, &stop));
  }
  const Instant start = clock->Now();
  for (auto& churn : churns) {
    Churn* c = churn.get();
    threads.emplace_back([c] { c->Run(); });
  }

  // Watch: scan for lost calls, sample memory, check for hangs, report.
  const Instant end = start + config.duration;
  Instant next_sample = start + absl::Seconds(1);
  Instant next_progress = config.progress_interval > absl::ZeroDuration()
                              ? start + config.progress_interval
                              : Instant::InfiniteFuture();
  bool interrupted = false;
  while (true) {
    const Instant wake = std::min(clock->Now() + config.scan_interval, end);
    clock->SleepUntil(wake);
    const Instant now = clock->Now();
    for (auto& t : timers) t->Scan(now);

    if (now >= next_sample) {
      next_sample += absl::Seconds(1);
      const MemoryUsage usage = ReadMemoryUsage();
      mem.growth.Add(now - start, usage);
      const MemoryGrowth::Basis& b = mem.judged();
      if (mem.judging() && !mem.growth_reported && b.GrowthMib() > config.max_rss_growth_mb) {
        mem.growth_reported = true;
        log.Report(Violation::kRssGrowth,
                   absl::StrFormat("%s %.1f MiB at %s, %.1f MiB above %.1f MiB at the end "
                                   "of the %s warm-up (limit %.1f MiB); VmRSS %.1f MiB, "
                                   "malloc in use %.1f MiB, held %.1f MiB (-1: unknown)",
                                   mem.judged_name(), KibToMib(b.max_after_kib), ctx.At(now),
                                   b.GrowthMib(), KibToMib(b.at_warmup_kib),
                                   absl::FormatDuration(config.rss_warmup),
                                   config.max_rss_growth_mb, KibToMib(usage.rss_kib),
                                   KibToMib(usage.heap_in_use_kib),
                                   KibToMib(usage.heap_held_kib)));
      }
    }

    // The timer system itself must keep running: with no heartbeat call for
    // the hang timeout nothing can be judged lost any more (alive time
    // stops), so that is a hang of its own.
    const Instant heartbeat_at = ctx.last_heartbeat();
    const Instant heartbeat_ref = heartbeat_at.IsInfiniteFuture() ? start : heartbeat_at;
    if (now - heartbeat_ref > config.hang_timeout) {
      log.Report(Violation::kHang,
                 absl::StrCat("the ", absl::FormatDuration(kHeartbeatPeriod),
                              " heartbeat timer has not been called since ",
                              ctx.At(heartbeat_ref), " (now ", ctx.At(now), ")"));
      std::printf("soak: FAIL (hang: %s)\n", log.Summary().c_str());
      std::fflush(stdout);
      std::abort();
    }
    const int64_t now_ns = NowNanos();
    for (const auto& churn : churns) {
      const ChurnActivity& a = churn->activity();
      const int64_t since = a.since_ns.load(std::memory_order_acquire);
      if (since != 0 && absl::Nanoseconds(now_ns - since) > config.hang_timeout) {
        log.Report(Violation::kHang,
                   absl::StrCat("churn thread ", churn->id(), " has been in \"",
                                a.what.load(std::memory_order_relaxed), "\" on soak#",
                                a.timer.load(std::memory_order_relaxed), " for ",
                                absl::FormatDuration(absl::Nanoseconds(now_ns - since))));
        std::printf("soak: FAIL (hang: %s)\n", log.Summary().c_str());
        std::fflush(stdout);
        std::abort();
      }
    }

    if (now >= next_progress) {
      next_progress += config.progress_interval;
      const LatencyHistogram late = ctx.Lateness();
      SoakCounters& k = ctx.counters();
      const absl::Duration since = now - start;
      const MemoryUsage last_usage = mem.growth.samples().empty()
                                         ? mem.after_timers
                                         : mem.growth.samples().back().usage;
      std::printf(
          "[%6.1fs] calls %llu (%s) arms %llu (%s) stops %llu | VmRSS %.1f MiB, "
          "live %.1f MiB | lateness p99 %s max %s | violations %s\n",
          absl::ToDoubleSeconds(since),
          static_cast<unsigned long long>(k.calls.load(std::memory_order_relaxed)),
          Rate(k.calls.load(std::memory_order_relaxed), since).c_str(),
          static_cast<unsigned long long>(k.arms.load(std::memory_order_relaxed)),
          Rate(k.arms.load(std::memory_order_relaxed), since).c_str(),
          static_cast<unsigned long long>(k.stops.load(std::memory_order_relaxed)),
          KibToMib(last_usage.rss_kib), KibToMib(last_usage.live_kib()),
          Ms(late.Percentile(0.99)).c_str(), Ms(late.max()).c_str(), log.Summary().c_str());
      std::fflush(stdout);
    }
    if (now >= end) break;
    if (!cyber::OK()) {  // SIGINT / SIGTERM: finish early, still judged
      interrupted = true;
      break;
    }
  }
  const absl::Duration ran = clock->Now() - start;
  const uint64_t calls_during_run = ctx.counters().calls.load(std::memory_order_relaxed);

  // The end, under a hang watchdog.
  EndTimes times;
  EndWatchdog watchdog(config.hang_timeout);
  watchdog.Stage("joining the churn threads");
  Instant t0 = clock->Now();
  stop.store(true, std::memory_order_release);
  for (auto& th : threads) th.join();
  times.join = clock->Now() - t0;

  watchdog.Stage("the final scan for lost calls");
  {
    const Instant now = clock->Now();
    for (auto& t : timers) t->Scan(now);
  }

  watchdog.Stage("the final Stop() of every timer");
  t0 = clock->Now();
  heartbeat.Stop();
  const absl::Duration alive = ctx.alive();
  ctx.BeginFinalStop();
  for (auto& t : timers) {
    while (!t->Claim()) std::this_thread::sleep_for(std::chrono::microseconds(100));
    t->FinalStop();  // keeps the claim: no callback acts any more
  }
  times.final_stop = clock->Now() - t0;

  watchdog.Stage("the grace period after the final stops");
  const uint64_t calls_before_grace = ctx.counters().calls.load(std::memory_order_relaxed);
  clock->SleepFor(config.grace);
  times.grace_calls =
      ctx.counters().calls.load(std::memory_order_relaxed) - calls_before_grace;

  watchdog.Stage("destroying every timer");
  t0 = clock->Now();
  for (auto& t : timers) t->Destroy();
  times.destroy = clock->Now() - t0;

  const scheduler::Scheduler::Stats sched = scheduler::DefaultScheduler()->stats();
  watchdog.Stage("cyber::Shutdown()");
  t0 = clock->Now();
  cyber::Shutdown();
  times.shutdown = clock->Now() - t0;
  watchdog.Disarm();
  timers.clear();

  // Memory check (also covers a run shorter than the first sample after
  // warm-up: then it is not judged, and says so).
  const MemoryUsage final_mem = ReadMemoryUsage();
  const LatencyHistogram late = ctx.Lateness();
  SoakCounters& k = ctx.counters();
  auto u = [](const std::atomic<uint64_t>& a) {
    return static_cast<unsigned long long>(a.load(std::memory_order_relaxed));
  };
  const bool pass = log.total() == 0;

  std::printf("\n=== timer soak summary ===\n");
  std::printf("%-12s %s of churn%s, %d timers (%d oneshot, %d periodic, %d Cyber-compatible "
              "at start), %d churn threads, seed %llu\n",
              "run", absl::FormatDuration(ran).c_str(), interrupted ? " (interrupted)" : "",
              config.timers, comp.oneshot, comp.periodic, comp.compat, config.threads,
              static_cast<unsigned long long>(config.seed));
  std::printf("%-12s arms %llu (%s), stops %llu (%s), reconfigures %llu, recreates %llu, "
              "self-actions in callbacks %llu, Schedule() while running %llu, "
              "busy skips %llu\n",
              "operations", u(k.arms), Rate(k.arms.load(), ran).c_str(), u(k.stops),
              Rate(k.stops.load(), ran).c_str(), u(k.reconfigures), u(k.recreates),
              u(k.self_actions), u(k.redundant_schedules), u(k.busy_skips));
  std::printf("%-12s %llu (%s during the run); TimerStatistics of all configurations: "
              "fires %llu, overruns %llu, missed periods %llu, dispatch refusals %llu\n",
              "calls", u(k.calls), Rate(calls_during_run, ran).c_str(), u(k.stats_fires),
              u(k.stats_overruns), u(k.stats_missed_periods),
              u(k.stats_dispatch_refusals));
  std::printf("%-12s actual - expected over %llu TimerEvent calls: p50 %s, p99 %s, max %s "
              "(lost/late bound: %s of alive time after the latest on-time instant)\n",
              "lateness", static_cast<unsigned long long>(late.count()),
              Ms(late.Percentile(0.5)).c_str(), Ms(late.Percentile(0.99)).c_str(),
              Ms(late.max()).c_str(), absl::FormatDuration(config.lost_after).c_str());
  std::printf("%-12s kSkip calls closer than half a period to the previous call: %llu "
              "(informational)\n",
              "overrun", u(k.close_skip_calls));
  std::printf("%-12s %s timer: %llu calls, longest gap %s; alive time %s of %s (gaps count "
              "up to %s)\n",
              "heartbeat", absl::FormatDuration(kHeartbeatPeriod).c_str(),
              static_cast<unsigned long long>(ctx.heartbeats()),
              Ms(ctx.max_heartbeat_gap_seen()).c_str(), absl::FormatDuration(alive).c_str(),
              absl::FormatDuration(ran).c_str(),
              absl::FormatDuration(bounds.max_heartbeat_gap).c_str());
  const MemoryGrowth& g = mem.growth;
  std::printf("%-12s VmRSS %.1f MiB before the timers, %.1f MiB after creating them "
              "(%.0f bytes per timer); VmHWM %.1f MiB\n",
              "memory", KibToMib(mem.before_timers.rss_kib), KibToMib(mem.after_timers.rss_kib),
              static_cast<double>(mem.after_timers.rss_kib - mem.before_timers.rss_kib) *
                  1024.0 / config.timers,
              KibToMib(final_mem.hwm_kib));
  if (g.warm()) {
    const MemoryUsage& last = g.samples().back().usage;
    std::printf("%-12s after the %s warm-up: VmRSS %.1f -> max %.1f MiB (growth %.1f), "
                "live %.1f -> max %.1f MiB (growth %.1f); judged: %s; %s\n",
                "", absl::FormatDuration(config.rss_warmup).c_str(),
                KibToMib(g.raw().at_warmup_kib), KibToMib(g.raw().max_after_kib),
                g.raw().GrowthMib(), KibToMib(g.live().at_warmup_kib),
                KibToMib(g.live().max_after_kib), g.live().GrowthMib(),
                mem.judging()
                    ? absl::StrFormat("%s growth <= %.1f MiB", mem.judged_name(),
                                      config.max_rss_growth_mb)
                          .c_str()
                    : "nothing (--rss_basis=none, or auto under a sanitizer whose "
                      "quarantine and shadow memory grow by design)",
                last.heap_held_kib < 0
                    ? "malloc figures unavailable (another allocator): live = VmRSS"
                    : absl::StrFormat("at the last sample malloc had %.1f MiB in use, "
                                      "%.1f MiB held",
                                      KibToMib(last.heap_in_use_kib),
                                      KibToMib(last.heap_held_kib))
                          .c_str());
  } else {
    std::printf("%-12s run too short to judge growth after the %s warm-up\n", "",
                absl::FormatDuration(config.rss_warmup).c_str());
  }
  std::printf("%-12s dispatched %llu, refused %llu, finished %llu\n", "scheduler",
              static_cast<unsigned long long>(sched.dispatched),
              static_cast<unsigned long long>(sched.refused),
              static_cast<unsigned long long>(sched.finished));
  std::printf("%-12s churn joined in %s; final Stop() of every timer %s; calls in the %s "
              "grace period %llu; destroying the timers %s; cyber::Shutdown() %s\n",
              "end", Ms(times.join).c_str(), Ms(times.final_stop).c_str(),
              absl::FormatDuration(config.grace).c_str(),
              static_cast<unsigned long long>(times.grace_calls), Ms(times.destroy).c_str(),
              Ms(times.shutdown).c_str());
  std::printf("%-12s %s\n", "violations", log.Summary().c_str());
  if (!config.json_out.empty()) {
    WriteJson(config.json_out, config, ran, comp, ctx, late, mem, final_mem.hwm_kib, alive, sched,
              times, pass);
  }
  if (pass) {
    std::printf("soak: PASS (calls=%llu arms=%llu stops=%llu lateness_max=%s "
                "memory_growth=%s violations=0)\n",
                u(k.calls), u(k.arms), u(k.stops), Ms(late.max()).c_str(),
                mem.judging() ? absl::StrFormat("%.1fMiB", mem.judged().GrowthMib()).c_str()
                              : "not_judged");
  } else {
    std::printf("soak: FAIL (%s)\n", log.Summary().c_str());
  }
  std::fflush(stdout);
  return pass ? 0 : 1;
}

}  // namespace
}  // namespace soak
}  // namespace cyber

int main(int argc, char** argv) {
  gflags::SetUsageMessage(
      "bounded soak of cyber::Timer: --timers timers under arm/stop churn from "
      "--threads threads for --duration on the real clock, every call checked");
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  const absl::StatusOr<cyber::soak::SoakConfig> config = cyber::soak::ConfigFromFlags();
  if (!config.ok()) {
    std::fprintf(stderr, "timer_soak: %s\n", std::string(config.status().message()).c_str());
    std::printf("soak: FAIL (bad flags)\n");
    return 2;
  }
  return cyber::soak::RunSoak(*config, argv[0]);
}
