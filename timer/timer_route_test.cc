// A timer's route (priority and processor group, timer::Route) is resolved
// when it binds to a timer system for a configuration, and resolved again
// after every Configure(): also when the callback reconfigures its own timer
// and schedules it again while its call is still running (issue 21, item 4
// (c): the old priority used to stay). A named timer's group comes from the
// dispatcher's RouteFor(), also when its priority is explicit.
//
// Simulated time, a thread-free TimerSystem and a dispatcher that records the
// route of each call and runs it inline: exact and deterministic.

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cyber/time/simulated_clock.h"
#include "gtest/gtest.h"
#include "timer/dispatcher.h"
#include "timer/timer_system.h"
#include "timer/timer.h"

namespace cyber {
namespace timer {
namespace {

constexpr absl::Duration kPeriod = absl::Milliseconds(10);

// Runs each task inline, recording the route it came with. Its conf: timers
// named "conf_a" run at 3 in group 0, "conf_b" at 12 in group 2, any other
// name at 0 in group 0.
class RecordingDispatcher final : public Dispatcher {
 public:
  using Dispatcher::Dispatch;
  bool Dispatch(std::function<void()> task, int priority) override {
    routes.push_back(Route{priority, 0});
    task();
    return true;
  }
  bool Dispatch(std::function<void()> task, Route route,
                std::shared_ptr<const void> /*owner*/) override {
    routes.push_back(route);
    task();  // the owner is held by this call until the task has run
    return true;
  }
  int PriorityFor(const std::string& name) const override {
    return RouteFor(name).priority;
  }
  Route RouteFor(const std::string& name) const override {
    if (name == "conf_a") return Route{3, 0};
    if (name == "conf_b") return Route{12, 2};
    return Route{};
  }
  std::vector<Route> routes;
};

class TimerRouteTest : public testing::Test {
 protected:
  TimerRouteTest() : clock_(Instant() + absl::Hours(1)), driver_(&clock_, &dispatcher_, ThreadFree()) {}

  static TimerSystem::Options ThreadFree() {
    TimerSystem::Options o;
    o.name = "route";
    o.run_thread = false;
    return o;
  }
  void RunFor(absl::Duration d) {
    const Instant end = clock_.Now() + d;
    while (true) {
      const Instant next = driver_.Step(clock_.Now());
      if (next > end) break;
      clock_.AdvanceTo(std::max(next, clock_.Now()));
    }
    clock_.AdvanceTo(end);
    driver_.Step(clock_.Now());
  }
  std::vector<int> Priorities() const {
    std::vector<int> p;
    for (const Route& r : dispatcher_.routes) p.push_back(r.priority);
    return p;
  }
  std::vector<int> Groups() const {
    std::vector<int> g;
    for (const Route& r : dispatcher_.routes) g.push_back(r.group);
    return g;
  }

  SimulatedClock clock_;
  RecordingDispatcher dispatcher_;
  TimerSystem driver_;
};

TimerOptions Periodic(const std::string& name, int priority, std::function<void()> cb) {
  TimerOptions o;
  o.name = name;
  o.period = kPeriod;
  o.priority = priority;
  o.callback = std::move(cb);
  return o;
}

TEST_F(TimerRouteTest, ConfigureFromTheCallbackTakesTheNewPriorityAtTheNextSchedule) {
  Timer* self = nullptr;
  int calls = 0;
  auto callback = [&] {
    if (++calls != 1) return;
    // Reconfigure with a new explicit priority and go on.
    TimerOptions again = Periodic("explicit", 7, [&] { ++calls; });
    ASSERT_TRUE(self->Configure(std::move(again)).ok());
    ASSERT_TRUE(self->Schedule().ok());
  };
  Timer t(Periodic("explicit", 1, callback), &driver_);
  self = &t;
  ASSERT_TRUE(t.Schedule().ok());
  RunFor(kPeriod * 3);
  EXPECT_EQ(Priorities(), (std::vector<int>{1, 7, 7}));
  t.Stop();
}

TEST_F(TimerRouteTest, ConfigureFromTheCallbackTakesTheNewConfEntry) {
  Timer* self = nullptr;
  int calls = 0;
  auto callback = [&] {
    if (++calls != 1) return;
    // Renamed: the conf entry of the new name (priority and group) applies.
    ASSERT_TRUE(self->Configure(Periodic("conf_b", kPriorityFromConf, [&] { ++calls; })).ok());
    ASSERT_TRUE(self->Schedule().ok());
  };
  Timer t(Periodic("conf_a", kPriorityFromConf, callback), &driver_);
  self = &t;
  ASSERT_TRUE(t.Schedule().ok());
  RunFor(kPeriod * 3);
  EXPECT_EQ(Priorities(), (std::vector<int>{3, 12, 12}));
  EXPECT_EQ(Groups(), (std::vector<int>{0, 2, 2}));
  t.Stop();
}

TEST_F(TimerRouteTest, AnExplicitPriorityKeepsTheConfGroup) {
  Timer t(Periodic("conf_b", 5, [] {}), &driver_);
  ASSERT_TRUE(t.Schedule().ok());
  RunFor(kPeriod * 2);
  EXPECT_EQ(Priorities(), (std::vector<int>{5, 5}));
  EXPECT_EQ(Groups(), (std::vector<int>{2, 2}));
  t.Stop();
}

TEST_F(TimerRouteTest, AnAutomaticNameTakesTheDefaultRoute) {
  TimerOptions o = Periodic("", kPriorityFromConf, [] {});
  Timer t(o, &driver_);
  ASSERT_TRUE(t.Schedule().ok());
  RunFor(kPeriod);
  EXPECT_EQ(Priorities(), (std::vector<int>{0}));
  EXPECT_EQ(Groups(), (std::vector<int>{0}));
  t.Stop();
}

}  // namespace
}  // namespace timer
}  // namespace cyber
