// SimulatedGraph: everything time-based in a graph follows its simulated
// clock (exact counts over 10 simulated seconds that a real-clock path could
// not produce in the few milliseconds the run takes), two runs give the same
// trace, faults are injected at exact instants, and a graph whose calls are
// suspended stops.

#include "cyber/simulation/simulated_graph.h"

#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "cyber/component/component.h"
#include "cyber/component/component_registry.h"
#include "cyber/component/timer_component.h"
#include "cyber/task/task.h"
#include "cyber/time/rate.h"
#include "cyber/time/time.h"
#include "gtest/gtest.h"
#include "scheduler/croutine.h"
#include "scheduler/default_scheduler.h"
#include "scheduler/scheduler_factory.h"
#include "timer/timer.h"

namespace cyber {
namespace {

// Simulated time as component code sees it (Time::Now()), since the first
// reading of the run.
struct Stamp {
  int64_t ns = 0;
};

// Publishes Time::Now() every interval.
class SimTicker : public TimerComponent {
 public:
  bool Init() override {
    writer_ = node_->CreateWriter<Stamp>("/sim/tick");
    return writer_ != nullptr;
  }
  bool Proc() override {
    Stamp s;
    s.ns = Time::Now().ToNanosecond();
    return writer_->Write(s);
  }

 private:
  std::shared_ptr<Writer<Stamp>> writer_;
};
CYBER_REGISTER_COMPONENT(SimTicker)

// Per-run observations, read by the tests (one graph at a time).
struct Observed {
  std::vector<int64_t> plain_timer_ns;   // Time::Now() in a plain Timer's calls
  std::vector<int64_t> sleep_error_ns;   // (now after SleepFor(4ms)) - stamp - 4ms
  std::vector<int64_t> rate_wake_ns;     // Time::Now() after each Rate::Sleep
  std::vector<int64_t> tick_stamps_ns;   // stamps as delivered
  std::vector<int64_t> async_ns;         // Time::Now() in cyber::Async work
  bool task_removed = false;             // Clear() removed its task
};
Observed* g_observed = nullptr;

// Makes its own Timer with Cyber RT's plain constructor in Init() and starts
// a task that loops on a Rate: both must follow the graph's clock.
class PlainTimerOwner : public TimerComponent {
 public:
  bool Init() override {
    timer_ = std::make_unique<Timer>(
        100, [] { g_observed->plain_timer_ns.push_back(Time::Now().ToNanosecond()); },
        false);
    timer_->Start();
    // Cyber RT's spelling, which names no scheduler: the graph's.
    const bool created = scheduler::Instance()->CreateTask(
        [] {
          Rate rate(50.0);  // 20 ms
          while (true) {
            rate.Sleep();
            g_observed->rate_wake_ns.push_back(Time::Now().ToNanosecond());
          }
        },
        name() + "_rate");
    return created && timer_->IsRunning();
  }
  bool Proc() override {
    // cyber::Async from graph code runs on the graph's scheduler.
    Async([] { g_observed->async_ns.push_back(Time::Now().ToNanosecond()); });
    return true;
  }
  void Clear() override {
    timer_->Stop();
    // Clear() is graph code too: the task is found on the graph's scheduler.
    g_observed->task_removed = scheduler::Instance()->RemoveTask(name() + "_rate");
  }

 private:
  std::unique_ptr<Timer> timer_;
};
CYBER_REGISTER_COMPONENT(PlainTimerOwner)

// Reads the ticks, sleeps 4 ms (two ticks) in its Proc (a suspended
// routine).
class SleepyReader : public Component<Stamp> {
 public:
  bool Init() override { return true; }
  bool Proc(const std::shared_ptr<Stamp>& s) override {
    g_observed->tick_stamps_ns.push_back(s->ns);
    scheduler::CRoutine::SleepFor(absl::Milliseconds(4));
    g_observed->sleep_error_ns.push_back(Time::Now().ToNanosecond() - s->ns -
                                         absl::ToInt64Nanoseconds(absl::Milliseconds(4)));
    return true;
  }
};
CYBER_REGISTER_COMPONENT(SleepyReader)

// Sleeps 200 ms in every Proc: a stop must still finish.
class SlowTicker : public TimerComponent {
 public:
  bool Init() override { return true; }
  bool Proc() override {
    scheduler::CRoutine::SleepFor(absl::Milliseconds(200));
    return true;
  }
};
CYBER_REGISTER_COMPONENT(SlowTicker)

// Loops on Yield() until a flag its Proc... never sets: the simulation must
// still move on.
std::atomic<int> g_yield_turns{0};
class YieldLooper : public TimerComponent {
 public:
  bool Init() override {
    return node_->scheduler()
        ->CreateTask(name() + "_spin",
                     [] {
                       while (true) {
                         ++g_yield_turns;
                         cyber::Yield();
                       }
                     })
        .ok();
  }
  bool Proc() override { return true; }
  void Clear() override { node_->scheduler()->RemoveTask(name() + "_spin").IgnoreError(); }
};
CYBER_REGISTER_COMPONENT(YieldLooper)

// Sleeps in Init(), on the driving thread: refused, not a hang.
class SleepsInInit : public TimerComponent {
 public:
  bool Init() override {
    cyber::SleepFor(absl::Milliseconds(50));
    return true;
  }
  bool Proc() override { return true; }
};
CYBER_REGISTER_COMPONENT(SleepsInInit)

// Records what is written to /sim/in.
std::vector<std::pair<int64_t, int64_t>>* g_inputs = nullptr;  // (stamp, now)
class InputSink : public Component<Stamp> {
 public:
  bool Init() override { return true; }
  bool Proc(const std::shared_ptr<Stamp>& s) override {
    g_inputs->emplace_back(s->ns, Time::Now().ToNanosecond());
    return true;
  }
};
CYBER_REGISTER_COMPONENT(InputSink)

// Logs "proc@<ms since the graph's start>" in every Proc (g_log_start is
// the graph's start instant as Time::Now() reads it).
std::vector<std::string>* g_log = nullptr;
int64_t g_log_start_ns = 0;
class LoggingTicker : public TimerComponent {
 public:
  bool Init() override { return true; }
  bool Proc() override {
    const int64_t ms = (Time::Now().ToNanosecond() - g_log_start_ns) / 1000000;
    g_log->push_back("proc@" + std::to_string(ms));
    return true;
  }
};
CYBER_REGISTER_COMPONENT(LoggingTicker)

std::string WriteFile(const std::string& name, const std::string& text) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
  std::ofstream(path) << text;
  return path;
}

// A graph file of one timer component.
std::string TimerGraph(const std::string& file, const std::string& class_name,
                       const std::string& name, int interval_ms) {
  return WriteFile(file, "module_config { timer_components { class_name: \"" + class_name +
                             "\" config { name: \"" + name +
                             "\" interval: " + std::to_string(interval_ms) + " } } }\n");
}

constexpr char kGraph[] = R"(
module_config {
  timer_components { class_name: "SimTicker" config { name: "ticker" interval: 10 } }
  timer_components { class_name: "PlainTimerOwner" config { name: "owner" interval: 1000 } }
  components {
    class_name: "SleepyReader"
    config { name: "sleepy" readers { channel: "/sim/tick" pending_queue_size: 8 } }
  }
}
)";

class SimulatedGraphTest : public testing::Test {
 protected:
  void SetUp() override { g_observed = &observed_; }
  void TearDown() override { g_observed = nullptr; }
  Observed observed_;
};

TEST_F(SimulatedGraphTest, EverythingTimeBasedFollowsTheGraphsClock) {
  SimulatedGraph graph;
  const std::string dag = WriteFile("graph.dag", kGraph);
  ASSERT_TRUE(graph.Launch({dag}).ok());
  auto tap = graph.Tap<Stamp>("/sim/tick");
  ASSERT_TRUE(tap.ok()) << tap.status();
  const int64_t t0 = absl::ToInt64Nanoseconds(graph.Now().SinceEpoch());
  graph.RunFor(absl::Seconds(10));
  EXPECT_EQ(graph.Elapsed(), absl::Seconds(10));

  // TimerComponent interval: 10 ms, the first call one interval after start.
  ASSERT_EQ(graph.StatsOf("ticker")->procs, 1000u);
  // Time::Now() is the graph's clock, to the nanosecond, in every call.
  ASSERT_EQ(observed_.tick_stamps_ns.size(), 1000u);
  for (size_t i = 0; i < observed_.tick_stamps_ns.size(); ++i) {
    ASSERT_EQ(observed_.tick_stamps_ns[i] - t0,
              absl::ToInt64Nanoseconds(absl::Milliseconds(10) * static_cast<int64_t>(i + 1)))
        << "tick " << i;
  }
  // Reader delivery and CRoutine::SleepFor: each delivered message slept
  // exactly 4 simulated ms (the call at 10 s has not woken yet). (A sleep
  // that is not a whole number of ticks ends on the tick after it: never
  // early.)
  EXPECT_EQ(observed_.sleep_error_ns.size(), 999u);
  for (int64_t e : observed_.sleep_error_ns) ASSERT_EQ(e, 0);
  // The tap sees every tick at the instant it was written.
  ASSERT_EQ((*tap)->size(), 1000u);
  EXPECT_EQ((*tap)->received()[0].at, absl::Milliseconds(10));
  // A Timer made with the plain Cyber constructor in Init(): 100 ms.
  ASSERT_EQ(observed_.plain_timer_ns.size(), 100u);
  EXPECT_EQ(observed_.plain_timer_ns.front() - t0,
            absl::ToInt64Nanoseconds(absl::Milliseconds(100)));
  EXPECT_EQ(observed_.plain_timer_ns.back() - t0,
            absl::ToInt64Nanoseconds(absl::Seconds(10)));
  // cyber::Async from the 1 s Proc: on the graph, at the call's instant.
  ASSERT_EQ(observed_.async_ns.size(), 10u);
  EXPECT_EQ(observed_.async_ns.back() - t0, absl::ToInt64Nanoseconds(absl::Seconds(10)));
  // Rate(50 Hz) in a task made with scheduler::Instance()->CreateTask.
  ASSERT_EQ(observed_.rate_wake_ns.size(), 500u);
  EXPECT_EQ(observed_.rate_wake_ns.back() - t0,
            absl::ToInt64Nanoseconds(absl::Seconds(10)));
  graph.Stop();
  EXPECT_TRUE(observed_.task_removed);
}

TEST_F(SimulatedGraphTest, TwoRunsProduceTheSameTrace) {
  std::vector<ProcEvent> traces[2];
  const std::string dag = WriteFile("graph.dag", kGraph);
  for (auto& trace : traces) {
    Observed observed;
    g_observed = &observed;
    SimulatedGraph graph;
    ASSERT_TRUE(graph.Launch({dag}).ok());
    graph.RunFor(absl::Seconds(5));
    trace = graph.Trace();  // the run; Stop() is not part of it
    graph.Stop();
  }
  g_observed = &observed_;
  ASSERT_GT(traces[0].size(), 1000u);
  ASSERT_EQ(traces[0].size(), traces[1].size());
  for (size_t i = 0; i < traces[0].size(); ++i) {
    ASSERT_EQ(traces[0][i], traces[1][i])
        << "event " << i << ": " << traces[0][i].component << " at "
        << traces[0][i].at << " vs " << traces[1][i].component << " at "
        << traces[1][i].at;
  }
}

TEST_F(SimulatedGraphTest, FaultsAreInjectedAtExactInstants) {
  SimulatedGraph graph;
  ASSERT_TRUE(graph.Launch({WriteFile("graph.dag", kGraph)}).ok());
  // The action runs as a routine of the graph; the stop it makes waits
  // for nothing (the ticker's calls are all done by then).
  absl::Status stopped = absl::UnknownError("not run");
  ASSERT_TRUE(graph.After(absl::Milliseconds(505), [&] {
                     stopped = graph.launcher().StopComponent("ticker");
                   }).ok());
  graph.RunFor(absl::Seconds(2));
  EXPECT_TRUE(stopped.ok()) << stopped;
  // Stopped at 505 ms (on the 506 ms tick, never early): 50 calls, not 200.
  EXPECT_EQ(graph.StatsOf("ticker")->procs, 50u);
  EXPECT_EQ(graph.StopComponent("nope").code(), absl::StatusCode::kNotFound);
}

TEST_F(SimulatedGraphTest, RunUntilStopsWhenThePredicateHolds) {
  SimulatedGraph graph;
  ASSERT_TRUE(graph.Launch({WriteFile("graph.dag", kGraph)}).ok());
  EXPECT_TRUE(graph.RunUntil([&] { return graph.StatsOf("ticker")->procs >= 42; },
                             absl::Seconds(10)));
  EXPECT_EQ(graph.Elapsed(), absl::Milliseconds(420));
  EXPECT_FALSE(graph.RunUntil([] { return false; }, absl::Seconds(1)));
  EXPECT_EQ(graph.Elapsed(), absl::Milliseconds(1420));
}

TEST_F(SimulatedGraphTest, AGraphWithSuspendedCallsStops) {
  SimulatedGraph graph;
  ASSERT_TRUE(graph.Launch({TimerGraph("slow.dag", "SlowTicker", "slow", 100)}).ok());
  graph.RunFor(absl::Milliseconds(150));  // the first call sleeps until 300 ms
  EXPECT_EQ(graph.StatsOf("slow")->procs, 0u);
  graph.Stop();  // lets simulated time pass to the end of that call
  EXPECT_EQ(graph.StatsOf("slow")->procs, 1u);
}

TEST_F(SimulatedGraphTest, ABadGraphIsALocatedError) {
  SimulatedGraph graph;
  const absl::Status s = graph.Launch({WriteFile("bad.dag", R"(
module_config {
  timer_components { class_name: "SimTicker" config { name: "t" interval: 0 } }
})")});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("bad.dag:3"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("interval"), std::string::npos) << s.message();
}

TEST_F(SimulatedGraphTest, AnActionInThePastIsRefused) {
  SimulatedGraph graph;
  graph.RunFor(absl::Seconds(1));
  const absl::Status s = graph.At(graph.Now() - absl::Milliseconds(1), [] {});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "simulated graph \"sim\": At(999ms since start): that instant has passed "
            "(now 1s since start)");
  // Neither is an empty action, nor one beyond the wheel's range.
  EXPECT_EQ(graph.After(absl::Milliseconds(2), nullptr).code(),
            absl::StatusCode::kInvalidArgument);
  const absl::Status far = graph.After(graph.driver().max_delay() + absl::Milliseconds(2), [] {});
  EXPECT_EQ(far.code(), absl::StatusCode::kOutOfRange) << far;
  EXPECT_NE(far.message().find("beyond the timing wheel's maximum delay"), std::string::npos)
      << far.message();
  // The maximum itself is accepted.
  EXPECT_TRUE(graph.After(graph.driver().max_delay(), [] {}).ok());
}

// Records the simulated instant (since the graph's start) at which each
// action ran.
struct ActionLog {
  std::vector<absl::Duration> at;
  std::function<void()> Recorder(SimulatedGraph* graph) {
    return [this, graph] { at.push_back(graph->Elapsed()); };
  }
};

TEST_F(SimulatedGraphTest, AnActionLessThanOneTickAheadRunsOnTheNextTick) {
  SimulatedGraph graph;  // 2 ms tick; the start is on a tick
  ActionLog log;
  ASSERT_TRUE(graph.After(absl::Milliseconds(1), log.Recorder(&graph)).ok());
  graph.RunFor(absl::Milliseconds(1));
  EXPECT_TRUE(log.at.empty());  // never early
  graph.RunFor(absl::Milliseconds(1));
  EXPECT_EQ(log.at, std::vector<absl::Duration>{absl::Milliseconds(2)});
}

TEST_F(SimulatedGraphTest, AnActionForNowOnATickRunsInTheCurrentStep) {
  SimulatedGraph graph;
  ActionLog log;
  ASSERT_TRUE(graph.After(absl::ZeroDuration(), log.Recorder(&graph)).ok());
  graph.RunFor(absl::ZeroDuration());
  EXPECT_EQ(log.at, std::vector<absl::Duration>{absl::ZeroDuration()});
  // From inside an action at 4 ms: the new one runs at 4 ms too.
  ASSERT_TRUE(graph
                  .After(absl::Milliseconds(4),
                         [&] {
                           log.at.push_back(graph.Elapsed());
                           EXPECT_TRUE(graph.After(absl::ZeroDuration(),
                                                   log.Recorder(&graph)).ok());
                         })
                  .ok());
  graph.RunFor(absl::Milliseconds(4));
  EXPECT_EQ(log.at, (std::vector<absl::Duration>{absl::ZeroDuration(), absl::Milliseconds(4),
                                                 absl::Milliseconds(4)}));
}

TEST_F(SimulatedGraphTest, AnActionBetweenTicksRunsOnTheFirstTickAtOrAfterIt) {
  SimulatedGraph graph;
  ActionLog log;
  ASSERT_TRUE(graph.At(graph.Now() + absl::Milliseconds(3), log.Recorder(&graph)).ok());
  graph.RunFor(absl::Milliseconds(10));
  EXPECT_EQ(log.at, std::vector<absl::Duration>{absl::Milliseconds(4)});
}

TEST_F(SimulatedGraphTest, ActionsFromAPresentBetweenTicksRunOnTheNextTicks) {
  SimulatedGraph graph;
  graph.RunFor(absl::Milliseconds(1));  // the present is not on a tick
  std::vector<std::pair<std::string, absl::Duration>> ran;
  const auto record = [&](std::string name) {
    return [&ran, &graph, name] { ran.emplace_back(name, graph.Elapsed()); };
  };
  ASSERT_TRUE(graph.After(absl::ZeroDuration(), record("now")).ok());
  ASSERT_TRUE(graph.After(absl::Milliseconds(1), record("+1ms")).ok());
  ASSERT_TRUE(graph.After(absl::Milliseconds(2), record("+2ms")).ok());
  ASSERT_TRUE(graph.At(graph.Now() + absl::Milliseconds(3), record("+3ms")).ok());
  graph.RunFor(absl::ZeroDuration());
  EXPECT_TRUE(ran.empty());  // now (1 ms) is between ticks: the next is at 2 ms
  graph.RunFor(absl::Milliseconds(10));
  EXPECT_EQ(ran, (std::vector<std::pair<std::string, absl::Duration>>{
                     {"now", absl::Milliseconds(2)},
                     {"+1ms", absl::Milliseconds(2)},
                     {"+2ms", absl::Milliseconds(4)},
                     {"+3ms", absl::Milliseconds(4)}}));
}

TEST_F(SimulatedGraphTest, ActionsDueAtOneTickRunInInstantThenCallOrder) {
  SimulatedGraph graph;
  std::vector<int> ran;
  // 4 ms and 3 ms both run on the 4 ms tick: 3 ms first, whatever the
  // order of the calls; at one instant, in the order of the calls.
  for (int i = 0; i < 100; ++i) {
    const absl::Duration d = absl::Milliseconds(i % 2 == 0 ? 4 : 3);
    ASSERT_TRUE(graph.After(d, [&ran, i] { ran.push_back(i); }).ok());
  }
  graph.RunFor(absl::Milliseconds(4));
  ASSERT_EQ(ran.size(), 100u);
  for (int k = 0; k < 50; ++k) {
    EXPECT_EQ(ran[k], 2 * k + 1) << k;
    EXPECT_EQ(ran[50 + k], 2 * k) << k;
  }
}

TEST_F(SimulatedGraphTest, AnActionRunsBeforeTheGraphsCallsAtItsTick) {
  std::vector<std::string> log;
  g_log = &log;
  SimulatedGraph graph;
  ASSERT_TRUE(graph.Launch({TimerGraph("logging.dag", "LoggingTicker", "logger", 10)}).ok());
  g_log_start_ns = absl::ToInt64Nanoseconds(graph.Now().SinceEpoch());
  // Armed after the component's timer, for its tick: it runs first.
  ASSERT_TRUE(graph.After(absl::Milliseconds(20), [&] { log.push_back("action@20"); }).ok());
  ASSERT_TRUE(graph.After(absl::Milliseconds(9), [&] { log.push_back("action@10"); }).ok());
  graph.RunFor(absl::Milliseconds(30));
  EXPECT_EQ(log, (std::vector<std::string>{"action@10", "proc@10", "action@20", "proc@20",
                                           "proc@30"}));
  graph.Stop();
  g_log = nullptr;
}

TEST_F(SimulatedGraphTest, AYieldLoopDoesNotStopTime) {
  SimulatedGraph graph;
  ASSERT_TRUE(graph.Launch({TimerGraph("yield.dag", "YieldLooper", "spin", 100)}).ok());
  graph.RunFor(absl::Seconds(1));
  EXPECT_EQ(graph.Elapsed(), absl::Seconds(1));
  EXPECT_EQ(graph.StatsOf("spin")->procs, 10u);
  EXPECT_GT(g_yield_turns.load(), 0);
}

TEST_F(SimulatedGraphTest, ASleepInInitIsRefusedInsteadOfHanging) {
  SimulatedGraph graph;
  ASSERT_TRUE(graph.Launch({TimerGraph("sleepy_init.dag", "SleepsInInit", "s", 10)}).ok());
  EXPECT_EQ(graph.Elapsed(), absl::ZeroDuration());  // no time passed for it
  graph.RunFor(absl::Milliseconds(100));
  EXPECT_EQ(graph.StatsOf("s")->procs, 10u);
}

TEST_F(SimulatedGraphTest, WrittenMessagesAreDeliveredAtTheirInstant) {
  std::vector<std::pair<int64_t, int64_t>> inputs;
  g_inputs = &inputs;
  SimulatedGraph graph;
  ASSERT_TRUE(graph
                  .Launch({WriteFile("sink.dag", R"(
module_config {
  components { class_name: "InputSink"
               config { name: "sink" readers { channel: "/sim/in" pending_queue_size: 8 } } }
})")})
                  .ok());
  const int64_t t0 = absl::ToInt64Nanoseconds(graph.Now().SinceEpoch());
  Stamp s;
  s.ns = 7;
  ASSERT_TRUE(graph.Write("/sim/in", s).ok());
  graph.RunFor(absl::Milliseconds(30));
  s.ns = 8;
  ASSERT_TRUE(graph.Write("/sim/in", s).ok());
  graph.RunFor(absl::Milliseconds(1));
  ASSERT_EQ(inputs.size(), 2u);
  EXPECT_EQ(inputs[0], std::make_pair(int64_t{7}, t0));
  EXPECT_EQ(inputs[1],
            std::make_pair(int64_t{8}, t0 + absl::ToInt64Nanoseconds(absl::Milliseconds(30))));
  // A channel of another type is refused with the reason.
  EXPECT_FALSE(graph.Write("/sim/in", 42).ok());
  graph.Stop();
  g_inputs = nullptr;
}

TEST_F(SimulatedGraphTest, AnInfiniteLimitEndsWhenNothingIsPlanned) {
  SimulatedGraph graph;
  bool fired = false;
  ASSERT_TRUE(graph.After(absl::Milliseconds(10), [&] { fired = true; }).ok());
  EXPECT_TRUE(graph.RunUntil([&] { return fired; }, absl::InfiniteDuration()));
  EXPECT_EQ(graph.Elapsed(), absl::Milliseconds(10));
  EXPECT_FALSE(graph.RunUntil([] { return false; }, absl::InfiniteDuration()));
  graph.RunUntil(Instant::InfiniteFuture());  // returns: nothing is planned
  EXPECT_EQ(graph.Elapsed(), absl::Milliseconds(10));
}

TEST_F(SimulatedGraphTest, RoutinesPinnedToAnyProcessorRun) {
  SimulatedGraph::Options o;
  o.config = scheduler::DefaultSchedulerConfig(2);
  SimulatedGraph graph(o);
  std::vector<int> ran;
  for (int p = 0; p < 2; ++p) {
    ASSERT_TRUE(graph.scheduler()
                    .CreateTask("pinned" + std::to_string(p), [&ran, p] { ran.push_back(p); },
                                /*priority=*/0, /*processor=*/p)
                    .ok());
  }
  graph.RunFor(absl::Milliseconds(1));
  EXPECT_EQ(ran.size(), 2u);
}

TEST_F(SimulatedGraphTest, StopComponentWaitsForASuspendedCall) {
  SimulatedGraph graph;
  ASSERT_TRUE(graph.Launch({TimerGraph("slow2.dag", "SlowTicker", "slow", 100)}).ok());
  graph.RunFor(absl::Milliseconds(150));  // the call of 100 ms sleeps until 300 ms
  EXPECT_TRUE(graph.StopComponent("slow").ok());
  EXPECT_EQ(graph.StatsOf("slow")->procs, 1u);  // the suspended call ended
  graph.RunFor(absl::Seconds(1));
  EXPECT_EQ(graph.StatsOf("slow")->procs, 1u);  // and none after
}

}  // namespace
}  // namespace cyber
