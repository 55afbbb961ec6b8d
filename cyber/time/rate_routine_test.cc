// cyber::Rate inside a scheduler routine on simulated time: a routine's sleep ends at the Rate's deadline itself, not on the tick
// after it, so a 1 kHz Rate gives 10,000 returns in 10 simulated seconds at
// exact 1 ms steps, and no return shares the instant of the one before.
// (Sleeps rounded up to 2 ms ticks would land 5,000 of the 10,000 returns
// on the instant of the one before: every second deadline would already be
// past when the loop came back.) The same
// for a 500 us Rate. On a plain thread a Rate keeps pacing as before.
//
// The routine is a SimulatedGraph action (cyber/simulation): it runs on the
// graph's scheduler, and Rate's Cyber RT constructors pick the graph's
// clock there (cyber/time/current_clock.h).

#include <cstdint>
#include <vector>

#include "absl/time/time.h"
#include "cyber/simulation/simulated_graph.h"
#include "cyber/time/rate.h"
#include "cyber/time/steady_clock.h"
#include "gtest/gtest.h"

namespace cyber {
namespace {

// What a Rate loop in a routine observed.
struct Loop {
  Instant started;                // the graph's clock when the Rate was made
  absl::Duration period;          // the Rate's, as it reports it
  std::vector<Instant> returns;   // the graph's clock after each Sleep()
  int64_t overruns = -1;          // the Rate's Overruns() at the end
  bool ended = false;
};

// Runs `make_rate()`'s Rate in a routine of `graph` from the present until
// `span` has passed, recording every return from Sleep(). The loop ends by
// itself, so the graph's Stop() has nothing to wait for.
template <typename MakeRate>
void StartRateLoop(SimulatedGraph* graph, absl::Duration span, Loop* loop,
                   MakeRate make_rate) {
  const Instant end = graph->Now() + span;
  ASSERT_TRUE(graph
                  ->After(absl::ZeroDuration(),
                          [graph, end, loop, make_rate] {
                            loop->started = graph->Now();
                            Rate rate = make_rate();
                            loop->period = rate.period();
                            while (graph->Now() < end) {
                              rate.Sleep();
                              loop->returns.push_back(graph->Now());
                            }
                            loop->overruns = rate.Overruns();
                            loop->ended = true;
                          })
                  .ok());
}

void ExpectExactSteps(const Loop& loop, Instant start, absl::Duration period,
                      int64_t n) {
  ASSERT_TRUE(loop.ended);
  ASSERT_EQ(loop.started, start) << "After(0) at the start runs at once";
  ASSERT_EQ(loop.period, period);
  int64_t same_instant = 0;
  for (size_t i = 1; i < loop.returns.size(); ++i) {
    if (loop.returns[i] == loop.returns[i - 1]) ++same_instant;
  }
  EXPECT_EQ(same_instant, 0) << "returns at the instant of the one before";
  EXPECT_EQ(loop.overruns, 0) << "no return came at once";
  ASSERT_EQ(static_cast<int64_t>(loop.returns.size()), n);
  for (int64_t k = 1; k <= n; ++k) {
    ASSERT_EQ(loop.returns[k - 1], start + period * k) << "return " << k;
  }
}

TEST(RateRoutineTest, OneKilohertzForTenSimulatedSecondsIsTenThousandExactSteps) {
  SimulatedGraph graph;
  const Instant start = graph.Now();
  Loop loop;
  StartRateLoop(&graph, absl::Seconds(10), &loop, [] { return Rate(1000.0); });
  graph.RunFor(absl::Seconds(10) + absl::Milliseconds(5));
  ExpectExactSteps(loop, start, absl::Milliseconds(1), 10000);
}

TEST(RateRoutineTest, FiveHundredMicrosecondsIsTwentyThousandExactSteps) {
  SimulatedGraph graph;
  const Instant start = graph.Now();
  Loop loop;
  StartRateLoop(&graph, absl::Seconds(10), &loop,
                [] { return Rate(uint64_t{500000}); });  // ns
  graph.RunFor(absl::Seconds(10) + absl::Milliseconds(5));
  ExpectExactSteps(loop, start, absl::Microseconds(500), 20000);
}

TEST(RateRoutineTest, AOneAndAHalfMillisecondRateRequestedBetweenTicksKeepsItsOwnPhase) {
  SimulatedGraph graph;
  graph.RunFor(absl::Microseconds(700));  // between two ticks
  // The action runs when SimulatedGraph::At says (on the next tick); the
  // Rate's schedule starts where it is made, between ticks or not.
  Loop loop;
  StartRateLoop(&graph, absl::Milliseconds(100), &loop,
                [] { return Rate(uint64_t{1500000}); });  // 1.5 ms
  graph.RunFor(absl::Milliseconds(120));
  ASSERT_TRUE(loop.ended);
  ASSERT_EQ(loop.period, absl::Microseconds(1500));
  ASSERT_GE(loop.returns.size(), 60u);
  for (size_t k = 1; k <= loop.returns.size(); ++k) {
    ASSERT_EQ(loop.returns[k - 1],
              loop.started + loop.period * static_cast<int64_t>(k))
        << "return " << k;
  }
}

TEST(RateRoutineTest, OnAPlainThreadARateStillPacesOnTheSteadyClock) {
  // Real time, a plain thread (no routine): only lower bounds, which load
  // can only make later, never earlier.
  SteadyClock* clock = SteadyClock::Get();
  auto rate = Rate::Create(absl::Milliseconds(1), clock);
  ASSERT_TRUE(rate.ok()) << rate.status();
  const Instant start = clock->Now();
  for (int k = 1; k <= 50; ++k) {
    const Instant deadline = rate->NextDeadline();
    rate->Sleep();
    ASSERT_GE(clock->Now(), deadline) << "cycle " << k;
  }
  EXPECT_GE(clock->Now() - start, absl::Milliseconds(50));
}

}  // namespace
}  // namespace cyber
