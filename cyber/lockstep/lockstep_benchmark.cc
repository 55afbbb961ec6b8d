// What one lockstep step costs, against what it is built from: a bare
// round trip between two DDS participants, measured in the same run.
//
//   bazel run --config=opt //cyber/lockstep:lockstep_benchmark --
//       --benchmark_repetitions=3 --benchmark_display_aggregates_only=true
//   (one line; docs/performance/lockstep.md has the figures)
//
// Every participant lives in this one process but is a DdsTransport of its
// own, as if each were its own process (lockstep_dds_test does the same).
// Fast-DDS would deliver between participants of one process without its
// transports, on the writer's thread (its intraprocess delivery, on by
// default), which no two processes can do: a bare round trip would then
// wake no thread at all. So this binary turns it off, and every sample
// crosses shared memory and wakes the reader's listening thread, as
// between processes; --dds_intraprocess (this binary's one flag) keeps
// Fast-DDS's default, to see what a one-process test sees. Every
// participant, the bare round trip's too, is made as lockstep processes
// make theirs (dds::SetFewerWakeups: no acknowledgement asked with each
// message, nack suppression 5 ms); --dds_defaults keeps Fast-DDS's
// defaults everywhere instead.
// Each benchmark call takes a fresh random domain (dds_test::RandomDomain:
// claimed for this process, so concurrent tests never meet it) and shuts
// its participants down at its end, so nothing stays in /dev/shm.
//
//   BM_BareRoundTrip    participant A publishes a small Ping on a
//                       reliable channel, B's subscription handler
//                       publishes its payload back on another, and A's
//                       thread waits (CondVar) for the echo. One iteration
//                       is one round trip.
//   BM_RoundTripEchoFromThread
//                       the same, B's handler handing the Ping to a thread
//                       of B's that publishes it: as many thread hand-offs
//                       as a one-member step has, without the protocol.
//   BM_LockstepStep/N   a CoordinatorDriver and N LockstepMembers with no
//                       graph: run_until does nothing, the next event is
//                       always 10 ms on, so each grant is one step (step k
//                       grants (k - 1) x 10 ms). One iteration is one
//                       granted-and-completed step.
//
// How a step is timed without the join: member "m0"'s run_until counts the
// steps and holds the first one until the members have joined and the
// benchmark's clock runs; then the run goes flat out, and the measurement
// ends when m0 is handed step 1 + n (n = the iteration count), that is
// after n complete grant-to-grant cycles. The coordinator's end instant is
// that step's, so the run ends on its own ("the end ... reached") and the
// outcome is checked. The benchmark's thread sleeps during the whole batch:
// it wakes neither the members nor the coordinator.
//
// Time is real time (the work runs on the transports', members' and
// coordinator's threads); CPU is the whole process's, all threads, per
// iteration. Counters:
//   round_trips_per_s, steps_per_s   iterations per second;
//   ratio_to_round_trip              BM_LockstepStep's time per step over
//                                    the bare round trip's time measured by
//                                    the latest BM_BareRoundTrip call of
//                                    this run (absent when that benchmark
//                                    was filtered out);
//   grants_per_step, reports_per_step
//                                    samples the coordinator's participant
//                                    published on /cyber/lockstep/grant and
//                                    received on /cyber/lockstep/report
//                                    during the measured steps, per step
//                                    (its ChannelStats);
//   grant_bytes, report_bytes        their payload bytes, per sample;
//   ctx_switches                     context switches of all the process's
//                                    threads (getrusage) per iteration:
//                                    a thread's wake-up and its sleep
//                                    again are where a step's time goes.
//
// Threads: Google Benchmark's one thread drives everything; per call, the
// coordinator runs on a thread of its own and each member on its own.

#include <sys/resource.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "benchmark/benchmark.h"
#include "cyber/common/mutex.h"
#include "cyber/common/steady_time.h"
#include "cyber/lockstep/coordinator_driver.h"
#include "cyber/lockstep/member.h"
#include "cyber/lockstep/topics.h"
#include "cyber/transport/channel_qos.h"
#include "cyber/transport/dds/dds_transport.h"
#include "cyber/transport/dds/testing/dds_test_process.h"
#include "cyber/transport/dds/testing/test_messages.pb.h"
#include "fastrtps/attributes/LibrarySettingsAttributes.h"
#include "fastrtps/xmlparser/XMLProfileManager.h"

namespace cyber {
namespace lockstep {
namespace {

// Simulated time between two steps: the hooks' next event.
constexpr absl::Duration kStepInstant = absl::Milliseconds(10);
// How long setup and the measured batch may take before the call is
// reported as failed: it only bounds a broken run.
constexpr absl::Duration kPatience = absl::Seconds(30);
// Echoes the bare round trip waits for before it measures: both readers
// matched and the first samples' paths warm.
constexpr int kWarmUpRoundTrips = 100;

// The bare round trip's time per iteration in this run (the latest
// BM_BareRoundTrip call), for BM_LockstepStep's ratio; zero: not measured.
// Google Benchmark's thread only.
absl::Duration latest_round_trip;

// Fast-DDS's intraprocess delivery (a process-wide library setting, on by
// default): with it, a sample between two participants of one process
// skips the transports and the writer's thread runs the reader's handler
// inside write(), which no two processes can do. Off (this benchmark's
// default), every sample crosses shared memory and wakes the reader's
// listening thread, as between processes; --dds_intraprocess turns it on.
// Set by main() before the first participant.
bool intraprocess_delivery = false;

void SetIntraprocessDelivery(bool on) {
  intraprocess_delivery = on;
  eprosima::fastrtps::LibrarySettingsAttributes settings;
  settings.intraprocess_delivery = on ? eprosima::fastrtps::INTRAPROCESS_FULL : eprosima::fastrtps::INTRAPROCESS_OFF;
  eprosima::fastrtps::xmlparser::XMLProfileManager::library_settings(settings);
}

// Whether the setting is still the one set, once participants exist (no
// XML profile loaded since has changed it).
bool IntraprocessDeliveryAsSet() {
  return (eprosima::fastrtps::xmlparser::XMLProfileManager::library_settings().intraprocess_delivery ==
          eprosima::fastrtps::INTRAPROCESS_FULL) == intraprocess_delivery;
}

// Context switches (voluntary and not) of every thread of this process so
// far: each wake-up of a sleeping thread is one.
double ContextSwitches() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_nvcsw + u.ru_nivcsw);
}

bool g_dds_defaults = false;  // main() sets it before any benchmark runs

std::shared_ptr<dds::DdsTransport> Participant(uint32_t domain, const std::string& name) {
  dds::DdsTransportOptions o;
  o.domain_id = domain;
  o.process_name = name;
  o.lease = absl::Seconds(2);
  if (!g_dds_defaults) dds::SetFewerWakeups(&o);
  return std::make_shared<dds::DdsTransport>(o);
}

// A reliable channel of small Pings (ChannelQos's defaults: reliable,
// volatile, keep last 16).
RemoteEndpoint PingEndpoint(const std::string& channel, const std::string& node) {
  RemoteEndpoint e;
  e.channel = channel;
  e.type_name = dds_test::Ping::descriptor()->full_name();
  e.qos = ChannelQos{};
  e.node = node;
  return e;
}

// The echoes A has received; A's handler signals, the benchmark's thread
// waits.
class EchoBox {
 public:
  void Arrived(uint64_t seq) {
    MutexLock lock(&mu_);
    latest_ = seq;
    arrived_.SignalAll();
  }
  // Whether the echo of `seq` came by `deadline` (steady clock).
  bool AwaitEcho(uint64_t seq, absl::Time deadline) {
    MutexLock lock(&mu_);
    while (latest_ < seq) {
      if (!arrived_.WaitUntil(&mu_, ToSteadyTimePoint(deadline)) && latest_ < seq) return false;
    }
    return true;
  }

 private:
  Mutex mu_;
  CondVar arrived_;
  uint64_t latest_ ABSL_GUARDED_BY(mu_) = 0;
};

// B's echo from a thread of its own, as a lockstep member answers a grant
// from its thread (member.cc): the handler hands the payload over, the
// thread wakes and publishes it.
class EchoThread {
 public:
  explicit EchoThread(std::shared_ptr<RemotePublisher> out)
      : out_(std::move(out)), thread_([this] { Run(); }) {}
  ~EchoThread() {
    {
      MutexLock lock(&mu_);
      quit_ = true;
      changed_.SignalAll();
    }
    thread_.join();
  }
  // B's subscription handler.
  void Arrived(absl::string_view payload) {
    MutexLock lock(&mu_);
    pending_.emplace_back(payload);
    changed_.SignalAll();
  }

 private:
  void Run() {
    for (;;) {
      std::deque<std::string> batch;
      {
        MutexLock lock(&mu_);
        while (pending_.empty() && !quit_) changed_.Wait(&mu_);
        if (quit_) return;
        batch.swap(pending_);
      }
      for (const std::string& payload : batch) out_->Publish(payload).IgnoreError();
    }
  }

  const std::shared_ptr<RemotePublisher> out_;
  Mutex mu_;
  CondVar changed_;
  std::deque<std::string> pending_ ABSL_GUARDED_BY(mu_);
  bool quit_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;  // last: it starts once the rest is made
};

// One round trip per iteration, A -> B -> A; B echoes from its handler
// or, with `echo_from_thread`, from an EchoThread. Returns the time per
// round trip (zero when the run failed).
absl::Duration RoundTrips(benchmark::State& state, bool echo_from_thread) {
  const uint32_t domain = dds_test::RandomDomain();
  std::shared_ptr<dds::DdsTransport> a = Participant(domain, "bench_a");
  std::shared_ptr<dds::DdsTransport> b = Participant(domain, "bench_b");
  EchoBox echoes;
  std::shared_ptr<RemotePublisher> ping = *a->Publisher(PingEndpoint("/bench/ping", "a"));
  std::shared_ptr<RemotePublisher> pong = *b->Publisher(PingEndpoint("/bench/pong", "b"));
  std::unique_ptr<EchoThread> echo_thread;
  if (echo_from_thread) echo_thread = std::make_unique<EchoThread>(pong);
  EchoThread* relay = echo_thread.get();
  std::unique_ptr<RemoteSubscription> b_in =
      *b->Subscribe(PingEndpoint("/bench/ping", "b"), [&pong, relay](const RemoteSample& s) {
        if (relay != nullptr) {
          relay->Arrived(s.payload);
          return true;
        }
        return pong->Publish(s.payload).ok();
      });
  std::unique_ptr<RemoteSubscription> a_in =
      *a->Subscribe(PingEndpoint("/bench/pong", "a"), [&echoes](const RemoteSample& s) {
        dds_test::Ping p;
        if (!p.ParseFromArray(s.payload.data(), static_cast<int>(s.payload.size()))) return false;
        echoes.Arrived(p.seq());
        return true;
      });

  dds_test::Ping message;
  uint64_t seq = 0;
  // Each side's writer matched; then pings until kWarmUpRoundTrips came
  // back (a reader's own match of the writer may lag the writer's).
  const absl::Time give_up = SteadyNow() + kPatience;
  bool ready = dds_test::Eventually([&] { return ping->Wanted() && pong->Wanted(); }, kPatience);
  for (int echoed = 0; ready && echoed < kWarmUpRoundTrips;) {
    message.set_seq(++seq);
    ready = ping->PublishMessage(message).ok() && SteadyNow() < give_up;
    if (ready && echoes.AwaitEcho(seq, SteadyNow() + absl::Milliseconds(100))) ++echoed;
  }
  absl::Duration per_trip;
  if (!ready) {
    state.SkipWithError("round trip: the two participants never exchanged their first echoes");
  } else if (!IntraprocessDeliveryAsSet()) {
    state.SkipWithError("Fast-DDS's intraprocess delivery setting changed after main() set it");
  } else {
    const double switches_before = ContextSwitches();
    const absl::Time began = SteadyNow();
    for (auto _ : state) {
      message.set_seq(++seq);
      if (!ping->PublishMessage(message).ok() || !echoes.AwaitEcho(seq, SteadyNow() + kPatience)) {
        state.SkipWithError(absl::StrCat("round trip: no echo of ping ", seq).c_str());
        break;
      }
    }
    if (!state.error_occurred() && state.iterations() > 0) {
      per_trip = (SteadyNow() - began) / static_cast<double>(state.iterations());
    }
    state.counters["round_trips_per_s"] =
        benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
    state.counters["ctx_switches"] =
        benchmark::Counter(ContextSwitches() - switches_before, benchmark::Counter::kAvgIterations);
  }
  a_in.reset();
  b_in.reset();
  echo_thread.reset();
  a->Shutdown();
  b->Shutdown();
  return per_trip;
}

void BM_BareRoundTrip(benchmark::State& state) {
  const absl::Duration per_trip = RoundTrips(state, /*echo_from_thread=*/false);
  if (per_trip > absl::ZeroDuration()) latest_round_trip = per_trip;
}
BENCHMARK(BM_BareRoundTrip)->UseRealTime()->MeasureProcessCPUTime()->Unit(benchmark::kMicrosecond);

// The same with B's echo from its own thread: the thread hand-offs of a
// one-member step (grant and report each handed from the transport's
// thread to the member's or coordinator's), without the protocol.
void BM_RoundTripEchoFromThread(benchmark::State& state) { RoundTrips(state, /*echo_from_thread=*/true); }
BENCHMARK(BM_RoundTripEchoFromThread)->UseRealTime()->MeasureProcessCPUTime()->Unit(benchmark::kMicrosecond);

// What the benchmark's thread and member "m0"'s thread share: m0's
// run_until counts the steps, holds the first until Release(), and wakes
// the benchmark's thread at the target step only (or when the run stops).
class StepGate {
 public:
  // m0's run_until.
  void OnStep() {
    MutexLock lock(&mu_);
    ++steps_;
    if (steps_ == 1) {
      changed_.SignalAll();
      while (!released_) changed_.Wait(&mu_);
    }
    if (steps_ == target_) changed_.SignalAll();
  }
  // m0's on_stop.
  void OnStop() {
    MutexLock lock(&mu_);
    stopped_ = true;
    changed_.SignalAll();
  }
  // Whether m0 was handed step 1 by `deadline`.
  bool AwaitFirst(absl::Time deadline) { return AwaitSteps(1, deadline); }
  // Lets step 1 finish; AwaitTarget() then waits for step `target`.
  void Release(uint64_t target) {
    MutexLock lock(&mu_);
    target_ = target;
    released_ = true;
    changed_.SignalAll();
  }
  // Whether m0 was handed the target step by `deadline` (false at once
  // when the run stopped before it).
  bool AwaitTarget(absl::Time deadline) {
    uint64_t target;
    {
      MutexLock lock(&mu_);
      target = target_;
    }
    return AwaitSteps(target, deadline);
  }

 private:
  bool AwaitSteps(uint64_t n, absl::Time deadline) {
    MutexLock lock(&mu_);
    while (steps_ < n && !stopped_) {
      if (!changed_.WaitUntil(&mu_, ToSteadyTimePoint(deadline))) break;
    }
    return steps_ >= n;
  }

  Mutex mu_;
  CondVar changed_;
  uint64_t steps_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t target_ ABSL_GUARDED_BY(mu_) = 0;
  bool released_ ABSL_GUARDED_BY(mu_) = false;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
};

// One member "process": its participant, and the instant it last ran to
// (its member's thread only: hooks run there, one at a time).
struct BenchMember {
  std::string name;
  std::shared_ptr<dds::DdsTransport> transport;
  int64_t reached_ns = 0;
  std::unique_ptr<LockstepMember> member;
};

MemberHooks NoGraphHooks(BenchMember* m, StepGate* gate) {
  MemberHooks h;
  h.run_until = [m, gate](int64_t instant_ns, uint64_t /*through*/) {
    m->reached_ns = instant_ns;
    if (gate != nullptr) gate->OnStep();
  };
  h.next_event_ns = [m] { return m->reached_ns + absl::ToInt64Nanoseconds(kStepInstant); };
  h.counts = [](uint64_t*) { return std::vector<ChannelCount>{}; };
  h.on_stop = [gate](const std::string&) {
    if (gate != nullptr) gate->OnStop();
  };
  return h;
}

// The coordinator's grant and report samples so far.
struct TopicCounts {
  uint64_t grants = 0;
  uint64_t grant_bytes = 0;
  uint64_t reports = 0;
  uint64_t report_bytes = 0;
};

TopicCounts CoordinatorCounts(const dds::DdsTransport& t) {
  TopicCounts c;
  for (const RemoteChannelStats& s : t.ChannelStats()) {
    if (s.channel == kGrantTopic) {
      c.grants = s.sent;
      c.grant_bytes = s.bytes_sent;
    } else if (s.channel == kReportTopic) {
      c.reports = s.received;
      c.report_bytes = s.bytes_received;
    }
  }
  return c;
}

void BM_LockstepStep(benchmark::State& state) {
  const int members = static_cast<int>(state.range(0));
  const uint64_t n = static_cast<uint64_t>(state.max_iterations);
  const uint32_t domain = dds_test::RandomDomain();
  std::shared_ptr<dds::DdsTransport> coordinator_transport = Participant(domain, "lockstep_coordinator");
  std::vector<std::unique_ptr<BenchMember>> ms;
  CoordinatorDriverOptions o;
  for (int i = 0; i < members; ++i) {
    auto m = std::make_unique<BenchMember>();
    m->name = absl::StrCat("m", i);
    m->transport = Participant(domain, m->name);
    o.coordinator.processes.push_back(m->name);
    ms.push_back(std::move(m));
  }
  // Step k grants (k - 1) x 10 ms: the run ends with step n + 1, the one
  // the measurement waits for.
  o.coordinator.start_ns = 0;
  o.coordinator.end_ns = static_cast<int64_t>(n) * absl::ToInt64Nanoseconds(kStepInstant);
  o.coordinator.run_id = 7;
  o.coordinator.join_deadline = kPatience;
  o.coordinator.step_deadline = kPatience;
  absl::StatusOr<std::unique_ptr<CoordinatorDriver>> driver = CoordinatorDriver::Start(coordinator_transport, o);
  if (!driver.ok()) {
    state.SkipWithError(absl::StrCat("coordinator: ", driver.status().ToString()).c_str());
    coordinator_transport->Shutdown();
    for (auto& m : ms) m->transport->Shutdown();
    return;
  }
  StepGate gate;
  RunOutcome outcome;
  std::thread run([&] { outcome = (*driver)->Run(); });
  std::string error;
  for (int i = 0; i < members && error.empty(); ++i) {
    BenchMember* m = ms[static_cast<size_t>(i)].get();
    MemberOptions mo;
    mo.process = m->name;
    absl::StatusOr<std::unique_ptr<LockstepMember>> started =
        LockstepMember::Start(m->transport, mo, NoGraphHooks(m, i == 0 ? &gate : nullptr));
    if (started.ok()) {
      m->member = *std::move(started);
    } else {
      error = absl::StrCat("member ", m->name, ": ", started.status().ToString());
    }
  }
  if (error.empty() && !gate.AwaitFirst(SteadyNow() + kPatience)) {
    error = "the members never joined (no first grant)";
  }
  if (error.empty() && !IntraprocessDeliveryAsSet()) {
    error = "Fast-DDS's intraprocess delivery setting changed after main() set it";
  }
  if (!error.empty()) {
    gate.Release(0);
    (*driver)->RequestStop();
  }

  TopicCounts before, after;
  absl::Duration measured;
  double switches = 0;
  if (error.empty()) {
    before = CoordinatorCounts(*coordinator_transport);
    switches = -ContextSwitches();
    while (state.KeepRunningBatch(static_cast<benchmark::IterationCount>(n))) {
      const absl::Time began = SteadyNow();
      gate.Release(1 + n);
      // The coordinator's step deadline bounds each step; this, a run
      // that hangs all the same.
      if (!gate.AwaitTarget(SteadyNow() + kPatience + absl::Milliseconds(1) * static_cast<double>(n))) {
        error = absl::StrCat("step ", 1 + n, " never came");
        state.SkipWithError(error.c_str());  // in the loop, then out of it
        (*driver)->RequestStop();
        break;
      }
      measured = SteadyNow() - began;
    }
    switches += ContextSwitches();
    after = CoordinatorCounts(*coordinator_transport);
  }
  run.join();  // every member has answered the stop grant (LEAVE) or the step deadline passed
  if (error.empty() && (!outcome.ok || outcome.steps != n + 1)) {
    error = absl::StrCat("the run: ", outcome.why, " (", outcome.steps, " steps, ", n + 1, " expected)");
  }
  if (!error.empty()) {
    if (!state.error_occurred()) state.SkipWithError(error.c_str());
  } else {
    const double steps = static_cast<double>(n);
    state.counters["steps_per_s"] = benchmark::Counter(steps, benchmark::Counter::kIsRate);
    state.counters["ctx_switches"] = switches / steps;
    if (latest_round_trip > absl::ZeroDuration()) {
      state.counters["ratio_to_round_trip"] = absl::FDivDuration(measured / steps, latest_round_trip);
    }
    // n steps are n grants (steps 2 .. n + 1) and n x members reports
    // (steps 1 .. n, give or take one step's at either end: the other
    // members may be a report ahead of m0 when the counts are read).
    state.counters["grants_per_step"] = static_cast<double>(after.grants - before.grants) / steps;
    state.counters["reports_per_step"] = static_cast<double>(after.reports - before.reports) / steps;
    if (after.grants > before.grants) {
      state.counters["grant_bytes"] = static_cast<double>(after.grant_bytes - before.grant_bytes) /
                                      static_cast<double>(after.grants - before.grants);
    }
    if (after.reports > before.reports) {
      state.counters["report_bytes"] = static_cast<double>(after.report_bytes - before.report_bytes) /
                                       static_cast<double>(after.reports - before.reports);
    }
  }
  for (auto& m : ms) m->member.reset();
  driver->reset();
  coordinator_transport->Shutdown();
  for (auto& m : ms) m->transport->Shutdown();
}
BENCHMARK(BM_LockstepStep)
    ->Arg(1)
    ->Arg(2)
    ->Arg(4)
    ->UseRealTime()
    ->MeasureProcessCPUTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace lockstep
}  // namespace cyber

// The flag this binary adds to Google Benchmark's (removed from argv
// before they are parsed).
constexpr char kIntraprocessFlag[] = "--dds_intraprocess";
constexpr char kDefaultsFlag[] = "--dds_defaults";

int main(int argc, char** argv) {
  bool intraprocess = false;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == kIntraprocessFlag) {
      intraprocess = true;
    } else if (std::string(argv[i]) == kDefaultsFlag) {
      cyber::lockstep::g_dds_defaults = true;
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  cyber::lockstep::SetIntraprocessDelivery(intraprocess);
  benchmark::AddCustomContext("dds_intraprocess_delivery",
                              intraprocess ? "full (Fast-DDS's default: in-process shortcut)"
                                           : "off (samples cross shared memory, as between processes)");
  benchmark::AddCustomContext("dds_settings", cyber::lockstep::g_dds_defaults
                                                 ? "Fast-DDS's defaults"
                                                 : "fewer wake-ups (as lockstep processes)");
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
