// LoanWriter in one process: readers get the writer's own buffer (no
// copy), a slot is held while any reader holds its message, and bad input
// is an error naming the channel and the value. Across processes:
// cyber/transport/dds/cross_process_test.cc.

#include "cyber/node/loan_writer.h"

#include <unistd.h>

#include <cstring>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cyber/common/mutex.h"
#include "cyber/common/test_waits.h"
#include "cyber/node/node.h"
#include "gtest/gtest.h"
#include "scheduler/config/scheduler_config.h"
#include "scheduler/croutine.h"
#include "scheduler/scheduler.h"

namespace cyber {
namespace {

using scheduler::Scheduler;

Scheduler::Options Processors(int n) {
  Scheduler::Options o;
  o.config = scheduler::DefaultSchedulerConfig(n);
  return o;
}

struct Held {
  Mutex mu;
  std::vector<std::shared_ptr<const SharedBytes>> frames ABSL_GUARDED_BY(mu);
  int outside_routine ABSL_GUARDED_BY(mu) = 0;
  size_t size() {
    MutexLock l(&mu);
    return frames.size();
  }
};

class LoanWriterTest : public ::testing::Test {
 protected:
  std::shared_ptr<Reader<SharedBytes>> HoldInto(Held* held) {
    auto reader = listener_.TryCreateReader<SharedBytes>(
        "/camera",
        [held](const std::shared_ptr<const SharedBytes>& frame) {
          MutexLock l(&held->mu);
          held->frames.push_back(frame);
          if (scheduler::CRoutine::Current() == nullptr) ++held->outside_routine;
        },
        16);
    EXPECT_TRUE(reader.ok()) << reader.status();
    return reader.ok() ? *reader : nullptr;
  }

  Scheduler sched_{Processors(2)};
  ChannelBus bus_;
  Node talker_{"camera_driver", &sched_, &bus_};
  Node listener_{"detector", &sched_, &bus_};
};

TEST_F(LoanWriterTest, AReaderInTheProcessGetsTheWritersBufferItself) {
  Held held;
  auto reader = HoldInto(&held);
  LoanWriterOptions options;
  options.slots = 2;
  options.slot_bytes = 1 << 20;
  auto camera = LoanWriter::Create(&talker_, "/camera", options);
  ASSERT_TRUE(camera.ok()) << camera.status();
  absl::StatusOr<LoanedBuffer> frame = (*camera)->Loan();
  ASSERT_TRUE(frame.ok()) << frame.status();
  EXPECT_EQ(frame->capacity(), 1u << 20);
  const uint8_t* where = frame->data();
  std::memset(frame->data(), 7, 1000);
  ASSERT_TRUE((*camera)->Publish(*std::move(frame), 1000).ok());
  ASSERT_TRUE(test::Eventually([&] { return held.size() == 1; }));
  MutexLock l(&held.mu);
  EXPECT_EQ(held.frames[0]->data(), where) << "the reader got a copy";
  EXPECT_EQ(held.frames[0]->size(), 1000u);
  EXPECT_EQ(held.frames[0]->data()[999], 7);
  ASSERT_TRUE(held.frames[0]->loan() != nullptr);
  EXPECT_EQ(held.frames[0]->loan()->segment, (*camera)->segment_name());
  EXPECT_EQ(held.outside_routine, 0);
  EXPECT_EQ((*camera)->stats().published, 1u);
}

TEST_F(LoanWriterTest, ASlotStaysHeldWhileAReaderHoldsItsMessage) {
  Held held;
  auto reader = HoldInto(&held);
  LoanWriterOptions options;
  options.slots = 2;
  options.slot_bytes = 4096;
  auto camera = LoanWriter::Create(&talker_, "/camera", options);
  ASSERT_TRUE(camera.ok());
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<LoanedBuffer> frame = (*camera)->Loan();
    ASSERT_TRUE(frame.ok()) << frame.status();
    frame->data()[0] = static_cast<uint8_t>(i);
    ASSERT_TRUE((*camera)->Publish(*std::move(frame), 1).ok());
  }
  ASSERT_TRUE(test::Eventually([&] { return held.size() == 2; }));
  absl::StatusOr<LoanedBuffer> none = (*camera)->Loan();
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(none.status().message().find("\"/camera\": all 2 slots are in use"),
            std::string::npos)
      << none.status();
  EXPECT_EQ((*camera)->stats().loan_refusals, 1u);
  {
    MutexLock l(&held.mu);
    // Both messages are still what was written.
    EXPECT_EQ(held.frames[0]->data()[0], 0);
    EXPECT_EQ(held.frames[1]->data()[0], 1);
    held.frames.erase(held.frames.begin());  // the reader lets the first go
  }
  absl::StatusOr<LoanedBuffer> again = (*camera)->Loan();
  ASSERT_TRUE(again.ok()) << again.status();
}

TEST_F(LoanWriterTest, AnUnpublishedLoanGoesBackWhenDropped) {
  LoanWriterOptions options;
  options.slots = 1;
  options.slot_bytes = 64;
  auto camera = LoanWriter::Create(&talker_, "/camera", options);
  ASSERT_TRUE(camera.ok());
  {
    absl::StatusOr<LoanedBuffer> frame = (*camera)->Loan();
    ASSERT_TRUE(frame.ok());
    EXPECT_FALSE((*camera)->Loan().ok());
  }
  EXPECT_TRUE((*camera)->Loan().ok());
}

TEST_F(LoanWriterTest, BadInputIsAnErrorNamingTheChannelAndTheValue) {
  LoanWriterOptions options;
  options.slots = 0;
  auto bad = LoanWriter::Create(&talker_, "/camera", options);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find(
                "node \"camera_driver\": loan segment of channel \"/camera\": slots 0"),
            std::string::npos)
      << bad.status();

  options.slots = 2;
  options.slot_bytes = 100;
  auto camera = LoanWriter::Create(&talker_, "/camera", options);
  ASSERT_TRUE(camera.ok()) << camera.status();
  auto other = LoanWriter::Create(&talker_, "/camera", options);
  ASSERT_TRUE(other.ok());

  absl::StatusOr<LoanedBuffer> frame = (*camera)->Loan();
  ASSERT_TRUE(frame.ok());
  absl::Status too_big = (*camera)->Publish(*std::move(frame), 101);
  EXPECT_EQ(too_big.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(too_big.message().find("channel \"/camera\": size 101 is over the buffer's "
                                   "capacity 100"),
            std::string::npos)
      << too_big;
  // The refused buffer's slot came back: both can be loaned again.
  absl::StatusOr<LoanedBuffer> a = (*camera)->Loan();
  absl::StatusOr<LoanedBuffer> b = (*camera)->Loan();
  ASSERT_TRUE(a.ok() && b.ok());
  absl::Status foreign = (*other)->Publish(*std::move(a), 1);
  EXPECT_NE(foreign.message().find("loaned by another writer"), std::string::npos) << foreign;
  absl::Status empty = (*camera)->Publish(LoanedBuffer(), 1);
  EXPECT_NE(empty.message().find("the buffer is empty"), std::string::npos) << empty;

  // A channel already used with another type.
  auto ints = talker_.TryCreateWriter<int>("/ints");
  ASSERT_TRUE(ints.ok());
  auto wrong = LoanWriter::Create(&talker_, "/ints", {});
  EXPECT_FALSE(wrong.ok());
}

TEST_F(LoanWriterTest, AfterShutdownPublishIsRefusedRingsNothingAndTheSlotComesBack) {
  LoanWriterOptions options;
  options.slots = 1;
  options.slot_bytes = 64;
  auto camera = LoanWriter::Create(&talker_, "/camera", options);
  ASSERT_TRUE(camera.ok());
  absl::StatusOr<LoanedBuffer> frame = (*camera)->Loan();
  ASSERT_TRUE(frame.ok());
  talker_.Shutdown();
  absl::Status refused = (*camera)->Publish(*std::move(frame), 1);
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.message().find("node is shut down"), std::string::npos) << refused;
  EXPECT_TRUE((*camera)->Loan().ok());
  // Nothing rang: a reader process at the segment's doorbell would have
  // taken a publish the caller was told failed.
  auto mapping = loan::LoanMapping::Open((*camera)->segment_name());
  ASSERT_TRUE(mapping.ok()) << mapping.status();
  EXPECT_EQ((*mapping)->LastSequence(), 0u);
}

TEST_F(LoanWriterTest, TheSegmentIsRemovedWithItsWriter) {
  std::string name;
  {
    LoanWriterOptions options;
    options.slots = 1;
    options.slot_bytes = 64;
    auto camera = LoanWriter::Create(&talker_, "/camera", options);
    ASSERT_TRUE(camera.ok());
    name = (*camera)->segment_name();
    EXPECT_EQ(access(absl::StrCat("/dev/shm/", name).c_str(), F_OK), 0);
  }
  EXPECT_NE(access(absl::StrCat("/dev/shm/", name).c_str(), F_OK), 0);
}

}  // namespace
}  // namespace cyber
