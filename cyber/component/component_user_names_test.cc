// A user's component class may use the names it likes: Component<> and
// Component<M...> add no public member whose name a user's own constant
// could collide with. Name lookup inside a member function of a derived
// class searches its base classes before the enclosing namespace, so a
// base member named like the user's namespace constant (kChannels, say)
// would silently take its place; a member the user declares hides the
// base's. Both components here build against their own kChannels, and use
// it, on simulated time.

#include <cstddef>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>

#include "cyber/component/component.h"
#include "cyber/component/component_registry.h"
#include "cyber/simulation/simulated_graph.h"
#include "gtest/gtest.h"

namespace robot {

// The robot's own constant, at namespace scope.
constexpr size_t kChannels = 16;

struct Frame {
  int seq = 0;
};

// Reads one channel, and means the robot's kChannels in Proc().
class Mixer : public cyber::Component<Frame> {
 public:
  bool Init() override { return true; }
  bool Proc(const std::shared_ptr<Frame>&) override {
    seen_channels_ = kChannels;
    return true;
  }
  size_t seen_channels() const { return seen_channels_; }

 private:
  size_t seen_channels_ = 0;
};
CYBER_REGISTER_COMPONENT(Mixer)

// Reads no channel, and declares a kChannels of its own.
class Splitter : public cyber::Component<> {
 public:
  static constexpr size_t kChannels = 4;
  bool Init() override {
    seen_channels_ = kChannels;
    namespace_channels_ = robot::kChannels;
    return true;
  }
  size_t seen_channels() const { return seen_channels_; }
  size_t namespace_channels() const { return namespace_channels_; }

 private:
  size_t seen_channels_ = 0;
  size_t namespace_channels_ = 0;
};
CYBER_REGISTER_COMPONENT(Splitter)

// Uses the namespace's kChannels from Init() of a Component<>.
class Router : public cyber::Component<> {
 public:
  bool Init() override {
    seen_channels_ = kChannels;
    return true;
  }
  size_t seen_channels() const { return seen_channels_; }

 private:
  size_t seen_channels_ = 0;
};
CYBER_REGISTER_COMPONENT(Router)

}  // namespace robot

namespace cyber {
namespace {

std::string WriteFile(const std::string& name, const std::string& text) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(ComponentUserNamesTest, AComponentsOwnKChannelsIsTheOneItUses) {
  SimulatedGraph graph;
  ASSERT_TRUE(graph
                  .Launch({WriteFile("names.dag", R"(
module_config {
  components { class_name: "Mixer" config { name: "mixer" readers { channel: "/audio/frame" } } }
  components { class_name: "Splitter" config { name: "splitter" } }
  components { class_name: "Router" config { name: "router" } }
}
)")})
                  .ok());
  ASSERT_TRUE(graph.Write("/audio/frame", robot::Frame{1}).ok());
  graph.RunFor(absl::Milliseconds(10));

  absl::StatusOr<robot::Mixer*> mixer = graph.Find<robot::Mixer>("mixer");
  ASSERT_TRUE(mixer.ok()) << mixer.status();
  EXPECT_EQ(graph.StatsOf("mixer")->procs, 1u);
  EXPECT_EQ((*mixer)->seen_channels(), 16u);  // the namespace's, not one of the base

  absl::StatusOr<robot::Splitter*> splitter = graph.Find<robot::Splitter>("splitter");
  ASSERT_TRUE(splitter.ok()) << splitter.status();
  EXPECT_EQ((*splitter)->seen_channels(), 4u);
  EXPECT_EQ((*splitter)->namespace_channels(), 16u);

  absl::StatusOr<robot::Router*> router = graph.Find<robot::Router>("router");
  ASSERT_TRUE(router.ok()) << router.status();
  EXPECT_EQ((*router)->seen_channels(), 16u);
  graph.Stop();
}

}  // namespace
}  // namespace cyber
