// Component<M0, ...>: one to four channels, the fusion rule (the first
// channel triggers Proc with the latest of the others, not before each has
// delivered), the readers count checked against the arity, and Shutdown.

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "cyber/common/mutex.h"
#include "cyber/common/test_waits.h"
#include "cyber/component/component.h"
#include "gtest/gtest.h"
#include "scheduler/config/scheduler_config.h"
#include "scheduler/scheduler.h"

namespace cyber {
namespace {

struct Camera { int seq = 0; };
struct Gps { int seq = 0; };
struct Imu { int seq = 0; };
struct Radar { int seq = 0; };

// What each Proc saw: the sequence numbers of its arguments.
struct Seen {
  Mutex mu;
  std::vector<std::vector<int>> calls ABSL_GUARDED_BY(mu);
  void Add(std::vector<int> call) {
    MutexLock lock(&mu);
    calls.push_back(std::move(call));
  }
  std::vector<std::vector<int>> Get() {
    MutexLock lock(&mu);
    return calls;
  }
};

class Single : public Component<Camera> {
 public:
  bool Init() override { return true; }
  bool Proc(const std::shared_ptr<Camera>& c) override {
    seen.Add({c->seq});
    return true;
  }
  Seen seen;
};

class Pair : public Component<Camera, Gps> {
 public:
  bool Init() override { return true; }
  bool Proc(const std::shared_ptr<Camera>& c, const std::shared_ptr<Gps>& g) override {
    seen.Add({c->seq, g->seq});
    return c->seq >= 0;
  }
  void Clear() override { cleared = true; }
  Seen seen;
  bool cleared = false;
};

class Four : public Component<Camera, Gps, Imu, Radar> {
 public:
  bool Init() override { return true; }
  bool Proc(const std::shared_ptr<Camera>& c, const std::shared_ptr<Gps>& g,
            const std::shared_ptr<Imu>& i, const std::shared_ptr<Radar>& r) override {
    seen.Add({c->seq, g->seq, i->seq, r->seq});
    return true;
  }
  Seen seen;
};

dag::ReaderConfig ReaderOn(const std::string& channel, int line) {
  dag::ReaderConfig r;
  r.channel = channel;
  r.pending_queue_size = 64;
  r.where = {"graph.dag", line, 13};
  return r;
}

dag::ComponentSpec Spec(const std::string& class_name, std::vector<std::string> channels) {
  dag::ComponentSpec spec;
  spec.class_name = class_name;
  spec.name = "fusion";
  spec.where = {"graph.dag", 4, 5};
  int line = 10;
  for (const std::string& c : channels) spec.readers.push_back(ReaderOn(c, line++));
  return spec;
}

class ComponentTest : public ::testing::Test {
 protected:
  ComponentTest() : runtime_(Options()) {
    context_.runtime = &runtime_;
    node_ = std::make_shared<Node>("test_writer", &runtime_);
  }
  ~ComponentTest() override {
    node_->Shutdown();
    runtime_.Shutdown();
  }
  static Runtime::Options Options() {
    Runtime::Options o;
    o.name = "component_test";
    o.config = scheduler::DefaultSchedulerConfig(2);
    return o;
  }
  template <typename T>
  std::shared_ptr<Writer<T>> WriterOn(const std::string& channel) {
    auto w = node_->CreateWriter<T>(channel);
    EXPECT_NE(w, nullptr) << channel;
    return w;
  }
  template <typename T>
  void WriteAndDeliver(const std::shared_ptr<Writer<T>>& w, int seq) {
    auto m = std::make_shared<T>();
    m->seq = seq;
    ASSERT_TRUE(w->Write(m));
    // Every delivery routine has finished, the component's included.
    ASSERT_TRUE(test::Eventually([&] { return sched_.stats().live == 0; }));
  }

  Runtime runtime_;
  scheduler::Scheduler& sched_ = *runtime_.scheduler();
  ChannelBus& bus_ = *runtime_.bus();
  ComponentContext context_;
  std::shared_ptr<Node> node_;
};

TEST_F(ComponentTest, OneChannelCallsProcForEachMessage) {
  Single c;
  ASSERT_TRUE(c.Initialize(Spec("Single", {"/camera"}), context_).ok());
  auto camera = WriterOn<Camera>("/camera");
  for (int i = 1; i <= 3; ++i) WriteAndDeliver(camera, i);
  EXPECT_EQ(c.seen.Get(), (std::vector<std::vector<int>>{{1}, {2}, {3}}));
  EXPECT_EQ(c.Stats().procs, 3u);
  EXPECT_EQ(c.Stats().unfused, 0u);
  c.Shutdown();
}

TEST_F(ComponentTest, FirstChannelTriggersWithTheLatestOfTheOtherOnceItHasDelivered) {
  Pair c;
  ASSERT_TRUE(c.Initialize(Spec("Pair", {"/camera", "/gps"}), context_).ok());
  auto camera = WriterOn<Camera>("/camera");
  auto gps = WriterOn<Gps>("/gps");

  WriteAndDeliver(camera, 1);  // no GPS yet: dropped, counted
  WriteAndDeliver(camera, 2);
  EXPECT_TRUE(c.seen.Get().empty());
  EXPECT_EQ(c.Stats().unfused, 2u);

  WriteAndDeliver(gps, 100);  // the other channel alone never calls Proc
  EXPECT_TRUE(c.seen.Get().empty());

  WriteAndDeliver(camera, 3);
  WriteAndDeliver(camera, 4);  // the same GPS message again
  WriteAndDeliver(gps, 101);
  WriteAndDeliver(gps, 102);   // only the latest is kept
  WriteAndDeliver(camera, 5);
  EXPECT_EQ(c.seen.Get(),
            (std::vector<std::vector<int>>{{3, 100}, {4, 100}, {5, 102}}));
  const ComponentStats s = c.Stats();
  EXPECT_EQ(s.procs, 3u);
  EXPECT_EQ(s.unfused, 2u);
  EXPECT_EQ(s.proc_failures, 0u);
  EXPECT_EQ(s.name, "fusion");
  EXPECT_EQ(s.class_name, "Pair");

  c.Shutdown();
  EXPECT_TRUE(c.cleared);
  WriteAndDeliver(gps, 103);
  WriteAndDeliver(camera, 6);  // after Shutdown(): no call
  EXPECT_EQ(c.seen.Get().size(), 3u);
}

TEST_F(ComponentTest, FourChannelsWaitForEveryOtherChannel) {
  Four c;
  ASSERT_TRUE(
      c.Initialize(Spec("Four", {"/camera", "/gps", "/imu", "/radar"}), context_).ok());
  auto camera = WriterOn<Camera>("/camera");
  auto gps = WriterOn<Gps>("/gps");
  auto imu = WriterOn<Imu>("/imu");
  auto radar = WriterOn<Radar>("/radar");
  WriteAndDeliver(gps, 10);
  WriteAndDeliver(camera, 1);
  WriteAndDeliver(radar, 30);
  WriteAndDeliver(camera, 2);  // IMU still missing
  WriteAndDeliver(imu, 20);
  WriteAndDeliver(camera, 3);
  EXPECT_EQ(c.seen.Get(), (std::vector<std::vector<int>>{{3, 10, 20, 30}}));
  EXPECT_EQ(c.Stats().unfused, 2u);
  c.Shutdown();
}

TEST_F(ComponentTest, AProcReturningFalseIsCountedAsAFailure) {
  Pair c;
  ASSERT_TRUE(c.Initialize(Spec("Pair", {"/camera", "/gps"}), context_).ok());
  auto camera = WriterOn<Camera>("/camera");
  WriteAndDeliver(WriterOn<Gps>("/gps"), 1);
  WriteAndDeliver(camera, -1);
  EXPECT_EQ(c.Stats().procs, 1u);
  EXPECT_EQ(c.Stats().proc_failures, 1u);
  c.Shutdown();
}

TEST_F(ComponentTest, AnExtraReadersEntryIsALocatedErrorAtTheEntry) {
  Single c;
  const absl::Status s = c.Initialize(Spec("Single", {"/camera", "/gps"}), context_);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "graph.dag:11:13: component \"fusion\" (Single): readers: 2 entries, but "
            "the class reads 1 channel (one readers entry per Component<...> message "
            "type, the first triggers Proc())");
  c.Shutdown();
}

TEST_F(ComponentTest, AMissingReadersEntryIsALocatedErrorAtTheComponent) {
  Pair c;
  absl::Status s = c.Initialize(Spec("Pair", {"/camera"}), context_);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "graph.dag:4:5: component \"fusion\" (Pair): readers: 1 entry, but the "
            "class reads 2 channels (one readers entry per Component<...> message "
            "type, the first triggers Proc())");
  c.Shutdown();

  Single none;
  s = none.Initialize(Spec("Single", {}), context_);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("readers: 0 entries, but the class reads 1 channel"),
            absl::string_view::npos)
      << s.message();
  none.Shutdown();
}

TEST_F(ComponentTest, AChannelOfAnotherTypeIsLocatedAtItsReadersEntry) {
  auto other = WriterOn<Imu>("/gps");  // "/gps" already carries Imu
  Pair c;
  const absl::Status s = c.Initialize(Spec("Pair", {"/camera", "/gps"}), context_);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.message().rfind("graph.dag:11:13: ", 0), 0u) << s.message();
  EXPECT_NE(s.message().find("/gps"), absl::string_view::npos) << s.message();
  c.Shutdown();
}

}  // namespace
}  // namespace cyber
