// A SharedBytes channel's ends behind a transport (a fake one: the test
// plays the other processes): the first reference of a segment through the
// transport, later publishes at the segment's doorbell without it; a
// transport that controls delivery time (lockstep) gets no doorbell, every
// message waits for its sample; a channel destroyed with a doorbell running
// ends it; what goes out as a reference and what as bytes.

#include <dirent.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cyber/common/mutex.h"
#include "cyber/common/test_waits.h"
#include "cyber/node/loan_writer.h"
#include "cyber/node/node.h"
#include "cyber/runtime/runtime.h"
#include "cyber/transport/loan/loan_reference.h"
#include "cyber/transport/loan/loan_segment.h"
#include "cyber/transport/loan/shared_bytes.h"
#include "cyber/transport/testing/fake_transport.h"
#include "gtest/gtest.h"

namespace cyber {
namespace {

// Threads of this process named as a loan inlet's doorbell thread.
int DoorbellThreads() {
  int n = 0;
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return -1;
  while (struct dirent* e = readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream comm(std::string("/proc/self/task/") + e->d_name + "/comm");
    std::string name;
    std::getline(comm, name);
    n += name == "cyber_loan_bell";
  }
  closedir(dir);
  return n;
}

// Another process's LoanWriter, as far as the reader can tell: a segment
// and the references its samples carry. Eight slots: the first test has five
// publishes unread at once (the reader's routine may still hold the first
// while the doorbell thread has not pinned the others), and a slot written
// over before its reader pinned it is lost by design.
class RemoteWriter {
 public:
  RemoteWriter() {
    auto s = loan::LoanSegment::Create("/camera", 8, 64);
    EXPECT_TRUE(s.ok()) << s.status();
    segment_ = *s;
  }
  std::string Publish(uint8_t value) {
    absl::StatusOr<loan::SlotClaim> c = segment_->Claim();
    EXPECT_TRUE(c.ok()) << c.status();
    if (!c.ok()) return "";
    c->data[0] = value;
    const loan::Published p = segment_->Publish(*c, 1, false);
    loan::LoanReference r;
    r.segment = segment_->name();
    r.slot = p.slot;
    r.generation = p.generation;
    r.size = 1;
    r.sequence = p.sequence;
    r.host = loan::ThisHostBootId();
    return loan::EncodeLoan(r);
  }

 private:
  std::shared_ptr<loan::LoanSegment> segment_;
};

struct Received {
  Mutex mu;
  std::vector<int> values ABSL_GUARDED_BY(mu);
  size_t size() {
    MutexLock l(&mu);
    return values.size();
  }
  std::vector<int> all() {
    MutexLock l(&mu);
    return values;
  }
};

class LoanChannelTest : public ::testing::Test {
 protected:
  void Start(bool controls_delivery_time) {
    test::FakeTransportOptions options;
    options.controls_delivery_time = controls_delivery_time;
    transport_ = std::make_shared<test::FakeTransport>(options);
    Runtime::Options o;
    o.name = "loan_channel_test";
    o.remote = transport_;
    runtime_ = std::make_unique<Runtime>(std::move(o));
    node_ = std::make_unique<Node>("detector", runtime_.get());
    ReaderConfig config;
    config.channel_name = "/camera";
    config.pending_queue_size = 64;
    auto reader = node_->TryCreateReader<SharedBytes>(
        config, [this](const std::shared_ptr<const SharedBytes>& m) {
          MutexLock l(&received_.mu);
          received_.values.push_back(m->data()[0]);
        });
    ASSERT_TRUE(reader.ok()) << reader.status();
    reader_ = *reader;
  }
  void TearDown() override {
    reader_.reset();
    if (node_ != nullptr) node_->Shutdown();
    node_.reset();
    if (runtime_ != nullptr) runtime_->Shutdown();
    runtime_.reset();
  }

  std::shared_ptr<test::FakeTransport> transport_;
  std::unique_ptr<Runtime> runtime_;
  std::unique_ptr<Node> node_;
  std::shared_ptr<Reader<SharedBytes>> reader_;
  Received received_;
};

TEST_F(LoanChannelTest, AfterTheFirstSampleTheDoorbellDeliversWithoutTheTransport) {
  Start(/*controls_delivery_time=*/false);
  EXPECT_EQ(transport_->SubscribedType("/camera"), "cyber.SharedBytes");
  RemoteWriter writer;
  ASSERT_TRUE(transport_->Arrive("/camera", writer.Publish(1)));
  ASSERT_TRUE(test::Eventually([&] { return received_.size() == 1; }));
  EXPECT_EQ(DoorbellThreads(), 1);
  // No sample for these: the doorbell brings them.
  std::vector<std::string> late;
  for (int v = 2; v <= 5; ++v) late.push_back(writer.Publish(static_cast<uint8_t>(v)));
  ASSERT_TRUE(test::Eventually([&] { return received_.size() == 5; }));
  // Their samples, arriving now, only confirm.
  for (const std::string& w : late) EXPECT_TRUE(transport_->Arrive("/camera", w));
  // Arrive() hands over synchronously: a duplicate would already be in the
  // reader's queue; the pause only lets its routine run, so a slow machine
  // can miss a duplicate, never fail a correct run.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(received_.all(), (std::vector<int>{1, 2, 3, 4, 5}));
}

TEST_F(LoanChannelTest, ATransportThatControlsDeliveryTimeGetsNoDoorbell) {
  Start(/*controls_delivery_time=*/true);
  RemoteWriter writer;
  ASSERT_TRUE(transport_->Arrive("/camera", writer.Publish(1)));
  ASSERT_TRUE(test::Eventually([&] { return received_.size() == 1; }));
  const std::string second = writer.Publish(2);
  // Published, rung, but not handed over: only its sample may bring it.
  EXPECT_EQ(DoorbellThreads(), 0);
  // With no doorbell thread nothing can hand it over; the pause gives a
  // wrong one time to show (a slow machine can only miss it, never fail a
  // correct run).
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(received_.size(), 1u);
  ASSERT_TRUE(transport_->Arrive("/camera", second));
  ASSERT_TRUE(test::Eventually([&] { return received_.size() == 2; }));
  EXPECT_EQ(received_.all(), (std::vector<int>{1, 2}));
}

TEST_F(LoanChannelTest, AChannelGoneWithItsDoorbellRunningEndsIt) {
  Start(/*controls_delivery_time=*/false);
  RemoteWriter writer;
  ASSERT_TRUE(transport_->Arrive("/camera", writer.Publish(1)));
  ASSERT_TRUE(test::Eventually([&] { return received_.size() == 1; }));
  ASSERT_EQ(DoorbellThreads(), 1);
  TearDown();  // the runtime and its bus go; the doorbell thread ends
  EXPECT_EQ(DoorbellThreads(), 0);
  for (int v = 2; v < 10; ++v) writer.Publish(static_cast<uint8_t>(v));
  EXPECT_EQ(received_.size(), 1u);
}

// A message read in place from another process's segment, written again on
// another channel (a relay), must not go out as that segment's reference:
// the segment is the first channel's (its doorbell, its slots, which its
// writer reuses), so it goes as bytes. This process's own loan on its own
// channel goes as a reference.
TEST_F(LoanChannelTest, OnlyThisProcesssOwnLoanOnItsChannelGoesOutAsAReference) {
  Start(/*controls_delivery_time=*/false);
  auto relay = node_->TryCreateWriter<SharedBytes>("/camera/relayed");
  ASSERT_TRUE(relay.ok()) << relay.status();
  auto keeper = node_->TryCreateReader<SharedBytes>(
      "/camera", [&](const std::shared_ptr<const SharedBytes>& m) {
        if ((*relay)->Write(m)) {
          MutexLock l(&received_.mu);
          received_.values.push_back(-1);
        }
      });
  ASSERT_TRUE(keeper.ok()) << keeper.status();
  RemoteWriter writer;
  ASSERT_TRUE(transport_->Arrive("/camera", writer.Publish(7)));
  // Both readers: the plain one and the relay.
  ASSERT_TRUE(test::Eventually([&] { return received_.size() == 2; }));
  std::vector<std::string> relayed = transport_->Published("/camera/relayed");
  ASSERT_EQ(relayed.size(), 1u);
  absl::StatusOr<loan::DecodedReference> decoded = loan::DecodeReference(relayed[0]);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_FALSE(decoded->loaned);
  EXPECT_EQ(decoded->inline_bytes, std::string(1, '\x07'));

  // This process's LoanWriter: its own channel gets the reference; the
  // same message written on another channel goes as bytes.
  LoanWriterOptions options;
  options.slots = 2;
  options.slot_bytes = 16;
  auto own = LoanWriter::Create(node_.get(), "/camera/own", options);
  ASSERT_TRUE(own.ok()) << own.status();
  std::shared_ptr<const SharedBytes> local;
  auto local_reader = node_->TryCreateReader<SharedBytes>(
      "/camera/own", [&](const std::shared_ptr<const SharedBytes>& m) {
        MutexLock l(&received_.mu);
        local = m;
      });
  ASSERT_TRUE(local_reader.ok()) << local_reader.status();
  absl::StatusOr<LoanedBuffer> buffer = (*own)->Loan();
  ASSERT_TRUE(buffer.ok()) << buffer.status();
  buffer->data()[0] = 9;
  ASSERT_TRUE((*own)->Publish(*std::move(buffer), 1).ok());
  std::vector<std::string> sent = transport_->Published("/camera/own");
  ASSERT_EQ(sent.size(), 1u);
  decoded = loan::DecodeReference(sent[0]);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_TRUE(decoded->loaned);
  EXPECT_EQ(decoded->loan.segment, (*own)->segment_name());
  ASSERT_TRUE(test::Eventually([&] {
    MutexLock l(&received_.mu);
    return local != nullptr;
  }));
  std::shared_ptr<const SharedBytes> message;
  {
    MutexLock l(&received_.mu);
    message = local;
  }
  ASSERT_TRUE((*relay)->Write(message));
  relayed = transport_->Published("/camera/relayed");
  ASSERT_EQ(relayed.size(), 2u);
  decoded = loan::DecodeReference(relayed[1]);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_FALSE(decoded->loaned);
  EXPECT_EQ(decoded->inline_bytes, std::string(1, '\x09'));
}

// A reference naming a segment of another channel (a writer that sent it
// on the wrong channel) is refused, naming both channels; nothing is read.
TEST_F(LoanChannelTest, AReferenceToAnotherChannelsSegmentIsRefused) {
  Start(/*controls_delivery_time=*/false);
  auto other = loan::LoanSegment::Create("/lidar", 2, 16);
  ASSERT_TRUE(other.ok()) << other.status();
  absl::StatusOr<loan::SlotClaim> claim = (*other)->Claim();
  ASSERT_TRUE(claim.ok()) << claim.status();
  const loan::Published p = (*other)->Publish(*claim, 1, false);
  loan::LoanReference r;
  r.segment = (*other)->name();
  r.slot = p.slot;
  r.generation = p.generation;
  r.size = 1;
  r.sequence = p.sequence;
  r.host = loan::ThisHostBootId();
  EXPECT_FALSE(transport_->Arrive("/camera", loan::EncodeLoan(r)));
  EXPECT_EQ(DoorbellThreads(), 0);
  EXPECT_EQ(received_.size(), 0u);
}

}  // namespace
}  // namespace cyber
