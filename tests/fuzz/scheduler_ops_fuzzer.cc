// scheduler_ops_fuzzer: sequences of scheduler operations on a small
// processor pool, with accounting of every routine.
//
// Why: the scheduler's promises are about what never happens -- a routine
// never runs twice, an accepted one is never lost, a refused one never runs,
// a sleeping one never wakes early, Shutdown() never hangs and leaves nothing
// behind -- and its bugs live in interleavings of parking, waking,
// cancelling and finishing on several processor threads. This fuzzer makes
// the operation sequence (and so most of those interleavings) an input.
//
// Each input sets up a Scheduler (1-3 processors, optionally a second
// "io" group with task names and priorities mapped to it, max_routines from
// 3 to 65536) whose SleepFor runs on a TimerSystem over a SimulatedClock, then
// runs a program of:
//   Dispatch / Async / CreateTask (valid and invalid names, priorities and
//   processor indices) of routines that return at once, yield, sleep on the
//   wheel, throw, dispatch a child, wait for data once, or loop for ever
//   waiting for data or sleeping; NotifyTask / RemoveTask; a burst of
//   Dispatch from a second thread while the processors run; a periodic Timer
//   whose callbacks run as routines (and may yield, sleep, throw or stop the
//   timer); advancing simulated time; draining (waiting, with time advancing
//   as needed, until everything that can finish has); Shutdown() at any
//   point, and more operations after it.
//
// Checked:
//   - every routine runs at most once; after a drain every accepted routine
//     that can finish has run exactly once, and removed ones have ended;
//   - a routine woken from SleepFor(d) sees at least d of simulated time;
//   - Dispatch/Async/CreateTask/NotifyTask/RemoveTask answer what the
//     accounting allows (refusal only when max_routines is or may be
//     reached, AlreadyExists only for a live name, NotFound only for a gone
//     one, InvalidArgument for bad names and processors, FailedPrecondition
//     and refusals after Shutdown());
//   - stats(): live routines and refusals as accounted (a timer's included);
//   - Shutdown() returns (libFuzzer's -timeout catches a hang; the drain has
//     its own bound), leaves no live routine, and every Async future holds
//     its value, the body's exception, or a broken promise for a routine
//     that never finished;
//   - the Timer's callbacks never overlap, and it never calls early.
//
// Not deterministic in thread interleaving (processors are real threads), but
// every check holds in every interleaving; a finding replays with high
// probability and its regression input runs under TSan too.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "cyber/time/simulated_clock.h"
#include "scheduler/croutine.h"
#include "scheduler/scheduler.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/quiet_logging.h"
#include "timer/timer_system.h"
#include "timer/timer.h"

namespace cyber {
namespace fuzz {
namespace {

using scheduler::CRoutine;
using scheduler::Scheduler;

constexpr absl::Duration kTick = timer::kTimerResolution;
constexpr int kMaxOps = 200;
// A drain (or a Stop() waiting for a sleeping callback) that has not
// finished after this much real time is a hang.
constexpr auto kHangLimit = std::chrono::seconds(20);
const char* const kNames[] = {"a", "b", "c", "d", ""};
constexpr int kNameCount = 5;

// What a routine body does.
enum class Kind {
  kReturn,     // returns at once
  kYield,      // yields 1-4 times
  kSleep,      // SleepFor 0-3 ticks
  kThrow,      // throws std::runtime_error
  kSpawn,      // dispatches a child (kReturn) from inside
  kWaitOnce,   // WaitForData once (parks for ever unless notified by name)
  kServe,      // loops for ever on WaitForData
  kSleepLoop,  // loops for ever on SleepFor(1 tick)
};
constexpr int kKinds = 8;

struct Record {
  Kind kind = Kind::kReturn;
  int arg = 0;
  std::string name;  // tasks only
  // Written by the routine.
  std::atomic<int> started{0};
  std::atomic<int> finished{0};  // the body reached its end (or its throw)
  std::atomic<int> ended{0};     // the body was left, by any way
  std::atomic<int> loops{0};
  std::shared_ptr<Record> child;  // kSpawn: set by the routine
  std::atomic<int> child_accepted{-1};
  // Main thread only.
  bool accepted = false;
  bool removed = false;
  bool notified = false;
  bool gone = false;  // confirmed ended and forgotten by the scheduler
  bool is_async = false;
  std::shared_future<int> future;

  // Parks for ever unless removed or shut down.
  bool Forever() const {
    return kind == Kind::kServe || kind == Kind::kSleepLoop ||
           (kind == Kind::kWaitOnce && !notified);
  }
  // Switches out somewhere (so cancellation can stop it half way).
  bool Suspends() const {
    return kind == Kind::kYield || kind == Kind::kSleep || kind == Kind::kWaitOnce ||
           kind == Kind::kServe || kind == Kind::kSleepLoop;
  }
};

// Sets `ended` however the body is left (return, throw, cancellation).
struct EndGuard {
  Record* r;
  ~EndGuard() { r->ended.store(1); }
};

class SchedulerFuzz {
 public:
  explicit SchedulerFuzz(FuzzInput& in);
  ~SchedulerFuzz();
  void Run(FuzzInput& in);

 private:
  std::function<void()> Body(std::shared_ptr<Record> r);
  std::shared_ptr<Record> NewRecord(FuzzInput& in);

  // Accounting.
  size_t DefinitelyLive() const;
  size_t PossiblyLive() const;
  // What Dispatch() may answer: 1 must accept, 0 must refuse, -1 either.
  int DispatchVerdict() const;
  int GroupSize(const std::string& name) const;
  std::shared_ptr<Record>* Task(const std::string& name);
  enum class NameState { kFree, kTaken, kUnknown };
  NameState StateOf(const std::string& name);

  void Dispatch(FuzzInput& in);
  void Async(FuzzInput& in);
  void CreateTask(FuzzInput& in);
  void NotifyTask(const std::string& name);
  void RemoveTask(const std::string& name);
  void SideThreadBurst(int n);
  void ScheduleTimer(FuzzInput& in);
  void StopTimer();
  void Advance(int ticks);
  void Drain();
  void ShutdownAndCheck();
  // Runs `blocking` on another thread while this one keeps simulated time
  // moving (a routine it waits for may be sleeping on the wheel).
  void WhileAdvancingTime(const std::function<void()>& blocking, const char* what);

  SimulatedClock clock_;
  bool io_group_ = false;
  int processors_ = 1;
  size_t max_routines_ = 0;
  std::unique_ptr<Scheduler> sched_;
  std::unique_ptr<timer::TimerSystem> driver_;
  bool shut_down_ = false;

  std::vector<std::shared_ptr<Record>> records_;
  // The record last created under each name (null if none).
  std::shared_ptr<Record> tasks_[kNameCount];
  uint64_t accepted_ = 0;  // Dispatch/Async accepted, by main and side threads
  uint64_t refused_ = 0;

  // The timer and what its callbacks saw.
  std::unique_ptr<Timer> timer_;
  Timer* timer_raw_ = nullptr;  // for its callbacks: timer_ may be resetting
  int timer_behaviour_ = 0;
  std::atomic<int> timer_in_callback_{0};
  std::atomic<uint64_t> timer_calls_{0};
  uint64_t timer_schedules_ = 0;  // since the last drain: bounds its routines
};

SchedulerFuzz::SchedulerFuzz(FuzzInput& in) : clock_(Instant() + absl::Hours(1)) {
  processors_ = 1 + static_cast<int>(in.Choice(3));
  const size_t limits[] = {3, 8, 64, size_t{1} << 16};
  max_routines_ = limits[in.Choice(4)];
  io_group_ = in.Bool();
  Scheduler::Options o;
  o.name = "fuzz";
  o.max_routines = max_routines_;
  o.stack_size = 64 << 10;
  o.config = scheduler::DefaultSchedulerConfig(processors_);
  if (io_group_) {
    scheduler::ProcessorGroupConfig io;
    io.name = "io";
    io.processor_num = 1;
    io.task_priorities = {{"c", 3}, {"d", 15}};
    o.config.groups.push_back(io);
    o.config.task_groups = {{"c", "io"}, {"d", "io"}};
  }
  sched_ = std::make_unique<Scheduler>(std::move(o));
  timer::TimerSystem::Options d;
  d.name = "fuzz-tick";
  driver_ = std::make_unique<timer::TimerSystem>(&clock_, sched_.get(), d);
  sched_->SetTimerSystem(driver_.get());
}

SchedulerFuzz::~SchedulerFuzz() {
  if (timer_ != nullptr) {
    WhileAdvancingTime([this] { timer_.reset(); }, "destroying the timer");
  }
  if (!shut_down_) ShutdownAndCheck();
  driver_->Shutdown();
  sched_.reset();
  driver_.reset();
}

std::function<void()> SchedulerFuzz::Body(std::shared_ptr<Record> r) {
  Scheduler* const sched = sched_.get();
  SimulatedClock* const clock = &clock_;
  return [r, sched, clock] {
    EndGuard guard{r.get()};
    FUZZ_CHECK(r->started.fetch_add(1) == 0) << "a routine ran twice";
    FUZZ_CHECK(CRoutine::Current() != nullptr) << "a routine body outside a routine";
    switch (r->kind) {
      case Kind::kReturn:
        break;
      case Kind::kYield:
        for (int i = 0; i <= r->arg % 4; ++i) CRoutine::Yield();
        break;
      case Kind::kSleep: {
        const absl::Duration d = kTick * (r->arg % 4);
        const Instant before = clock->Now();
        CRoutine::SleepFor(d);
        const Instant after = clock->Now();
        FUZZ_CHECK(after >= before + d) << "SleepFor(" << absl::FormatDuration(d)
                                        << ") from " << before << " woke at " << after;
        break;
      }
      case Kind::kThrow:
        r->finished.store(1);
        throw std::runtime_error("fuzz: routine throws");
      case Kind::kSpawn: {
        auto child = std::make_shared<Record>();
        child->kind = Kind::kReturn;
        r->child = child;  // read by the main thread after child_accepted
        const bool accepted = sched->Dispatch([child] {
          EndGuard g{child.get()};
          FUZZ_CHECK(child->started.fetch_add(1) == 0) << "a child routine ran twice";
          child->finished.store(1);
        });
        r->child_accepted.store(accepted ? 1 : 0);
        break;
      }
      case Kind::kWaitOnce:
        CRoutine::WaitForData();
        break;
      case Kind::kServe:
        while (true) {
          CRoutine::WaitForData();
          r->loops.fetch_add(1);
        }
      case Kind::kSleepLoop:
        while (true) {
          CRoutine::SleepFor(kTick);
          r->loops.fetch_add(1);
        }
    }
    r->finished.store(1);
  };
}

std::shared_ptr<Record> SchedulerFuzz::NewRecord(FuzzInput& in) {
  auto r = std::make_shared<Record>();
  const uint8_t b = in.Byte();
  r->kind = static_cast<Kind>(b % kKinds);
  r->arg = b / kKinds;
  records_.push_back(r);
  return r;
}

size_t SchedulerFuzz::DefinitelyLive() const {
  size_t n = 0;
  for (const auto& r : records_) {
    if (r->accepted && !r->removed && r->Forever()) ++n;
  }
  return n;
}

size_t SchedulerFuzz::PossiblyLive() const {
  size_t n = 0;
  for (const auto& r : records_) {
    if (!r->accepted || r->gone) continue;
    ++n;
    if (r->kind == Kind::kSpawn) ++n;  // its child
  }
  if (timer_ != nullptr) n += timer_schedules_ + 1;
  return n;
}

int SchedulerFuzz::DispatchVerdict() const {
  if (shut_down_) return 0;
  if (PossiblyLive() < max_routines_) return 1;
  if (DefinitelyLive() >= max_routines_) return 0;
  return -1;
}

int SchedulerFuzz::GroupSize(const std::string& name) const {
  return io_group_ && (name == "c" || name == "d") ? 1 : processors_;
}

std::shared_ptr<Record>* SchedulerFuzz::Task(const std::string& name) {
  for (int i = 0; i < kNameCount; ++i) {
    if (name == kNames[i]) return &tasks_[i];
  }
  return nullptr;
}

SchedulerFuzz::NameState SchedulerFuzz::StateOf(const std::string& name) {
  const std::shared_ptr<Record>& r = *Task(name);
  if (shut_down_ || r == nullptr || r->removed || r->gone) return NameState::kFree;
  if (r->Forever()) return NameState::kTaken;
  return NameState::kUnknown;  // may have finished by now
}

void SchedulerFuzz::Dispatch(FuzzInput& in) {
  std::shared_ptr<Record> r = NewRecord(in);
  const int verdict = DispatchVerdict();
  r->accepted = sched_->Dispatch(Body(r));
  FUZZ_CHECK(verdict < 0 || r->accepted == (verdict == 1))
      << "Dispatch " << (r->accepted ? "accepted" : "refused") << " with "
      << DefinitelyLive() << ".." << PossiblyLive() << " live of max " << max_routines_
      << (shut_down_ ? " after Shutdown()" : "");
  ++(r->accepted ? accepted_ : refused_);
}

void SchedulerFuzz::Async(FuzzInput& in) {
  std::shared_ptr<Record> r = NewRecord(in);
  r->is_async = true;
  const int verdict = DispatchVerdict();
  std::function<void()> body = Body(r);
  r->future = sched_
                  ->Async([body] {
                    body();
                    return 42;
                  })
                  .share();
  // A refused Async returns a future that already holds the refusal; an
  // accepted one may be ready too (it ran), with a value or the body's error.
  r->accepted = true;
  if (r->future.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
    try {
      r->future.get();
    } catch (const std::runtime_error& e) {
      r->accepted = std::string(e.what()).find("refused") == std::string::npos;
    } catch (...) {
    }
  }
  FUZZ_CHECK(verdict < 0 || r->accepted == (verdict == 1))
      << "Async " << (r->accepted ? "accepted" : "refused") << " with "
      << DefinitelyLive() << ".." << PossiblyLive() << " live of max " << max_routines_
      << (shut_down_ ? " after Shutdown()" : "");
  ++(r->accepted ? accepted_ : refused_);
}

void SchedulerFuzz::CreateTask(FuzzInput& in) {
  const std::string name = kNames[in.Choice(kNameCount)];
  const int priority = static_cast<int>(in.Int(-1, 25));
  const int processor = static_cast<int>(in.Int(-2, 3));
  const bool null_body = in.Choice(16) == 0;
  std::shared_ptr<Record> r = NewRecord(in);
  r->name = name;
  // The documented order of checks.
  absl::StatusCode want = absl::StatusCode::kOk;
  bool either_duplicate = false;
  int verdict = 1;
  if (name.empty() || null_body || processor >= GroupSize(name)) {
    want = absl::StatusCode::kInvalidArgument;
  } else {
    const NameState state = StateOf(name);
    if (state == NameState::kTaken) {
      want = absl::StatusCode::kAlreadyExists;
    } else {
      either_duplicate = state == NameState::kUnknown;
      if (shut_down_) {
        want = absl::StatusCode::kFailedPrecondition;
      } else {
        verdict = DispatchVerdict();
        if (verdict == 0) want = absl::StatusCode::kResourceExhausted;
      }
    }
  }
  const absl::Status status = sched_->CreateTask(
      name, null_body ? std::function<void()>() : Body(r), priority, processor);
  const bool allowed =
      status.code() == want ||
      (either_duplicate && status.code() == absl::StatusCode::kAlreadyExists) ||
      (verdict < 0 && status.code() == absl::StatusCode::kResourceExhausted &&
       want == absl::StatusCode::kOk);
  FUZZ_CHECK(allowed) << "CreateTask(\"" << name << "\", priority " << priority
                      << ", processor " << processor << (null_body ? ", no body" : "")
                      << "): " << status << ", expected "
                      << absl::StatusCodeToString(want)
                      << (either_duplicate ? " or ALREADY_EXISTS" : "");
  FUZZ_CHECK(status.ok() || status.message().find("scheduler \"fuzz\"") != std::string::npos)
      << "the error does not name the scheduler: " << status;
  r->accepted = status.ok();
  if (r->accepted) *Task(name) = r;
}

void SchedulerFuzz::NotifyTask(const std::string& name) {
  const NameState state = StateOf(name);
  const absl::Status status = sched_->NotifyTask(name);
  FUZZ_CHECK(state == NameState::kUnknown ||
             status.code() == (state == NameState::kTaken ? absl::StatusCode::kOk
                                                           : absl::StatusCode::kNotFound))
      << "NotifyTask(\"" << name << "\"): " << status;
  if (status.ok()) (*Task(name))->notified = true;
}

void SchedulerFuzz::RemoveTask(const std::string& name) {
  const NameState state = StateOf(name);
  const absl::Status status = sched_->RemoveTask(name);
  FUZZ_CHECK(state == NameState::kUnknown ||
             status.code() == (state == NameState::kTaken ? absl::StatusCode::kOk
                                                           : absl::StatusCode::kNotFound))
      << "RemoveTask(\"" << name << "\"): " << status;
  if (status.ok()) (*Task(name))->removed = true;
}

void SchedulerFuzz::SideThreadBurst(int n) {
  std::vector<std::shared_ptr<Record>> burst(n);
  for (auto& r : burst) {
    r = std::make_shared<Record>();
    records_.push_back(r);
  }
  std::vector<int> accepted(n, 0);
  std::vector<std::function<void()>> bodies;
  for (auto& r : burst) bodies.push_back(Body(r));
  std::thread side([&] {
    for (int i = 0; i < n; ++i) accepted[i] = sched_->Dispatch(bodies[i]) ? 1 : 0;
  });
  side.join();
  for (int i = 0; i < n; ++i) {
    burst[i]->accepted = accepted[i] != 0;
    ++(burst[i]->accepted ? accepted_ : refused_);
    if (shut_down_) FUZZ_CHECK(!burst[i]->accepted) << "Dispatch accepted after Shutdown()";
  }
}

void SchedulerFuzz::ScheduleTimer(FuzzInput& in) {
  const int64_t period_ticks = static_cast<int64_t>(in.Uint(1, 5));
  const int behaviour = static_cast<int>(in.Choice(5));
  if (timer_ == nullptr) {
    timer_behaviour_ = behaviour;
    TimerOptions o;
    o.name = "fuzz_timer";
    o.period = kTick * period_ticks;
    o.event_callback = [this](const TimerEvent& e) {
      FUZZ_CHECK(timer_in_callback_.exchange(1) == 0) << "timer callbacks overlap";
      FUZZ_CHECK(e.actual_time >= e.expected_time) << "timer called early";
      timer_calls_.fetch_add(1);
      struct Leave {
        std::atomic<int>* flag;
        ~Leave() { flag->store(0); }
      } leave{&timer_in_callback_};
      switch (timer_behaviour_) {
        case 1:
          CRoutine::Yield();
          break;
        case 2:
          CRoutine::SleepFor(kTick);
          break;
        case 3:
          if (timer_calls_.load() % 3 == 0) timer_raw_->Stop();  // from its own callback
          break;
        case 4:
          if (timer_calls_.load() % 2 == 0) throw std::runtime_error("fuzz: timer throws");
          break;
        default:
          break;
      }
    };
    timer_ = std::make_unique<Timer>(o, driver_.get());
    timer_raw_ = timer_.get();
  }
  ++timer_schedules_;
  const absl::Status s = timer_->Schedule();
  FUZZ_CHECK(s.ok()) << "Schedule(): " << s;
}

void SchedulerFuzz::WhileAdvancingTime(const std::function<void()>& blocking,
                                       const char* what) {
  std::atomic<bool> done{false};
  std::thread t([&] {
    blocking();
    done.store(true);
  });
  const auto limit = std::chrono::steady_clock::now() + kHangLimit;
  while (!done.load()) {
    FUZZ_CHECK(std::chrono::steady_clock::now() < limit) << "hang: " << what;
    driver_->AwaitIdle();
    const Instant next = driver_->PlannedWake();
    if (next != Instant::InfiniteFuture() && !driver_->is_shut_down()) {
      clock_.AdvanceTo(std::max(next, clock_.Now()));
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
  t.join();
}

void SchedulerFuzz::StopTimer() {
  if (timer_ == nullptr) return;
  // Stop() waits for a callback in progress, which may be asleep on the
  // simulated wheel: keep time moving meanwhile.
  WhileAdvancingTime([this] { timer_->Stop(); }, "Timer::Stop()");
  const TimerStatistics st = timer_->GetStatistics();
  FUZZ_CHECK(st.early_fires == 0) << "timer: " << st.early_fires << " early calls";
  FUZZ_CHECK(st.fires == timer_calls_.load())
      << "timer: statistics say " << st.fires << " calls, callbacks saw "
      << timer_calls_.load();
}

void SchedulerFuzz::Advance(int ticks) {
  const Instant target = clock_.Now() + kTick * ticks;
  while (true) {
    driver_->AwaitIdle();
    const Instant next = driver_->PlannedWake();
    if (next > target || driver_->is_shut_down()) break;
    clock_.AdvanceTo(std::max(next, clock_.Now()));
  }
  if (target > clock_.Now()) clock_.AdvanceTo(target);
}

void SchedulerFuzz::Drain() {
  if (shut_down_) return;
  StopTimer();
  // Children are known once their parent has run.
  auto settled = [this] {
    for (const auto& r : records_) {
      if (!r->accepted || r->gone) continue;
      if (r->removed) {
        if (r->ended.load() != r->started.load()) return false;
        continue;
      }
      if (r->Forever()) continue;
      if (r->finished.load() != 1) return false;
      if (r->kind == Kind::kSpawn) {
        const int child = r->child_accepted.load();
        if (child < 0) return false;
        if (child == 1 && r->child->finished.load() != 1) return false;
      }
    }
    return sched_->stats().live == DefinitelyLive();
  };
  const auto limit = std::chrono::steady_clock::now() + kHangLimit;
  while (!settled()) {
    if (std::chrono::steady_clock::now() > limit) {
      const Scheduler::Stats st = sched_->stats();
      FUZZ_CHECK(false) << "hang: drain: " << st.live << " live routines, "
                        << DefinitelyLive() << " expected (parked for ever)";
    }
    driver_->AwaitIdle();
    const Instant next = driver_->PlannedWake();
    if (next != Instant::InfiniteFuture()) {
      clock_.AdvanceTo(std::max(next, clock_.Now()));
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
  // Settled: everything that could end has, and the scheduler forgot it.
  // The tick thread may still be finishing an expiry of the timer that it
  // began before Stop() (Stop() waits for a running callback, not for that):
  // a refusal it met is counted by the scheduler at once and by the timer a
  // moment later. With time standing still, once idle it stays idle.
  driver_->AwaitIdle();
  uint64_t children_accepted = 0;
  uint64_t children_refused = 0;
  for (const auto& r : records_) {
    FUZZ_CHECK(r->started.load() <= 1) << "a routine ran twice";
    if (!r->accepted) {
      FUZZ_CHECK(r->started.load() == 0) << "a refused routine ran";
      continue;
    }
    if (!r->removed && !r->Forever()) {
      FUZZ_CHECK(r->started.load() == 1) << "an accepted routine never ran";
    }
    if (r->removed || !r->Forever()) r->gone = true;
    if (r->kind == Kind::kSpawn && r->child_accepted.load() >= 0) {
      ++(r->child_accepted.load() == 1 ? children_accepted : children_refused);
    }
  }
  const Scheduler::Stats st = sched_->stats();
  const uint64_t timer_refusals =
      timer_ != nullptr ? timer_->GetStatistics().dispatch_refusals : 0;
  FUZZ_CHECK(st.refused == refused_ + children_refused + timer_refusals)
      << "stats().refused " << st.refused << ", accounted " << refused_ << " + "
      << children_refused << " children + " << timer_refusals << " timer";
  FUZZ_CHECK(st.dispatched >= accepted_ + children_accepted + timer_calls_.load())
      << "stats().dispatched " << st.dispatched << ", accounted at least " << accepted_
      << " + " << children_accepted << " children + " << timer_calls_.load() << " timer";
  timer_schedules_ = 0;
}

void SchedulerFuzz::ShutdownAndCheck() {
  if (timer_ != nullptr && !shut_down_) StopTimer();
  sched_->Shutdown();  // must return: libFuzzer's -timeout is the bound
  shut_down_ = true;
  const Scheduler::Stats st = sched_->stats();
  FUZZ_CHECK(st.live == 0) << "Shutdown() left " << st.live << " live routines";
  for (const auto& r : records_) {
    FUZZ_CHECK(r->started.load() <= 1) << "a routine ran twice";
    FUZZ_CHECK(r->ended.load() == r->started.load())
        << "a routine started but was never left (kind " << static_cast<int>(r->kind)
        << ")";
    if (!r->accepted) FUZZ_CHECK(r->started.load() == 0) << "a refused routine ran";
    if (r->started.load() == 1 && !r->Suspends()) {
      FUZZ_CHECK(r->finished.load() == 1) << "a routine without suspension points "
                                             "was stopped half way";
    }
    if (!r->is_async) continue;
    try {
      FUZZ_CHECK(r->future.get() == 42) << "Async returned the wrong value";
      FUZZ_CHECK(r->finished.load() == 1) << "Async delivered a value it never computed";
    } catch (const std::future_error& e) {
      FUZZ_CHECK(e.code() == std::future_errc::broken_promise) << e.what();
      FUZZ_CHECK(r->accepted && r->finished.load() == 0)
          << "broken promise for a routine that finished";
    } catch (const std::runtime_error& e) {
      const std::string what = e.what();
      if (what == "fuzz: routine throws") {
        FUZZ_CHECK(r->kind == Kind::kThrow && r->started.load() == 1) << what;
      } else {
        FUZZ_CHECK(!r->accepted && what.find("refused") != std::string::npos) << what;
      }
    }
    r->is_async = false;  // its future is consumed
  }
}

void SchedulerFuzz::Run(FuzzInput& in) {
  for (int ops = 0; ops < kMaxOps && !in.empty(); ++ops) {
    switch (in.Choice(14)) {
      case 0:
      case 1:
        Dispatch(in);
        break;
      case 2:
        Async(in);
        break;
      case 3:
      case 4:
        CreateTask(in);
        break;
      case 5:
        NotifyTask(kNames[in.Choice(kNameCount)]);
        break;
      case 6:
        RemoveTask(kNames[in.Choice(kNameCount)]);
        break;
      case 7:
        Advance(static_cast<int>(in.Uint(0, 8)));
        break;
      case 8:
        Drain();
        break;
      case 9:
        if (in.Choice(4) == 0 && !shut_down_) ShutdownAndCheck();
        break;
      case 10:
        SideThreadBurst(static_cast<int>(in.Uint(1, 32)));
        break;
      case 11:
        if (!shut_down_) ScheduleTimer(in);
        break;
      case 12:
        if (!shut_down_) StopTimer();
        break;
      default:
        std::this_thread::yield();  // let the processors move on
        break;
    }
  }
  Drain();
  if (Verbose()) {
    const Scheduler::Stats st = sched_->stats();
    std::fprintf(stderr,
                 "scheduler_ops: %zu records, %llu accepted, %llu refused; stats: "
                 "dispatched %llu refused %llu finished %llu live %zu; timer calls %llu\n",
                 records_.size(), static_cast<unsigned long long>(accepted_),
                 static_cast<unsigned long long>(refused_),
                 static_cast<unsigned long long>(st.dispatched),
                 static_cast<unsigned long long>(st.refused),
                 static_cast<unsigned long long>(st.finished), st.live,
                 static_cast<unsigned long long>(timer_calls_.load()));
  }
}

}  // namespace
}  // namespace fuzz
}  // namespace cyber

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  cyber::fuzz::QuietLogging();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  cyber::fuzz::FuzzInput in(data, size);
  cyber::fuzz::SchedulerFuzz fuzz(in);
  fuzz.Run(in);
  return 0;
}
