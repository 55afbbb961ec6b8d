// A program of plain Timers, cyber::Async and in-process Nodes loads no
// Fast-DDS: the process runtime links no transport (tools/layers.txt), and
// its channels stay in the process. The control (fastdds_linked_test): a
// program that links cyber::Init does load it, so the probe can fail.

#include <future>
#include <memory>

#include "absl/time/time.h"
#include "cyber/runtime/process_runtime.h"
#include "cyber/node/node.h"
#include "gtest/gtest.h"
#include "scheduler/default_scheduler.h"
#include "tests/toolchain/linked_libraries.h"
#include "timer/timer.h"

namespace cyber {
namespace {

TEST(NoFastDdsTest, TimersAsyncAndNodesRunWithoutLoadingFastDds) {
  std::promise<void> fired;
  timer::TimerOptions o;
  o.name = "no_dds";
  o.period = absl::Milliseconds(2);
  o.oneshot = true;
  o.callback = [&fired] { fired.set_value(); };
  timer::Timer t(o);
  ASSERT_TRUE(t.Schedule().ok());
  fired.get_future().wait();
  EXPECT_EQ(cyber::Async([] { return 7; }).get(), 7);

  Node node("no_dds_node");
  auto writer = node.TryCreateWriter<int>("/no_dds");
  ASSERT_TRUE(writer.ok()) << writer.status();
  EXPECT_EQ(ProcessRuntime()->remote(), nullptr);

  EXPECT_FALSE(testing::MapsLibrary("libfastrtps"));
  EXPECT_FALSE(testing::MapsLibrary("libfastcdr"));
  ShutdownProcessRuntime();
}

}  // namespace
}  // namespace cyber
