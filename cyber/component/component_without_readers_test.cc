// Component<> (no readers), as in Cyber RT: a class with only Init()
// registers, is listed under `components` with no `readers`, starts its own
// work (here a Timer that publishes) and stops cleanly: Shutdown() stops its
// node and calls Clear(), which stops the timer. A `readers` entry is
// refused, naming the entry. On simulated time, so the counts are exact.

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cyber/component/component.h"
#include "cyber/component/component_registry.h"
#include "cyber/mainboard/launcher.h"
#include "cyber/simulation/simulated_graph.h"
#include "gtest/gtest.h"
#include "timer/timer.h"

namespace cyber {
namespace {

struct Beat {
  int seq = 0;
};

// What Clear() saw, for the test (the component is destroyed after it).
std::atomic<int> g_clears{0};
std::atomic<bool> g_timer_running_after_clear{true};

// A control loop: publishes a Beat every 50 ms on a Timer it starts itself.
class BeatLoop : public Component<> {
 public:
  bool Init() override {
    writer_ = node_->CreateWriter<Beat>("/loop/beat");
    if (writer_ == nullptr) return false;
    // Cyber RT's constructor: the graph's timer system (simulated here).
    timer_ = std::make_unique<Timer>(50, [this] { Step(); }, false);
    timer_->Start();
    return timer_->IsRunning();
  }
  void Clear() override {
    timer_->Stop();
    g_timer_running_after_clear = timer_->IsRunning();
    ++g_clears;
  }
  int steps() const { return steps_.load(); }

 private:
  void Step() {
    Beat b;
    b.seq = ++steps_;
    writer_->Write(b);
  }

  std::shared_ptr<Writer<Beat>> writer_;
  std::unique_ptr<Timer> timer_;
  std::atomic<int> steps_{0};
};
CYBER_REGISTER_COMPONENT(BeatLoop)

std::string WriteFile(const std::string& name, const std::string& text) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(ComponentWithoutReadersTest, StartsItsOwnTimerPublishesAndStopsCleanly) {
  g_clears = 0;
  g_timer_running_after_clear = true;
  SimulatedGraph graph;
  ASSERT_TRUE(graph
                  .Launch({WriteFile("loop.dag",
                                     "module_config {\n"
                                     "  components { class_name: \"BeatLoop\" config { name: "
                                     "\"loop\" } }\n"
                                     "}\n")})
                  .ok());
  auto beats = graph.Tap<Beat>("/loop/beat");
  ASSERT_TRUE(beats.ok()) << beats.status();
  absl::StatusOr<BeatLoop*> loop = graph.Find<BeatLoop>("loop");
  ASSERT_TRUE(loop.ok()) << loop.status();
  graph.RunFor(absl::Seconds(1));

  // Every 50 ms, on the graph's clock.
  ASSERT_EQ((*beats)->size(), 20u);
  const auto received = (*beats)->received();
  for (size_t i = 0; i < received.size(); ++i) {
    EXPECT_EQ(received[i].at, absl::Milliseconds(50) * static_cast<int64_t>(i + 1));
    EXPECT_EQ(received[i].message->seq, static_cast<int>(i + 1));
  }
  EXPECT_EQ((*loop)->steps(), 20);
  // No Proc(): no counts, `-` in the summary.
  const ComponentStats s = *graph.StatsOf("loop");
  EXPECT_FALSE(s.has_proc);
  EXPECT_FALSE(s.timer);
  EXPECT_EQ(s.procs, 0u);
  const std::string table = Launcher::SummaryTable(graph.Stats());
  EXPECT_NE(table.find("\nloop                 BeatLoop                            -          -"
                       "         -         -         -        -        -        -        -"
                       "        -\n"),
            std::string::npos)
      << table;
  EXPECT_EQ(Launcher::StatusLine(graph.Stats()), "loop (no Proc)");

  graph.Stop();
  EXPECT_EQ(g_clears, 1);
  EXPECT_FALSE(g_timer_running_after_clear);
  EXPECT_EQ((*beats)->size(), 20u);
  EXPECT_FALSE(graph.Find<BeatLoop>("loop").ok());  // destroyed by Stop()
}

TEST(ComponentWithoutReadersTest, AReadersEntryIsRefusedNamingIt) {
  g_clears = 0;
  SimulatedGraph graph;
  const std::string dag = WriteFile("loop_with_reader.dag",
                                    "module_config {\n"
                                    "  components {\n"
                                    "    class_name: \"BeatLoop\"\n"
                                    "    config { name: \"loop\"\n"
                                    "      readers { channel: \"/loop/in\" } }\n"
                                    "  }\n"
                                    "}\n");
  const absl::Status s = graph.Launch({dag});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_EQ(s.message(), dag + ":5:7: component \"loop\" (BeatLoop): readers: 1 entry, but the "
                               "class reads no channel (a Component<> has no Proc(); it "
                               "starts its own work in Init())")
      << s;
  EXPECT_TRUE(graph.Stats().empty());
  EXPECT_EQ(g_clears, 0);  // Init() did not run, so neither does Clear()
}

TEST(ComponentWithoutReadersTest, UnderTimerComponentsItIsRefusedNamingTheKind) {
  SimulatedGraph graph;
  const std::string dag =
      WriteFile("loop_as_timer.dag",
                "module_config {\n"
                "  timer_components { class_name: \"BeatLoop\" config { name: \"loop\" "
                "interval: 10 } }\n"
                "}\n");
  const absl::Status s = graph.Launch({dag});
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("is not a timer component; list it under components"),
            std::string::npos)
      << s;
}

}  // namespace
}  // namespace cyber
