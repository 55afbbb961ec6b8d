// Our TimingWheel next to other timer implementations, one workload, one run:
//
//   bash tools/setup_peers.sh
//   bazel run --config=opt //tests/peers:peer_timer_benchmark --
//       --benchmark_repetitions=3 [--table_out=peers.md]    (one line)
//
// (tools/run_benchmarks.sh does both and writes docs/performance/.)
//
// Peers ("ours" is the wheel; every ratio printed is peer / ours):
//   wheel     cyber::timer::TimingWheel (intrusive WheelEntry, own mutex);
//   heap      std::priority_queue of (expiry, id, generation), lazy cancel;
//   multimap  std::multimap<expiry, id> plus one iterator per timer, eager
//             erase; re-arm moves the node (extract / insert, no allocation);
//   asio      boost::asio::basic_waitable_timer on an io_context, on a clock
//             the benchmark moves by hand (so expiry can be measured): arm
//             and re-arm = expires_after + async_wait, cancel = cancel();
//   libuv     uv_timer_t on a uv_loop_t: uv_timer_start / uv_timer_stop (the
//             loop's cached time is the base of every timeout);
//   libevent  evtimer_new events on an event_base: evtimer_add / evtimer_del.
//
// Workload, per N in {1e3, 1e5, 1e6}: N live timers, delays uniform in
// [2 ms, 60 s] (1..30000 ticks of 2 ms) from a fixed seed. One round is:
//   schedule  arm all N timers (empty container);
//   re-arm    move all N to a new random delay, in random order;
//   cancel    cancel all N, in another random order;
//   expire    arm all N again (untimed), then run through the 30000 ticks
//             event to event, as the tickless tick driver does: wheel via
//             NextEventTick() / AdvanceTo(), heap and multimap by popping
//             from the earliest element's tick, asio by polling its
//             io_context at each distinct deadline with the manual clock set
//             there; libuv in one loop pass with every timer due (see
//             UvPeer). Every expired timer runs an (empty) callback.
// Only the four phases are timed (manual timing); setup, checks and cleanup
// are not. Small N repeats the round until ~2e5 operations per phase. With
// --benchmark_repetitions=R the table shows the median of R runs and their
// spread.
//
// Not measured: expiry for libevent. Its event base takes "now" from the
// monotonic clock and offers no way to move it, so running 60 s of timers
// through it takes 60 s of wall time and measures sleeping.
//
// bytes/timer: wheel = sizeof(WheelEntry) + sizeof(TimingWheel) / N; heap =
// reserved storage (2N elements, room for the re-arm) + generation counter,
// over N; multimap = heap bytes its nodes occupy (malloc_usable_size, counted
// through operator new) + one stored iterator; asio = sizeof(timer) + heap
// bytes allocated per scheduled wait (the wait operation and the timer
// queue's heap entry, counted the same way); libuv = sizeof(uv_timer_t) +
// sizeof(uv_loop_t) / N (its heap is intrusive); libevent = the malloc'd
// struct event (malloc_usable_size) + one min-heap slot (a pointer).

#include <malloc.h>
#include <sys/time.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <new>
#include <numeric>
#include <queue>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/error.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/system/error_code.hpp>
#include <event2/event.h>
#include <uv.h>

#include "absl/time/time.h"
#include "benchmark/benchmark.h"
#include "cyber/time/instant.h"
#include "tests/peers/asio_manual_clock.h"
#include "tests/peers/benchmark_io.h"
#include "timer/timing_wheel.h"

// --- Heap byte accounting ---------------------------------------------------
// While g_count_heap_bytes is set (only in untimed probes, on the main
// thread), the global operator new / delete keep g_live_heap_bytes: bytes of
// the blocks malloc handed out (usable size, so its rounding is included).
// Otherwise they cost one predictable branch over malloc / free.
namespace {
bool g_count_heap_bytes = false;
int64_t g_live_heap_bytes = 0;
}  // namespace

void* operator new(std::size_t size) {
  void* p = std::malloc(size == 0 ? 1 : size);
  if (p == nullptr) throw std::bad_alloc();
  if (g_count_heap_bytes) {
    g_live_heap_bytes += static_cast<int64_t>(malloc_usable_size(p));
  }
  return p;
}
void* operator new[](std::size_t size) { return operator new(size); }
void operator delete(void* p) noexcept {
  if (p == nullptr) return;
  if (g_count_heap_bytes) {
    g_live_heap_bytes -= static_cast<int64_t>(malloc_usable_size(p));
  }
  std::free(p);
}
void operator delete[](void* p) noexcept { operator delete(p); }
void operator delete(void* p, std::size_t) noexcept { operator delete(p); }
void operator delete[](void* p, std::size_t) noexcept { operator delete(p); }

namespace cyber {
namespace timer {
namespace {

using SteadyClock = std::chrono::steady_clock;
using peers::ManualAsioTimer;
using peers::ManualClock;

constexpr absl::Duration kLongestDelay = absl::Seconds(60);
// Operations timed per phase and benchmark (whole rounds of N, at least 1).
constexpr size_t kOpsPerPhase = 200'000;
constexpr uint64_t kSeed = 20240611;

Tick HorizonTicks() {
  return static_cast<Tick>(kLongestDelay / kTimerResolution);
}
int64_t TickMs() { return absl::ToInt64Milliseconds(kTimerResolution); }

// Timer i is entry (or id) i. Delays are in ticks of kTimerResolution; the
// real-clock peers get the same delays in milliseconds.
struct Workload {
  std::vector<uint32_t> delay;
  std::vector<uint32_t> new_delay;
  std::vector<uint32_t> rearm_order;
  std::vector<uint32_t> cancel_order;
  // The distinct values of `delay`, ascending: the event times of the
  // expiry phase, for a peer whose API cannot tell its next expiry (asio).
  std::vector<uint32_t> distinct_delays;
};

const Workload& WorkloadFor(size_t n) {
  static auto* const cache = new std::map<size_t, Workload>;
  auto it = cache->find(n);
  if (it != cache->end()) return it->second;
  std::mt19937_64 rng(kSeed);
  std::uniform_int_distribution<uint32_t> ticks(
      1, static_cast<uint32_t>(HorizonTicks()));
  Workload w;
  w.delay.resize(n);
  w.new_delay.resize(n);
  for (uint32_t& d : w.delay) d = ticks(rng);
  for (uint32_t& d : w.new_delay) d = ticks(rng);
  w.rearm_order.resize(n);
  std::iota(w.rearm_order.begin(), w.rearm_order.end(), 0u);
  std::shuffle(w.rearm_order.begin(), w.rearm_order.end(), rng);
  w.cancel_order = w.rearm_order;
  std::shuffle(w.cancel_order.begin(), w.cancel_order.end(), rng);
  w.distinct_delays = w.delay;
  std::sort(w.distinct_delays.begin(), w.distinct_delays.end());
  w.distinct_delays.erase(
      std::unique(w.distinct_delays.begin(), w.distinct_delays.end()),
      w.distinct_delays.end());
  return cache->emplace(n, std::move(w)).first->second;
}

// --- Peers ------------------------------------------------------------------
// Each peer owns n timers and offers the phases as methods. Schedule, ReArm
// and Cancel return how many operations took effect (checked == n); Expire
// returns how many timers expired; Reset (untimed) leaves nothing armed and
// returns false if the peer's own bookkeeping disagrees.

class WheelPeer {
 public:
  static constexpr bool kExpires = true;
  explicit WheelPeer(size_t n) : entries_(n) { NewWheel(); }
  ~WheelPeer() { DisarmAll(); }

  void PrepareExpiry() {}

  size_t Schedule(const Workload& w) {
    const Tick now = wheel_->now();
    size_t ok = 0;
    for (size_t i = 0; i < entries_.size(); ++i) {
      if (wheel_->Arm(&entries_[i], now + w.delay[i]).ok()) ++ok;
    }
    return ok;
  }
  size_t ReArm(const Workload& w) {
    const Tick now = wheel_->now();
    size_t ok = 0;
    for (uint32_t i : w.rearm_order) {
      if (wheel_->Arm(&entries_[i], now + w.new_delay[i]).ok()) ++ok;
    }
    return ok;
  }
  size_t Cancel(const Workload& w) {
    size_t ok = 0;
    for (uint32_t i : w.cancel_order) {
      if (wheel_->Cancel(&entries_[i])) ++ok;
    }
    return ok;
  }
  uint64_t Expire(Tick horizon) {
    uint64_t expired = 0;
    for (Tick t = wheel_->NextEventTick(); t <= horizon;
         t = wheel_->NextEventTick()) {
      wheel_->AdvanceTo(t, [&expired](WheelEntry*) { ++expired; });
    }
    return expired;
  }
  bool Reset() {
    const bool was_empty = wheel_->size() == 0;
    DisarmAll();
    NewWheel();
    return was_empty;
  }
  double BytesPerTimer() const {
    return sizeof(WheelEntry) + static_cast<double>(sizeof(TimingWheel)) /
                                    static_cast<double>(entries_.size());
  }

 private:
  void NewWheel() {
    wheel_ = std::make_unique<TimingWheel>(Instant(), kTimerResolution);
  }
  void DisarmAll() {
    for (WheelEntry& e : entries_) wheel_->Cancel(&e);
  }

  std::vector<WheelEntry> entries_;
  std::unique_ptr<TimingWheel> wheel_;
};

// Binary min-heap with lazy cancellation: cancel bumps the timer's
// generation, arm bumps it and pushes; stale elements are dropped when they
// reach the top. Storage for 2n elements is reserved (re-arm leaves n stale).
class HeapPeer {
 public:
  static constexpr bool kExpires = true;
  explicit HeapPeer(size_t n) : n_(n), generation_(n, 0) {
    queue_.Reserve(2 * n);
  }

  void PrepareExpiry() {}

  size_t Schedule(const Workload& w) {
    for (uint32_t i = 0; i < n_; ++i) Push(i, w.delay[i]);
    return n_;
  }
  size_t ReArm(const Workload& w) {
    for (uint32_t i : w.rearm_order) Push(i, w.new_delay[i]);
    return n_;
  }
  size_t Cancel(const Workload& w) {
    for (uint32_t i : w.cancel_order) ++generation_[i];
    return n_;
  }
  uint64_t Expire(Tick horizon) {
    uint64_t expired = 0;
    while (!queue_.empty() && queue_.top().expires <= horizon) {
      const Tick t = queue_.top().expires;  // the next event
      while (!queue_.empty() && queue_.top().expires <= t) {
        const Element e = queue_.top();
        queue_.pop();
        if (e.generation == generation_[e.id]) ++expired;
      }
    }
    return expired;
  }
  bool Reset() {
    size_t live = 0;
    while (!queue_.empty()) {
      const Element e = queue_.top();
      queue_.pop();
      if (e.generation == generation_[e.id]) ++live;
    }
    return live == 0;
  }
  double BytesPerTimer() const {
    return static_cast<double>(queue_.capacity() * sizeof(Element) +
                               generation_.capacity() * sizeof(uint32_t)) /
           static_cast<double>(n_);
  }

 private:
  struct Element {
    Tick expires;
    uint32_t id;
    uint32_t generation;
  };
  struct Later {
    bool operator()(const Element& a, const Element& b) const {
      return a.expires > b.expires;
    }
  };
  class Queue
      : public std::priority_queue<Element, std::vector<Element>, Later> {
   public:
    void Reserve(size_t n) { c.reserve(n); }
    size_t capacity() const { return c.capacity(); }
  };

  void Push(uint32_t id, Tick expires) {
    queue_.push(Element{expires, id, ++generation_[id]});
  }

  const size_t n_;
  Queue queue_;
  std::vector<uint32_t> generation_;
};

// Ordered multimap with eager erase; each timer keeps its node's iterator.
class MultimapPeer {
 public:
  static constexpr bool kExpires = true;
  using Map = std::multimap<Tick, uint32_t>;
  explicit MultimapPeer(size_t n) : where_(n, map_.end()) {
    // Probe (untimed): heap bytes of n nodes.
    g_live_heap_bytes = 0;
    g_count_heap_bytes = true;
    for (uint32_t i = 0; i < n; ++i) where_[i] = map_.emplace(Tick{1}, i);
    g_count_heap_bytes = false;
    node_bytes_ = static_cast<double>(g_live_heap_bytes) /
                  static_cast<double>(n);
    map_.clear();
    std::fill(where_.begin(), where_.end(), map_.end());
  }

  void PrepareExpiry() {}
  size_t Schedule(const Workload& w) {
    for (uint32_t i = 0; i < where_.size(); ++i) {
      where_[i] = map_.emplace(w.delay[i], i);
    }
    return map_.size();
  }
  size_t ReArm(const Workload& w) {
    for (uint32_t i : w.rearm_order) {
      Map::node_type node = map_.extract(where_[i]);
      node.key() = w.new_delay[i];
      where_[i] = map_.insert(std::move(node));
    }
    return map_.size();
  }
  size_t Cancel(const Workload& w) {
    size_t ok = 0;
    for (uint32_t i : w.cancel_order) {
      if (where_[i] != map_.end()) {
        map_.erase(where_[i]);
        where_[i] = map_.end();
        ++ok;
      }
    }
    return ok;
  }
  uint64_t Expire(Tick horizon) {
    uint64_t expired = 0;
    while (!map_.empty() && map_.begin()->first <= horizon) {
      const Tick t = map_.begin()->first;  // the next event
      while (!map_.empty() && map_.begin()->first <= t) {
        where_[map_.begin()->second] = map_.end();
        map_.erase(map_.begin());
        ++expired;
      }
    }
    return expired;
  }
  bool Reset() {
    const bool was_empty = map_.empty();
    map_.clear();
    std::fill(where_.begin(), where_.end(), map_.end());
    return was_empty;
  }
  double BytesPerTimer() const { return node_bytes_ + sizeof(Map::iterator); }

 private:
  Map map_;
  std::vector<Map::iterator> where_;
  double node_bytes_ = 0;
};


// The manual clock at the instant of wheel tick `t` (2 ms ticks from 0).
void SetManualClockToTick(Tick t) {
  ManualClock::current = ManualClock::time_point(std::chrono::nanoseconds(
      static_cast<int64_t>(t) * absl::ToInt64Nanoseconds(kTimerResolution)));
}

// Boost.Asio: one basic_waitable_timer per timer on one io_context. For the
// expiry phase the io_context is polled at each distinct deadline of the
// workload (event to event, like the wheel), with the manual clock set to it.
class AsioPeer {
 public:
  static constexpr bool kExpires = true;
  explicit AsioPeer(size_t n) {
    timers_.reserve(n);
    for (size_t i = 0; i < n; ++i) timers_.emplace_back(io_);
    // Probe (untimed): heap bytes allocated per scheduled wait.
    g_live_heap_bytes = 0;
    g_count_heap_bytes = true;
    for (auto& t : timers_) {
      t.expires_after(std::chrono::milliseconds(1));
      t.async_wait(MakeHandler());
    }
    g_count_heap_bytes = false;
    wait_bytes_ = static_cast<double>(g_live_heap_bytes) /
                  static_cast<double>(n);
    for (auto& t : timers_) t.cancel();
    Reset();
  }
  ~AsioPeer() {
    for (auto& t : timers_) t.cancel();
    Drain();
  }

  void PrepareExpiry() {}
  size_t Schedule(const Workload& w) {
    workload_ = &w;
    for (size_t i = 0; i < timers_.size(); ++i) {
      timers_[i].expires_after(Ticks(w.delay[i]));
      timers_[i].async_wait(MakeHandler());
    }
    return timers_.size();
  }
  // expires_after cancels the pending wait (returns 1 if there was one).
  size_t ReArm(const Workload& w) {
    size_t pending = 0;
    for (uint32_t i : w.rearm_order) {
      pending += timers_[i].expires_after(Ticks(w.new_delay[i]));
      timers_[i].async_wait(MakeHandler());
    }
    return pending;
  }
  size_t Cancel(const Workload& w) {
    size_t cancelled = 0;
    for (uint32_t i : w.cancel_order) cancelled += timers_[i].cancel();
    return cancelled;
  }
  uint64_t Expire(Tick horizon) {
    const uint64_t before = counts_.fired;
    for (uint32_t t : workload_->distinct_delays) {
      if (t > horizon) break;
      SetManualClockToTick(t);
      if (io_.stopped()) io_.restart();
      io_.poll();
    }
    return counts_.fired - before;
  }
  // Runs what is left (the aborted handlers) and checks that every wait
  // started ended exactly once, fired or aborted.
  bool Reset() {
    Drain();
    const bool ok = counts_.started == counts_.fired + counts_.aborted;
    counts_ = Counts();
    SetManualClockToTick(0);
    return ok;
  }
  double BytesPerTimer() const {
    return sizeof(ManualAsioTimer) + wait_bytes_;
  }

 private:
  struct Counts {
    uint64_t started = 0;
    uint64_t fired = 0;
    uint64_t aborted = 0;
  };
  struct Handler {
    void operator()(const boost::system::error_code& ec) const {
      ++(ec ? counts->aborted : counts->fired);
    }
    Counts* counts;
  };
  Handler MakeHandler() {
    ++counts_.started;
    return Handler{&counts_};
  }
  static ManualClock::duration Ticks(uint32_t ticks) {
    return ManualClock::duration(int64_t{ticks} *
                                 absl::ToInt64Nanoseconds(kTimerResolution));
  }
  void Drain() {
    io_.restart();
    io_.run();  // returns at once: nothing is pending
  }

  boost::asio::io_context io_;
  std::vector<ManualAsioTimer> timers_;
  const Workload* workload_ = nullptr;
  Counts counts_;
  double wait_bytes_ = 0;
};

// libuv: one uv_timer_t per timer on one uv_loop_t. libuv computes every
// timeout from the loop's cached time (loop->time, in ms) and refreshes it
// from the real clock when the loop runs. For the expiry phase the cached
// time is set 60 s in the past before arming, so at the next uv_run every
// timer is due and one UV_RUN_NOWAIT pass expires them all, in heap order.
// (The peer runs through its heap in one pass rather than event to event;
// per expired timer that is the same pop-and-call work, minus the per-event
// loop overhead the wheel pays.)
class UvPeer {
 public:
  static constexpr bool kExpires = true;
  explicit UvPeer(size_t n) : timers_(n) {
    ok_ = uv_loop_init(&loop_) == 0;
    loop_.data = this;
    for (uv_timer_t& t : timers_) ok_ = ok_ && uv_timer_init(&loop_, &t) == 0;
  }
  ~UvPeer() {
    for (uv_timer_t& t : timers_) {
      uv_timer_stop(&t);
      uv_close(reinterpret_cast<uv_handle_t*>(&t), nullptr);
    }
    uv_run(&loop_, UV_RUN_DEFAULT);  // runs the closes, then returns
    uv_loop_close(&loop_);
  }

  size_t Schedule(const Workload& w) {
    size_t ok = 0;
    for (size_t i = 0; i < timers_.size(); ++i) {
      if (uv_timer_start(&timers_[i], &OnTimer, Ms(w.delay[i]), 0) == 0) ++ok;
    }
    return ok_ ? ok : 0;
  }
  // uv_timer_start on an active timer stops it first.
  size_t ReArm(const Workload& w) {
    size_t ok = 0;
    for (uint32_t i : w.rearm_order) {
      if (uv_timer_start(&timers_[i], &OnTimer, Ms(w.new_delay[i]), 0) == 0) {
        ++ok;
      }
    }
    return ok;
  }
  size_t Cancel(const Workload& w) {
    size_t ok = 0;
    for (uint32_t i : w.cancel_order) {
      if (uv_timer_stop(&timers_[i]) == 0) ++ok;
    }
    return ok;
  }
  void PrepareExpiry() {
    const uint64_t now_ms = uv_hrtime() / 1'000'000;
    const uint64_t horizon_ms =
        static_cast<uint64_t>(absl::ToInt64Milliseconds(kLongestDelay));
    loop_.time = now_ms - horizon_ms - 1;
  }
  uint64_t Expire(Tick) {
    const uint64_t before = fired_;
    uv_run(&loop_, UV_RUN_NOWAIT);
    return fired_ - before;
  }
  bool Reset() {
    size_t active = 0;
    for (uv_timer_t& t : timers_) {
      if (uv_is_active(reinterpret_cast<uv_handle_t*>(&t))) ++active;
    }
    return active == 0;
  }
  double BytesPerTimer() const {
    return sizeof(uv_timer_t) + static_cast<double>(sizeof(uv_loop_t)) /
                                    static_cast<double>(timers_.size());
  }

 private:
  static void OnTimer(uv_timer_t* t) {
    ++static_cast<UvPeer*>(t->loop->data)->fired_;
  }
  static uint64_t Ms(uint32_t ticks) {
    return uint64_t{ticks} * static_cast<uint64_t>(TickMs());
  }

  uv_loop_t loop_;
  std::vector<uv_timer_t> timers_;
  uint64_t fired_ = 0;
  bool ok_ = false;
};

// libevent: one evtimer_new event per timer on one event_base (never
// dispatched while timers are pending).
class EventPeer {
 public:
  static constexpr bool kExpires = false;
  explicit EventPeer(size_t n) : base_(event_base_new()) {
    events_.reserve(n);
    for (size_t i = 0; i < n && base_ != nullptr; ++i) {
      events_.push_back(evtimer_new(base_, &OnTimer, nullptr));
    }
    event_bytes_ = events_.empty() || events_[0] == nullptr
                       ? static_cast<double>(event_get_struct_event_size())
                       : static_cast<double>(malloc_usable_size(events_[0]));
  }
  ~EventPeer() {
    for (event* e : events_) {
      if (e != nullptr) event_free(e);  // deletes it if pending
    }
    if (base_ != nullptr) event_base_free(base_);
  }

  size_t Schedule(const Workload& w) {
    size_t ok = 0;
    for (size_t i = 0; i < events_.size(); ++i) {
      const timeval tv = Tv(w.delay[i]);
      if (evtimer_add(events_[i], &tv) == 0) ++ok;
    }
    return ok;
  }
  // evtimer_add on a pending event reschedules it.
  size_t ReArm(const Workload& w) {
    size_t ok = 0;
    for (uint32_t i : w.rearm_order) {
      const timeval tv = Tv(w.new_delay[i]);
      if (evtimer_add(events_[i], &tv) == 0) ++ok;
    }
    return ok;
  }
  size_t Cancel(const Workload& w) {
    size_t ok = 0;
    for (uint32_t i : w.cancel_order) {
      if (evtimer_del(events_[i]) == 0) ++ok;
    }
    return ok;
  }
  void PrepareExpiry() {}
  uint64_t Expire(Tick) { return 0; }
  bool Reset() {
    size_t pending = 0;
    for (event* e : events_) {
      if (evtimer_pending(e, nullptr)) ++pending;
    }
    return pending == 0;
  }
  double BytesPerTimer() const { return event_bytes_ + sizeof(event*); }

 private:
  static void OnTimer(evutil_socket_t, short, void*) {}
  static timeval Tv(uint32_t ticks) {
    const int64_t ms = int64_t{ticks} * TickMs();
    timeval tv;
    tv.tv_sec = static_cast<time_t>(ms / 1000);
    tv.tv_usec = static_cast<suseconds_t>((ms % 1000) * 1000);
    return tv;
  }

  event_base* base_;
  std::vector<event*> events_;
  double event_bytes_ = 0;
};

// --- Driver -----------------------------------------------------------------

enum Phase { kSchedule, kReArm, kCancel, kExpire, kNumPhases };
constexpr const char* kPhaseName[kNumPhases] = {"schedule", "re-arm",
                                                "cancel", "expire"};

struct Result {
  double ns_per_op[kNumPhases] = {-1, -1, -1, -1};  // -1: not measured
  double bytes_per_timer = -1;
};

struct Key {
  int peer;
  size_t n;
  bool operator<(const Key& o) const {
    return peer != o.peer ? peer < o.peer : n < o.n;
  }
};

constexpr const char* kPeerName[] = {"wheel (ours)", "priority_queue",
                                     "multimap",     "asio waitable_timer",
                                     "libuv",        "libevent"};

// Every run of every (peer, N): one per --benchmark_repetitions.
std::map<Key, std::vector<Result>>& Results() {
  static auto* const results = new std::map<Key, std::vector<Result>>;
  return *results;
}

template <typename Fn>
SteadyClock::duration Timed(Fn&& fn) {
  const SteadyClock::time_point start = SteadyClock::now();
  fn();
  return SteadyClock::now() - start;
}

double Ns(SteadyClock::duration d) {
  return std::chrono::duration<double, std::nano>(d).count();
}

template <typename Peer>
void RunPeer(benchmark::State& state, int peer_index) {
  const size_t n = static_cast<size_t>(state.range(0));
  const Workload& w = WorkloadFor(n);
  const Tick horizon = HorizonTicks();
  const size_t rounds = std::max<size_t>(1, kOpsPerPhase / n);
  Peer peer(n);
  SteadyClock::duration spent[kNumPhases] = {};
  uint64_t ops[kNumPhases] = {};

  for (auto _ : state) {
    SteadyClock::duration iteration{0};
    for (size_t r = 0; r < rounds; ++r) {
      size_t done[3] = {};
      SteadyClock::duration d[kNumPhases] = {};
      d[kSchedule] = Timed([&] { done[0] = peer.Schedule(w); });
      d[kReArm] = Timed([&] { done[1] = peer.ReArm(w); });
      d[kCancel] = Timed([&] { done[2] = peer.Cancel(w); });
      if (done[0] != n || done[1] != n || done[2] != n || !peer.Reset()) {
        state.SkipWithError("an operation did not take effect on every timer");
        return;
      }
      if (Peer::kExpires) {
        peer.PrepareExpiry();
        if (peer.Schedule(w) != n) {
          state.SkipWithError("arming for the expiry phase failed");
          return;
        }
        uint64_t expired = 0;
        d[kExpire] = Timed([&] { expired = peer.Expire(horizon); });
        if (expired != n || !peer.Reset()) {
          state.SkipWithError("expiry did not fire every timer exactly once");
          return;
        }
        ops[kExpire] += expired;
      }
      for (int p = 0; p < kNumPhases; ++p) {
        spent[p] += d[p];
        iteration += d[p];
      }
      ops[kSchedule] += n;
      ops[kReArm] += n;
      ops[kCancel] += n;
    }
    state.SetIterationTime(std::chrono::duration<double>(iteration).count());
  }

  Result result;
  for (int p = 0; p < kNumPhases; ++p) {
    if (ops[p] == 0) continue;
    result.ns_per_op[p] = Ns(spent[p]) / static_cast<double>(ops[p]);
    state.counters[std::string(kPhaseName[p]) + " ns/op"] =
        result.ns_per_op[p];
  }
  result.bytes_per_timer = peer.BytesPerTimer();
  state.counters["bytes/timer"] = result.bytes_per_timer;
  if (!Peer::kExpires) {
    state.SetLabel("expiry not measured: no way to move its clock");
  }
  Results()[Key{peer_index, n}].push_back(result);
}

void BM_Wheel(benchmark::State& s) { RunPeer<WheelPeer>(s, 0); }
void BM_PriorityQueue(benchmark::State& s) { RunPeer<HeapPeer>(s, 1); }
void BM_Multimap(benchmark::State& s) { RunPeer<MultimapPeer>(s, 2); }
void BM_Asio(benchmark::State& s) { RunPeer<AsioPeer>(s, 3); }
void BM_Libuv(benchmark::State& s) { RunPeer<UvPeer>(s, 4); }
void BM_Libevent(benchmark::State& s) { RunPeer<EventPeer>(s, 5); }

void Sizes(benchmark::internal::Benchmark* b) {
  for (int64_t n : {1'000, 100'000, 1'000'000}) b->Arg(n);
  b->Iterations(1)->UseManualTime()->Unit(benchmark::kMillisecond);
}

void RegisterAll() {
  Sizes(benchmark::RegisterBenchmark("BM_Wheel", BM_Wheel));
  Sizes(benchmark::RegisterBenchmark("BM_PriorityQueue", BM_PriorityQueue));
  Sizes(benchmark::RegisterBenchmark("BM_Multimap", BM_Multimap));
  Sizes(benchmark::RegisterBenchmark("BM_Asio", BM_Asio));
  Sizes(benchmark::RegisterBenchmark("BM_Libuv", BM_Libuv));
  Sizes(benchmark::RegisterBenchmark("BM_Libevent", BM_Libevent));
}

std::string Cell(double value, double ours) {
  char buf[64];
  if (value < 0) return "not measured";
  if (ours > 0) {
    std::snprintf(buf, sizeof(buf), "%.1f (%.2fx)", value, value / ours);
  } else {
    std::snprintf(buf, sizeof(buf), "%.1f", value);
  }
  return buf;
}

double Median(std::vector<double> v) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  const size_t mid = v.size() / 2;
  return v.size() % 2 == 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

// The median over repetitions, per phase; and the largest (max - min) /
// median over the phases, as a measure of how much the runs agreed.
struct Summary {
  Result median;
  double spread = 0;
  size_t runs = 0;
};

Summary Summarize(const std::vector<Result>& runs) {
  Summary s;
  s.runs = runs.size();
  for (int p = 0; p < kNumPhases; ++p) {
    std::vector<double> v;
    for (const Result& r : runs) {
      if (r.ns_per_op[p] >= 0) v.push_back(r.ns_per_op[p]);
    }
    s.median.ns_per_op[p] = Median(v);
    if (v.size() > 1 && s.median.ns_per_op[p] > 0) {
      const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
      s.spread = std::max(s.spread, (*hi - *lo) / s.median.ns_per_op[p]);
    }
  }
  s.median.bytes_per_timer = runs.empty() ? -1 : runs[0].bytes_per_timer;
  return s;
}

std::string Table() {
  std::map<Key, Summary> summaries;
  size_t runs = 0;
  for (const auto& [key, results] : Results()) {
    summaries[key] = Summarize(results);
    runs = std::max(runs, results.size());
  }
  if (summaries.empty()) return "";
  std::string out =
      "| peer | N | schedule | re-arm | cancel | expire | bytes/timer | "
      "spread |\n"
      "|---|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& [key, summary] : summaries) {
    auto ours_it = summaries.find(Key{0, key.n});
    const Result* ours =
        ours_it == summaries.end() ? nullptr : &ours_it->second.median;
    std::string row = "| " + std::string(kPeerName[key.peer]) + " | " +
                      std::to_string(key.n) + " |";
    for (int p = 0; p < kNumPhases; ++p) {
      row += " " +
             Cell(summary.median.ns_per_op[p],
                  ours == nullptr ? -1 : ours->ns_per_op[p]) +
             " |";
    }
    char tail[64];
    std::snprintf(tail, sizeof(tail), " %.1f | %.0f%% |\n",
                  summary.median.bytes_per_timer, 100 * summary.spread);
    out += row + tail;
  }
  char note[512];
  std::snprintf(
      note, sizeof(note),
      "\nns/op, median of %zu run(s); (ratio) = peer / ours at the same N; "
      "spread = largest (max - min) / median over the phases. libevent's "
      "expiry is not measured: its event base reads the monotonic clock "
      "and offers no way to move it, so 60 s of timers would take 60 s.\n",
      runs);
  return out + note;
}

}  // namespace
}  // namespace timer
}  // namespace cyber

int main(int argc, char** argv) {
  const std::string table_out = cyber::peers::TakeFlag("table_out", &argc, argv);
  cyber::timer::RegisterAll();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  const std::string table = cyber::timer::Table();
  return cyber::peers::EmitTable("Timer peers", table, table_out) ? 0 : 1;
}
