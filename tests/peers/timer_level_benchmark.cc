// Timer level: whole timers compared like with like, one workload, one run:
//
//   bash tools/setup_peers.sh
//   bazel run --config=opt //tests/peers:timer_level_benchmark --
//       --benchmark_repetitions=3 [--table_out=timer_peers.md]    (one line)
//
// (tools/run_benchmarks.sh does both and writes docs/performance/.)
//
// Why a second peer benchmark: peer_timer_benchmark.cc compares our
// TimingWheel, a bare data structure, with the other libraries' timers. A
// user of cyber::Timer pays for more than the wheel: the timer's state
// machine and lock, its shared core, its options and callback, its
// statistics. Here every peer is a *whole* timer as its users hold it,
// callback included, and it is measured through its public API only:
//
//   cyber::Timer, simulated  Timer(TimerOptions, &sim.driver()) on a
//            SimulatedTimerSystem (timer/testing/): Schedule / Stop /
//            Schedule / Reset, expiry by sim.RunFor(61 s), callbacks inline.
//            The reference ("ours") of every ratio printed (peer / ours).
//   cyber::Timer, process    Timer(TimerOption(ms, cb, true)), the Cyber RT
//            constructor: the process timer system (real tick thread, the
//            process runtime of a program that never calls cyber::Init).
//            Start / Stop / Start / Reset; never expires here (delays are
//            >= 10 s and every timer is stopped well before).
//   asio     boost::asio::basic_waitable_timer (steady_timer with a clock the
//            benchmark moves by hand, see ManualClock) on an io_context:
//            expires_after + async_wait / cancel() / expires_after +
//            async_wait (also the reset: expires_after cancels the pending
//            wait). Expiry polls the io_context at each distinct deadline.
//   libuv    uv_timer_t on a uv_loop_t: uv_timer_start / uv_timer_stop /
//            uv_timer_start (also the reset: it stops an active timer first).
//   libevent evtimer_new on an event_base: evtimer_add / evtimer_del /
//            evtimer_add (also the reset: it reschedules a pending event).
//   priority_queue  a timer is {std::function<void()> cb; uint64_t gen;} in
//            an array; std::priority_queue of (deadline, id, gen). Arm: bump
//            gen, push; cancel: bump gen (lazy, the heap element is left
//            stale); reset: bump gen, push. An odd gen means armed.
//
// Workload: N = 200,000 oneshot timers (--timers=N to change it), delays
// uniform in [10 s, 60 s] on the 2 ms grid of the timer resolution, from a
// fixed seed; every peer gets the same delays and the same orders. Each
// peer runs in its own process (the binary runs itself with --peer=NAME),
// so no peer inherits another's allocator state. In that process:
//
//   round 1 (memory)  construct N timers; arm all (index order); expire all
//                     (every callback runs once). VmRSS is read before the
//                     timers exist and after each of the three steps.
//   rounds 2 and 3    arm      all, index order;
//                     cancel   all, random order;
//                     re-arm   all (start after stop, same delay), another
//                              random order;
//                     (the peer's clock moves 1 s, untimed)
//                     reset    every armed timer to now + its delay (a new
//                              deadline), a third random order;
//                     expire   run 61 s of the peer's clock: every timer
//                              fires once, callbacks included.
//                     Round 2 only warms up; round 3 is the one timed, so
//                     every peer is in its steady state (buffers grown, the
//                     heap's to 3N elements; allocator caches filled).
//                     Round 1's arm and expire are reported as counters
//                     ("first arm", "first expire") only.
//
// arm runs in the order the timers were made, so it walks memory
// sequentially; the other phases run in random orders, where with N timers
// of up to ~600 bytes each most of the cost is cache and TLB misses.
// Only the phases are timed (std::chrono::steady_clock around the whole
// loop of N operations), reported as ns per operation. Callbacks are the
// same for every peer: ++fired[i] through a pointer to the timer's counter.
// Checked, untimed, in every run: after each arm / re-arm / reset all N are
// armed, after cancel none is; no callback runs before expire; each expire
// runs every timer's callback exactly once (so a cancelled or reset arming
// never fires). A failed check fails the benchmark.
//
// What each figure includes, where peers differ:
//   * asio completes a cancelled wait by calling its handler with
//     operation_aborted; cancel and reset include running those handlers
//     (one io_context::poll() at the end of the phase).
//   * priority_queue cancels lazily: its stale elements are popped, and paid
//     for, in expire (3N pops for N expiries).
//   * asio's expire polls the io_context at each distinct deadline, with
//     the manual clock set there (event to event, like the simulated
//     cyber::Timer and the heap); every poll is a reactor round trip with
//     system calls (epoll_wait, the timerfd), which the simulated system
//     and the heap, stepping with no clock to sleep on, do not pay.
//   * libuv's expire is one uv_run(UV_RUN_NOWAIT) pass with every timer due
//     (libuv refreshes its loop time from the real clock at each run, so the
//     benchmark sets the loop's cached time 62 s into the past before
//     arming); the other peers run event to event.
//   * Not measured: expiry for libevent (its event base reads the monotonic
//     clock and cannot be moved; 60 s of timers would take 60 s) and for
//     the process-system cyber::Timer (same reason); their reset moves the
//     deadline by the real time elapsed since the re-arm, not by 1 s.
//
// bytes/timer = (VmRSS after the step - VmRSS before construction) / N, so
// each stage includes the previous ones: "constructed" is the timer objects,
// their container and what construction allocates; "armed" adds what arming
// allocates (asio's wait operation, heap storage); "after firing" adds what
// the first expiry allocates (cyber::Timer's percentile histograms, but
// only with TimerOptions::latency_percentiles, left off here). Each peer's timer system (io_context, loop, base, driver) is
// made, and one extra timer armed and cancelled on it, before the first
// reading, so its one-time costs are not charged to the N timers. Pages are
// 4 KiB, so the resolution is 4096 / N bytes.

#include <fcntl.h>
#include <spawn.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <new>
#include <numeric>
#include <queue>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/system/error_code.hpp>
#include <event2/event.h>
#include <uv.h>

#include "absl/time/time.h"
#include "benchmark/benchmark.h"
#include "tests/peers/asio_manual_clock.h"
#include "tests/peers/benchmark_io.h"
#include "timer/testing/simulated_timer_system.h"
#include "timer/timer.h"
#include "timer/timing_wheel.h"

extern char** environ;

namespace cyber {
namespace timer {
namespace {

using SteadyClock = std::chrono::steady_clock;
using peers::ManualAsioTimer;
using peers::ManualClock;

constexpr size_t kDefaultTimers = 200'000;
constexpr absl::Duration kShortestDelay = absl::Seconds(10);
constexpr absl::Duration kLongestDelay = absl::Seconds(60);
// Between re-arm and reset each peer's clock moves this far (where it can be
// moved), so that reset gives every armed timer a new deadline.
constexpr absl::Duration kResetShift = absl::Seconds(1);
// Expire runs the clock this far from the reset: past every deadline.
const absl::Duration kExpireRun = kLongestDelay + kResetShift;
constexpr uint64_t kSeed = 20240611;

// Timer i has delay delay_ticks[i] * kTimerResolution.
struct Workload {
  std::vector<uint32_t> delay_ticks;
  std::vector<uint32_t> cancel_order;
  std::vector<uint32_t> rearm_order;
  std::vector<uint32_t> reset_order;

  size_t size() const { return delay_ticks.size(); }
  absl::Duration delay(size_t i) const {
    return kTimerResolution * int64_t{delay_ticks[i]};
  }
};

Workload MakeWorkload(size_t n) {
  std::mt19937_64 rng(kSeed);
  std::uniform_int_distribution<uint32_t> ticks(
      static_cast<uint32_t>(kShortestDelay / kTimerResolution),
      static_cast<uint32_t>(kLongestDelay / kTimerResolution));
  Workload w;
  w.delay_ticks.resize(n);
  for (uint32_t& d : w.delay_ticks) d = ticks(rng);
  std::vector<uint32_t>* orders[] = {&w.cancel_order, &w.rearm_order,
                                     &w.reset_order};
  for (std::vector<uint32_t>* order : orders) {
    order->resize(n);
    std::iota(order->begin(), order->end(), 0u);
    std::shuffle(order->begin(), order->end(), rng);
  }
  return w;
}

// VmRSS of this process in bytes, read without allocating; -1 on failure.
int64_t VmRssBytes() {
  char buf[8192];
  const int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  const ssize_t len = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  if (len <= 0) return -1;
  buf[len] = '\0';
  const char* line = std::strstr(buf, "\nVmRSS:");
  if (line == nullptr) return -1;
  return std::strtoll(line + std::strlen("\nVmRSS:"), nullptr, 10) * 1024;
}

// N timers in one contiguous block, constructed in place (cyber::Timer can
// be neither copied nor moved), destroyed in order. Every peer keeps its
// timers in one, so the containers cost the same.
template <typename T>
class TimerArray {
 public:
  TimerArray() = default;
  TimerArray(const TimerArray&) = delete;
  TimerArray& operator=(const TimerArray&) = delete;
  ~TimerArray() {
    for (size_t i = 0; i < size_; ++i) data_[i].~T();
    if (data_ != nullptr) {
      ::operator delete(data_, std::align_val_t(alignof(T)));
    }
  }

  // Element i = make(i), for i in [0, n). Call once.
  template <typename Make>
  void Build(size_t n, Make make) {
    data_ = static_cast<T*>(
        ::operator new(n * sizeof(T), std::align_val_t(alignof(T))));
    for (; size_ < n; ++size_) new (&data_[size_]) T(make(size_));
  }

  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  size_t size() const { return size_; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }

 private:
  T* data_ = nullptr;
  size_t size_ = 0;
};

// --- Peers ------------------------------------------------------------------
// Each peer owns its timer system (made in the constructor, before the first
// RSS reading) and, after Construct(), N timers; timer i runs ++fired[i].
// Arm / ReArm / Reset return false if an API call reported a failure;
// Cancel likewise. Armed() counts armed timers (untimed check). BeginRound()
// and PrepareExpire() are untimed set-up; AdvanceClock() moves the peer's
// clock by kResetShift where it can; Expire() runs kExpireRun of it.

TimerOptions OneshotOptions(absl::Duration delay, uint32_t* fired) {
  TimerOptions o;
  o.period = delay;
  o.oneshot = true;
  o.callback = [fired] { ++*fired; };
  return o;
}

class CyberSimulatedPeer {
 public:
  static constexpr bool kExpires = true;
  CyberSimulatedPeer(const Workload& w, uint32_t* fired)
      : w_(w), fired_(fired) {
    uint32_t unused = 0;
    Timer warm_up(OneshotOptions(kShortestDelay, &unused), &sim_.driver());
    warm_up.Schedule().IgnoreError();
    warm_up.Stop();
  }

  void Construct() {
    timers_.Build(w_.size(), [this](size_t i) {
      return Timer(OneshotOptions(w_.delay(i), &fired_[i]), &sim_.driver());
    });
  }
  void BeginRound() {}
  bool Arm() {
    bool ok = true;
    for (Timer& t : timers_) ok &= t.Schedule().ok();
    return ok;
  }
  bool Cancel() {
    for (uint32_t i : w_.cancel_order) timers_[i].Stop();
    return true;
  }
  bool ReArm() {
    bool ok = true;
    for (uint32_t i : w_.rearm_order) ok &= timers_[i].Schedule().ok();
    return ok;
  }
  void AdvanceClock() { sim_.RunFor(kResetShift); }
  bool Reset() {
    bool ok = true;
    for (uint32_t i : w_.reset_order) ok &= timers_[i].Reset().ok();
    return ok;
  }
  void PrepareExpire() {}
  void Expire() { sim_.RunFor(kExpireRun); }
  size_t Armed() const {
    return std::count_if(timers_.begin(), timers_.end(),
                         [](const Timer& t) { return t.IsRunning(); });
  }
  void DisarmAll() {
    for (Timer& t : timers_) t.Stop();
  }

 private:
  const Workload& w_;
  uint32_t* const fired_;
  SimulatedTimerSystem sim_;
  TimerArray<Timer> timers_;  // destroyed before sim_
};

class CyberProcessPeer {
 public:
  static constexpr bool kExpires = false;
  CyberProcessPeer(const Workload& w, uint32_t* fired) : w_(w), fired_(fired) {
    // Makes the process timer system (its tick thread and callback pool).
    uint32_t unused = 0;
    Timer warm_up(TimerOption(Ms(kShortestDelay), [&unused] { ++unused; },
                              true));
    warm_up.Start();
    warm_up.Stop();
  }

  void Construct() {
    timers_.Build(w_.size(), [this](size_t i) {
      uint32_t* const fired = &fired_[i];
      return Timer(TimerOption(Ms(w_.delay(i)), [fired] { ++*fired; }, true));
    });
  }
  void BeginRound() {}
  // Start() reports errors with AERROR only; Armed() checks the outcome.
  bool Arm() {
    for (Timer& t : timers_) t.Start();
    return true;
  }
  bool Cancel() {
    for (uint32_t i : w_.cancel_order) timers_[i].Stop();
    return true;
  }
  bool ReArm() {
    for (uint32_t i : w_.rearm_order) timers_[i].Start();
    return true;
  }
  void AdvanceClock() {}  // the real clock
  bool Reset() {
    bool ok = true;
    for (uint32_t i : w_.reset_order) ok &= timers_[i].Reset().ok();
    return ok;
  }
  void PrepareExpire() {}
  void Expire() {}
  size_t Armed() const {
    return std::count_if(timers_.begin(), timers_.end(),
                         [](const Timer& t) { return t.IsRunning(); });
  }
  void DisarmAll() {
    for (Timer& t : timers_) t.Stop();
  }

 private:
  static uint32_t Ms(absl::Duration d) {
    return static_cast<uint32_t>(absl::ToInt64Milliseconds(d));
  }

  const Workload& w_;
  uint32_t* const fired_;
  TimerArray<Timer> timers_;
};


class AsioPeer {
 public:
  static constexpr bool kExpires = true;
  AsioPeer(const Workload& w, uint32_t* fired) : w_(w), fired_(fired) {
    uint32_t unused = 0;
    ManualAsioTimer warm_up(io_);
    warm_up.expires_after(absl::ToChronoNanoseconds(kShortestDelay));
    warm_up.async_wait(Handler{&unused, &counts_});
    warm_up.cancel();
    Drain();
    counts_ = Counts();
  }
  ~AsioPeer() {
    for (ManualAsioTimer& t : timers_) t.cancel();
    Drain();
  }

  void Construct() {
    timers_.Build(w_.size(), [this](size_t) { return ManualAsioTimer(io_); });
  }
  void BeginRound() {}
  bool Arm() {
    for (size_t i = 0; i < timers_.size(); ++i) Start(i);
    return true;
  }
  bool Cancel() {
    size_t cancelled = 0;
    for (uint32_t i : w_.cancel_order) cancelled += timers_[i].cancel();
    Drain();  // the aborted handlers run
    return cancelled == timers_.size();
  }
  bool ReArm() {
    for (uint32_t i : w_.rearm_order) Start(i);
    return true;
  }
  void AdvanceClock() {
    ManualClock::current += absl::ToChronoNanoseconds(kResetShift);
  }
  // expires_after cancels the pending wait (and returns 1 if there was one).
  bool Reset() {
    size_t pending = 0;
    for (uint32_t i : w_.reset_order) {
      pending += timers_[i].expires_after(absl::ToChronoNanoseconds(w_.delay(i)));
      timers_[i].async_wait(Handler{&fired_[i], &counts_});
      ++counts_.started;
    }
    Drain();  // the aborted handlers run
    return pending == timers_.size();
  }
  // The deadlines to poll at, ascending: asio cannot tell its next expiry.
  void PrepareExpire() {
    deadlines_.clear();
    for (const ManualAsioTimer& t : timers_) deadlines_.push_back(t.expiry());
    std::sort(deadlines_.begin(), deadlines_.end());
    deadlines_.erase(std::unique(deadlines_.begin(), deadlines_.end()),
                     deadlines_.end());
  }
  void Expire() {
    const ManualClock::time_point horizon =
        ManualClock::current + absl::ToChronoNanoseconds(kExpireRun);
    for (ManualClock::time_point t : deadlines_) {
      if (t > horizon) break;
      ManualClock::current = t;
      if (io_.stopped()) io_.restart();
      io_.poll();
    }
    ManualClock::current = horizon;
  }
  // Waits started and not yet ended, fired or aborted.
  size_t Armed() {
    Drain();
    return counts_.started - counts_.fired - counts_.aborted;
  }
  void DisarmAll() {
    for (ManualAsioTimer& t : timers_) t.cancel();
    Drain();
  }

 private:
  struct Counts {
    size_t started = 0;
    size_t fired = 0;
    size_t aborted = 0;
  };
  struct Handler {
    void operator()(const boost::system::error_code& ec) const {
      if (ec) {
        ++counts->aborted;
      } else {
        ++*fired;
        ++counts->fired;
      }
    }
    uint32_t* fired;
    Counts* counts;
  };

  void Start(size_t i) {
    timers_[i].expires_after(absl::ToChronoNanoseconds(w_.delay(i)));
    timers_[i].async_wait(Handler{&fired_[i], &counts_});
    ++counts_.started;
  }
  // Runs the handlers that are ready (aborted ones); nothing is due.
  void Drain() {
    if (io_.stopped()) io_.restart();
    io_.poll();
  }

  const Workload& w_;
  uint32_t* const fired_;
  boost::asio::io_context io_;
  Counts counts_;
  TimerArray<ManualAsioTimer> timers_;  // destroyed before io_
  std::vector<ManualClock::time_point> deadlines_;
};

class UvPeer {
 public:
  static constexpr bool kExpires = true;
  UvPeer(const Workload& w, uint32_t* fired) : w_(w), fired_(fired) {
    loop_ok_ = uv_loop_init(&loop_) == 0;
    uint32_t unused = 0;
    uv_timer_t warm_up;
    uv_timer_init(&loop_, &warm_up);
    warm_up.data = &unused;
    uv_timer_start(&warm_up, &OnTimer, Ms(kShortestDelay), 0);
    uv_timer_stop(&warm_up);
    uv_close(reinterpret_cast<uv_handle_t*>(&warm_up), nullptr);
    uv_run(&loop_, UV_RUN_NOWAIT);  // runs the close
  }
  ~UvPeer() {
    for (uv_timer_t& t : timers_) {
      uv_timer_stop(&t);
      uv_close(reinterpret_cast<uv_handle_t*>(&t), nullptr);
    }
    uv_run(&loop_, UV_RUN_DEFAULT);  // runs the closes, then returns
    uv_loop_close(&loop_);
  }

  void Construct() {
    // uv_timer_init links the handle into the loop by address: in place.
    timers_.Build(w_.size(), [](size_t) { return uv_timer_t{}; });
    for (size_t i = 0; i < timers_.size(); ++i) {
      loop_ok_ &= uv_timer_init(&loop_, &timers_[i]) == 0;
      timers_[i].data = &fired_[i];
    }
  }
  // libuv bases every timeout on the loop's cached time and refreshes it
  // from the real clock at each uv_run. Set 62 s in the past, every timer
  // armed this round is due at the next uv_run.
  void BeginRound() {
    uv_update_time(&loop_);
    loop_.time = uv_now(&loop_) - Ms(kExpireRun + absl::Seconds(1));
  }
  bool Arm() {
    bool ok = loop_ok_;
    for (size_t i = 0; i < timers_.size(); ++i) {
      ok &= uv_timer_start(&timers_[i], &OnTimer, Ms(w_.delay(i)), 0) == 0;
    }
    return ok;
  }
  bool Cancel() {
    bool ok = true;
    for (uint32_t i : w_.cancel_order) ok &= uv_timer_stop(&timers_[i]) == 0;
    return ok;
  }
  bool ReArm() {
    bool ok = true;
    for (uint32_t i : w_.rearm_order) {
      ok &= uv_timer_start(&timers_[i], &OnTimer, Ms(w_.delay(i)), 0) == 0;
    }
    return ok;
  }
  void AdvanceClock() { loop_.time += Ms(kResetShift); }
  // uv_timer_start on an active timer stops it first.
  bool Reset() {
    bool ok = true;
    for (uint32_t i : w_.reset_order) {
      ok &= uv_timer_start(&timers_[i], &OnTimer, Ms(w_.delay(i)), 0) == 0;
    }
    return ok;
  }
  void PrepareExpire() {}
  void Expire() { uv_run(&loop_, UV_RUN_NOWAIT); }
  size_t Armed() const {
    return std::count_if(timers_.begin(), timers_.end(),
                         [](const uv_timer_t& t) {
                           return uv_is_active(
                                      reinterpret_cast<const uv_handle_t*>(
                                          &t)) != 0;
                         });
  }
  void DisarmAll() {
    for (uv_timer_t& t : timers_) uv_timer_stop(&t);
  }

 private:
  static void OnTimer(uv_timer_t* t) { ++*static_cast<uint32_t*>(t->data); }
  static uint64_t Ms(absl::Duration d) {
    return static_cast<uint64_t>(absl::ToInt64Milliseconds(d));
  }

  const Workload& w_;
  uint32_t* const fired_;
  uv_loop_t loop_;
  bool loop_ok_ = false;
  TimerArray<uv_timer_t> timers_;
};

class EventPeer {
 public:
  static constexpr bool kExpires = false;
  EventPeer(const Workload& w, uint32_t* fired)
      : w_(w), fired_(fired), base_(event_base_new()) {
    uint32_t unused = 0;
    event* warm_up = evtimer_new(base_, &OnTimer, &unused);
    const timeval tv = absl::ToTimeval(kShortestDelay);
    evtimer_add(warm_up, &tv);
    evtimer_del(warm_up);
    event_free(warm_up);
  }
  ~EventPeer() {
    for (event* e : events_) event_free(e);  // deletes it if pending
    event_base_free(base_);
  }

  void Construct() {
    events_.Build(w_.size(), [this](size_t i) {
      return evtimer_new(base_, &OnTimer, &fired_[i]);
    });
  }
  void BeginRound() {}
  bool Arm() {
    bool ok = true;
    for (size_t i = 0; i < events_.size(); ++i) {
      const timeval tv = absl::ToTimeval(w_.delay(i));
      ok &= evtimer_add(events_[i], &tv) == 0;
    }
    return ok;
  }
  bool Cancel() {
    bool ok = true;
    for (uint32_t i : w_.cancel_order) ok &= evtimer_del(events_[i]) == 0;
    return ok;
  }
  bool ReArm() { return AddInOrder(w_.rearm_order); }
  void AdvanceClock() {}  // the real clock
  // evtimer_add on a pending event reschedules it.
  bool Reset() { return AddInOrder(w_.reset_order); }
  void PrepareExpire() {}
  void Expire() {}
  size_t Armed() const {
    return std::count_if(events_.begin(), events_.end(), [](event* e) {
      return evtimer_pending(e, nullptr) != 0;
    });
  }
  void DisarmAll() {
    for (event* e : events_) evtimer_del(e);
  }

 private:
  static void OnTimer(evutil_socket_t, short, void* fired) {
    ++*static_cast<uint32_t*>(fired);
  }
  bool AddInOrder(const std::vector<uint32_t>& order) {
    bool ok = true;
    for (uint32_t i : order) {
      const timeval tv = absl::ToTimeval(w_.delay(i));
      ok &= evtimer_add(events_[i], &tv) == 0;
    }
    return ok;
  }

  const Workload& w_;
  uint32_t* const fired_;
  event_base* const base_;
  TimerArray<event*> events_;
};

// The do-it-yourself timer: a callback and a generation per timer, a binary
// heap of (deadline, id, generation) with lazy cancellation. An odd
// generation means armed; an element whose generation is not its timer's
// current one is stale and is dropped when it reaches the top.
class HeapPeer {
 public:
  static constexpr bool kExpires = true;
  HeapPeer(const Workload& w, uint32_t* fired) : w_(w), fired_(fired) {
    queue_.push(Element{now_ + 1, 0, 1});
    queue_.pop();
  }

  void Construct() {
    timers_.Build(w_.size(), [this](size_t i) {
      uint32_t* const fired = &fired_[i];
      return HeapTimer{[fired] { ++*fired; }, 0};
    });
  }
  void BeginRound() {}
  bool Arm() {
    for (uint32_t i = 0; i < timers_.size(); ++i) Start(i);
    return true;
  }
  bool Cancel() {
    bool ok = true;
    for (uint32_t i : w_.cancel_order) {
      HeapTimer& t = timers_[i];
      ok &= (t.gen & 1) != 0;
      t.gen += t.gen & 1;
    }
    return ok;
  }
  bool ReArm() {
    for (uint32_t i : w_.rearm_order) Start(i);
    return true;
  }
  void AdvanceClock() { now_ += Ticks(kResetShift); }
  bool Reset() {
    for (uint32_t i : w_.reset_order) Start(i);
    return true;
  }
  void PrepareExpire() {}
  void Expire() {
    const Tick horizon = now_ + Ticks(kExpireRun);
    while (!queue_.empty() && queue_.top().deadline <= horizon) {
      const Element e = queue_.top();
      queue_.pop();
      now_ = e.deadline;
      HeapTimer& t = timers_[e.id];
      if (t.gen == e.gen) {
        ++t.gen;  // a oneshot is idle once its call begins
        t.cb();
      }
    }
    now_ = horizon;
  }
  size_t Armed() const {
    return std::count_if(timers_.begin(), timers_.end(),
                         [](const HeapTimer& t) { return (t.gen & 1) != 0; });
  }
  void DisarmAll() {
    for (HeapTimer& t : timers_) t.gen += t.gen & 1;
  }

 private:
  struct HeapTimer {
    std::function<void()> cb;
    uint64_t gen;
  };
  struct Element {
    Tick deadline;
    uint32_t id;
    uint64_t gen;
  };
  struct Later {
    bool operator()(const Element& a, const Element& b) const {
      return a.deadline > b.deadline;
    }
  };
  static Tick Ticks(absl::Duration d) {
    return static_cast<Tick>(d / kTimerResolution);
  }
  // Arms timer i for now + its delay; an armed timer's element goes stale.
  void Start(uint32_t i) {
    HeapTimer& t = timers_[i];
    t.gen += (t.gen & 1) != 0 ? 2 : 1;
    queue_.push(Element{now_ + w_.delay_ticks[i], i, t.gen});
  }

  const Workload& w_;
  uint32_t* const fired_;
  Tick now_ = 0;
  std::priority_queue<Element, std::vector<Element>, Later> queue_;
  TimerArray<HeapTimer> timers_;
};

// --- One peer in this process (--peer=NAME) ------------------------------

enum Phase { kArm, kCancel, kReArm, kReset, kExpire, kNumPhases };
constexpr const char* kPhaseKey[kNumPhases] = {"arm", "cancel", "rearm",
                                               "reset", "expire"};
enum Stage { kConstructed, kArmed, kAfterFiring, kNumStages };
constexpr const char* kStageKey[kNumStages] = {"rss_constructed", "rss_armed",
                                               "rss_after_firing"};

template <typename Fn>
double TimedNs(Fn&& fn) {
  const SteadyClock::time_point start = SteadyClock::now();
  fn();
  return std::chrono::duration<double, std::nano>(SteadyClock::now() - start)
      .count();
}

// Prints "error <what>" for the parent and exits.
[[noreturn]] void Fail(const std::string& what) {
  std::printf("error %s\n", what.c_str());
  std::fflush(stdout);
  std::exit(1);
}

void Check(bool ok, const char* what) {
  if (!ok) Fail(what);
}

void CheckFired(const std::vector<uint32_t>& fired, uint32_t expected,
                const char* when, SteadyClock::time_point first_arm) {
  for (size_t i = 0; i < fired.size(); ++i) {
    if (fired[i] == expected) continue;
    const double since_arm =
        std::chrono::duration<double>(SteadyClock::now() - first_arm).count();
    char what[256];
    std::snprintf(what, sizeof(what),
                  "%s: timer %zu ran its callback %u times, expected %u "
                  "(%.1f s since the first arm)",
                  when, i, fired[i], expected, since_arm);
    Fail(what);
  }
}

// Arm, cancel, re-arm, (clock + 1 s), reset, expire: the timed phases, each
// followed by its checks; the total time of each is left in `ns`.
// `fired_each` is what every timer's counter holds before and after.
template <typename Peer>
void PhaseRound(Peer& peer, const std::vector<uint32_t>& fired,
                SteadyClock::time_point first_arm, const std::string& round,
                uint32_t* fired_each, double ns[kNumPhases]) {
  const size_t n = fired.size();
  const auto check = [&round](bool ok, const char* what) {
    if (!ok) Fail(round + ": " + what);
  };
  bool ok = false;
  peer.BeginRound();
  ns[kArm] = TimedNs([&] { ok = peer.Arm(); });
  check(ok && peer.Armed() == n, "arm did not arm every timer");
  ns[kCancel] = TimedNs([&] { ok = peer.Cancel(); });
  check(ok && peer.Armed() == 0, "cancel left a timer armed");
  CheckFired(fired, *fired_each, (round + ", after cancel").c_str(),
             first_arm);
  ns[kReArm] = TimedNs([&] { ok = peer.ReArm(); });
  check(ok && peer.Armed() == n, "re-arm did not arm every timer");
  peer.AdvanceClock();
  ns[kReset] = TimedNs([&] { ok = peer.Reset(); });
  check(ok && peer.Armed() == n, "reset did not leave every timer armed");
  CheckFired(fired, *fired_each, (round + ", before expire").c_str(),
             first_arm);
  if (Peer::kExpires) {
    peer.PrepareExpire();
    ns[kExpire] = TimedNs([&] { peer.Expire(); });
    ++*fired_each;
    CheckFired(fired, *fired_each, (round + ", expire").c_str(), first_arm);
    check(peer.Armed() == 0, "a timer is armed after expire");
  } else {
    peer.DisarmAll();
    CheckFired(fired, *fired_each, (round + ", after stopping").c_str(),
               first_arm);
    check(peer.Armed() == 0, "a timer is armed after stop");
  }
}

// Runs the three rounds on Peer and prints "key value" lines: ns/op per phase
// (-1: not measured), and bytes/timer per RSS stage.
template <typename Peer>
int RunPeer(size_t n) {
  const Workload w = MakeWorkload(n);
  std::vector<uint32_t> fired(n, 0);  // written now: its pages are resident
  double ns[kNumPhases] = {-1, -1, -1, -1, -1};
  double rss[kNumStages] = {-1, -1, -1};
  double first_arm_ns = -1;
  double first_expire_ns = -1;
  {
    Peer peer(w, fired.data());
    const int64_t rss_before = VmRssBytes();
    Check(rss_before > 0, "cannot read VmRSS from /proc/self/status");
    const auto per_timer = [&] {
      return static_cast<double>(VmRssBytes() - rss_before) /
             static_cast<double>(n);
    };

    // Round 1: construct, arm, fire; RSS after each.
    peer.Construct();
    rss[kConstructed] = per_timer();
    peer.BeginRound();
    const SteadyClock::time_point first_arm = SteadyClock::now();
    bool ok = false;
    first_arm_ns = TimedNs([&] { ok = peer.Arm(); });
    Check(ok && peer.Armed() == n, "round 1: arm did not arm every timer");
    rss[kArmed] = per_timer();
    uint32_t fired_each = 0;
    if (Peer::kExpires) {
      peer.PrepareExpire();
      first_expire_ns = TimedNs([&] { peer.Expire(); });
      fired_each = 1;
      CheckFired(fired, fired_each, "round 1 expire", first_arm);
      Check(peer.Armed() == 0, "round 1: a timer is armed after expire");
      rss[kAfterFiring] = per_timer();
    } else {
      peer.DisarmAll();
      Check(peer.Armed() == 0, "round 1: a timer is armed after stop");
    }

    // Round 2 warms up, round 3 is timed: same phases.
    PhaseRound(peer, fired, first_arm, "round 2", &fired_each, ns);
    PhaseRound(peer, fired, first_arm, "round 3", &fired_each, ns);
  }  // the timers and their system are destroyed here (untimed)

  for (int p = 0; p < kNumPhases; ++p) {
    std::printf("%s %.3f\n", kPhaseKey[p],
                ns[p] < 0 ? -1.0 : ns[p] / static_cast<double>(n));
  }
  std::printf("first_arm %.3f\n", first_arm_ns / static_cast<double>(n));
  std::printf("first_expire %.3f\n",
              first_expire_ns < 0 ? -1.0
                                  : first_expire_ns / static_cast<double>(n));
  for (int s = 0; s < kNumStages; ++s) {
    std::printf("%s %.2f\n", kStageKey[s], rss[s]);
  }
  std::fflush(stdout);
  return 0;
}

struct PeerInfo {
  const char* flag;   // --peer=<flag>
  const char* label;  // table row
  int (*run)(size_t n);
};
// Table order; the first is "ours", the reference of every ratio.
constexpr PeerInfo kPeers[] = {
    {"cyber_simulated", "cyber::Timer, simulated system (ours)",
     &RunPeer<CyberSimulatedPeer>},
    {"cyber_process", "cyber::Timer, process system", &RunPeer<CyberProcessPeer>},
    {"asio", "boost::asio waitable_timer (manual clock)", &RunPeer<AsioPeer>},
    {"libuv", "libuv uv_timer_t", &RunPeer<UvPeer>},
    {"libevent", "libevent evtimer", &RunPeer<EventPeer>},
    {"priority_queue", "std::priority_queue + std::function",
     &RunPeer<HeapPeer>},
};
constexpr int kNumPeers = sizeof(kPeers) / sizeof(kPeers[0]);

// --- The parent: one benchmark per peer, each run a child process ---------

size_t g_timers = kDefaultTimers;

// One child run: the values it printed, by key.
using RunValues = std::map<std::string, double>;

std::map<int, std::vector<RunValues>>& Results() {
  static auto* const results = new std::map<int, std::vector<RunValues>>;
  return *results;
}

// Runs this binary with --peer=<flag> and collects its output. On failure
// returns false with `error` set (the child's own message if it gave one).
bool RunChild(const PeerInfo& peer, RunValues* values, std::string* error) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    *error = std::string("pipe2: ") + std::strerror(errno);
    return false;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  std::string peer_flag = std::string("--peer=") + peer.flag;
  std::string timers_flag = "--timers=" + std::to_string(g_timers);
  char name[] = "timer_level_benchmark";
  char* argv[] = {name, peer_flag.data(), timers_flag.data(), nullptr};
  pid_t pid = 0;
  const int spawned =
      posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (spawned != 0) {
    close(fds[0]);
    *error = std::string("posix_spawn: ") + std::strerror(spawned);
    return false;
  }
  std::string out;
  char buf[4096];
  for (ssize_t len; (len = read(fds[0], buf, sizeof(buf))) != 0;) {
    if (len < 0 && errno == EINTR) continue;
    if (len < 0) break;
    out.append(buf, static_cast<size_t>(len));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  size_t start = 0;
  while (start < out.size()) {
    size_t end = out.find('\n', start);
    if (end == std::string::npos) end = out.size();
    const std::string line = out.substr(start, end - start);
    start = end + 1;
    const size_t space = line.find(' ');
    if (space == std::string::npos) continue;
    const std::string key = line.substr(0, space);
    if (key == "error") {
      *error = line.substr(space + 1);
      return false;
    }
    (*values)[key] = std::strtod(line.c_str() + space + 1, nullptr);
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    *error = std::string(peer.flag) + ": child process failed (status " +
             std::to_string(status) + ")";
    return false;
  }
  return true;
}

void BM_TimerLevel(benchmark::State& state, int peer_index) {
  const PeerInfo& peer = kPeers[peer_index];
  RunValues values;
  for (auto _ : state) {
    values.clear();
    std::string error;
    if (!RunChild(peer, &values, &error)) {
      state.SkipWithError(error.c_str());
      break;
    }
    double phases_ns = 0;  // N ops per phase
    for (const char* key : kPhaseKey) {
      if (values[key] > 0) phases_ns += values[key];
    }
    state.SetIterationTime(phases_ns * static_cast<double>(g_timers) * 1e-9);
  }
  if (values.empty()) return;
  for (int p = 0; p < kNumPhases; ++p) {
    if (values[kPhaseKey[p]] >= 0) {
      state.counters[std::string(kPhaseKey[p]) + " ns/op"] =
          values[kPhaseKey[p]];
    }
  }
  if (values["first_expire"] >= 0) {
    state.counters["first expire ns/op"] = values["first_expire"];
  }
  state.counters["first arm ns/op"] = values["first_arm"];
  for (int s = 0; s < kNumStages; ++s) {
    if (values[kStageKey[s]] >= 0) {
      state.counters[std::string(kStageKey[s]) + " B/timer"] =
          values[kStageKey[s]];
    }
  }
  Results()[peer_index].push_back(values);
}

void RegisterAll() {
  for (int i = 0; i < kNumPeers; ++i) {
    benchmark::RegisterBenchmark(
        (std::string("BM_TimerLevel/") + kPeers[i].flag).c_str(),
        [i](benchmark::State& state) { BM_TimerLevel(state, i); })
        ->Iterations(1)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
}

double Median(std::vector<double> v) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  const size_t mid = v.size() / 2;
  return v.size() % 2 == 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

// Median over a peer's runs of `key`; -1 if never measured.
double MedianOf(const std::vector<RunValues>& runs, const std::string& key) {
  std::vector<double> v;
  for (const RunValues& r : runs) {
    auto it = r.find(key);
    if (it != r.end() && it->second >= 0) v.push_back(it->second);
  }
  return Median(v);
}

std::string Cell(double value, double ours, const char* format) {
  if (value < 0) return "not measured";
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, value);
  std::string cell = buf;
  if (ours > 0) {
    std::snprintf(buf, sizeof(buf), " (%.2fx)", value / ours);
    cell += buf;
  }
  return cell;
}

std::string Table() {
  const auto ours_it = Results().find(0);
  size_t runs = 0;
  for (const auto& [peer, results] : Results()) {
    runs = std::max(runs, results.size());
  }
  if (runs == 0) return "";
  std::string out =
      "| peer (timer level) | arm | cancel | re-arm | reset | expire | "
      "bytes/timer constructed | armed | after firing | spread |\n"
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& [peer, results] : Results()) {
    std::string row = std::string("| ") + kPeers[peer].label + " |";
    double spread = 0;
    for (const char* key : kPhaseKey) {
      const double median = MedianOf(results, key);
      const double ours =
          ours_it == Results().end() ? -1 : MedianOf(ours_it->second, key);
      row += " " + Cell(median, ours, "%.1f") + " |";
      double lo = -1;
      double hi = -1;
      for (const RunValues& r : results) {
        auto it = r.find(key);
        if (it == r.end() || it->second < 0) continue;
        lo = lo < 0 ? it->second : std::min(lo, it->second);
        hi = std::max(hi, it->second);
      }
      if (median > 0) spread = std::max(spread, (hi - lo) / median);
    }
    for (const char* key : kStageKey) {
      const double ours =
          ours_it == Results().end() ? -1 : MedianOf(ours_it->second, key);
      row += " " + Cell(MedianOf(results, key), ours, "%.0f") + " |";
    }
    char tail[32];
    std::snprintf(tail, sizeof(tail), " %.0f%% |\n", 100 * spread);
    out += row + tail;
  }
  char note[2048];
  std::snprintf(
      note, sizeof(note),
      "\nTimer level: whole timers through their public APIs, N = %zu "
      "oneshot timers, delays uniform in [10 s, 60 s] (2 ms grid, fixed "
      "seed), the same delays and orders for every peer, each peer in its "
      "own process. ns/op, median of %zu run(s); (ratio) = peer / ours "
      "(the first row); spread = largest (max - min) / median over the "
      "phases. arm: all N, in the order they were made; cancel: all, "
      "random order; re-arm: start again after the cancel, another random "
      "order; reset: an armed timer to a new deadline (clock moved 1 s), a "
      "third random order; expire: 61 s of the peer's clock, ns per expiry, "
      "callback included. In random order most of the cost is cache and TLB "
      "misses (N timers of up to ~600 bytes): compare a column across "
      "peers, not the columns with each other. asio's "
      "cancel and reset include running the aborted handlers, and its "
      "expire polls the io_context at each distinct deadline (a reactor "
      "round trip, with system calls, per deadline); the priority_queue "
      "pays for its lazy cancel in expire (3N pops); libuv expires in one "
      "uv_run pass with everything due. bytes/timer: VmRSS growth over N "
      "from before construction to after each step (cumulative). Not "
      "measured: expiry of libevent and of the process-system cyber::Timer "
      "(real clock: 60 s of timers would take 60 s).\n",
      g_timers, runs);
  return out + note;
}

}  // namespace
}  // namespace timer
}  // namespace cyber

int main(int argc, char** argv) {
  using cyber::timer::g_timers;
  using cyber::timer::kPeers;
  const std::string table_out = cyber::peers::TakeFlag("table_out", &argc, argv);
  const std::string peer = cyber::peers::TakeFlag("peer", &argc, argv);
  const std::string timers = cyber::peers::TakeFlag("timers", &argc, argv);
  if (!timers.empty()) {
    g_timers = std::strtoull(timers.c_str(), nullptr, 10);
    if (g_timers == 0) {
      std::fprintf(stderr, "--timers=%s: must be a positive count\n",
                   timers.c_str());
      return 1;
    }
  }
  if (!peer.empty()) {  // a child: one peer, results on stdout
    for (const cyber::timer::PeerInfo& p : kPeers) {
      if (peer == p.flag) return p.run(g_timers);
    }
    std::printf("error unknown --peer=%s\n", peer.c_str());
    return 1;
  }

  cyber::timer::RegisterAll();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  const std::string table = cyber::timer::Table();
  return cyber::peers::EmitTable("Timer peers, timer level (whole timers)", table, table_out) ? 0 : 1;
}
