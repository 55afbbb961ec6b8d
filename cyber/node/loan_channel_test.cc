// A SharedBytes channel's receiving end behind a transport (a fake one that
// hands the channel's handler to the test): the first reference of a
// segment through the transport, later publishes at the segment's doorbell
// without it; a transport that controls delivery time (lockstep) gets no
// doorbell, every message waits for its sample; a channel destroyed with a
// doorbell running ends it.

#include <dirent.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cyber/common/mutex.h"
#include "cyber/common/test_waits.h"
#include "cyber/node/node.h"
#include "cyber/runtime/runtime.h"
#include "cyber/transport/loan/loan_reference.h"
#include "cyber/transport/loan/loan_segment.h"
#include "cyber/transport/loan/shared_bytes.h"
#include "cyber/transport/remote_transport.h"
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

class FakeTransport final : public RemoteTransport {
 public:
  explicit FakeTransport(bool controls_delivery_time) : controls_(controls_delivery_time) {}
  bool ControlsDeliveryTime() const override { return controls_; }
  absl::StatusOr<std::shared_ptr<RemotePublisher>> Publisher(const RemoteEndpoint&) override {
    return absl::UnimplementedError("reader side only");
  }
  absl::StatusOr<std::unique_ptr<RemoteSubscription>> Subscribe(const RemoteEndpoint& e,
                                                                SampleHandler handler) override {
    MutexLock l(&mu_);
    type_name_ = e.type_name;
    handler_ = std::move(handler);
    return std::make_unique<RemoteSubscription>();
  }
  uint64_t AddPeerLostListener(std::function<void(const RemotePeer&, bool)>) override { return 0; }
  void RemovePeerLostListener(uint64_t) override {}
  std::vector<RemotePeer> RemoteWriters(const std::string&) const override { return {}; }
  std::vector<RemoteChannelStats> ChannelStats() const override { return {}; }
  std::vector<RemotePeer> LostPeers() const override { return {}; }
  RemotePeer self() const override { return {}; }
  void Shutdown() override {}

  // A sample arriving, as the DDS transport hands it over.
  bool Arrive(const std::string& wire) {
    SampleHandler handler;
    {
      MutexLock l(&mu_);
      handler = handler_;
    }
    RemoteSample sample;
    sample.payload = wire;
    return handler(sample);
  }
  std::string type_name() {
    MutexLock l(&mu_);
    return type_name_;
  }

 private:
  const bool controls_;
  Mutex mu_;
  SampleHandler handler_ ABSL_GUARDED_BY(mu_);
  std::string type_name_ ABSL_GUARDED_BY(mu_);
};

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
    transport_ = std::make_shared<FakeTransport>(controls_delivery_time);
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

  std::shared_ptr<FakeTransport> transport_;
  std::unique_ptr<Runtime> runtime_;
  std::unique_ptr<Node> node_;
  std::shared_ptr<Reader<SharedBytes>> reader_;
  Received received_;
};

TEST_F(LoanChannelTest, AfterTheFirstSampleTheDoorbellDeliversWithoutTheTransport) {
  Start(/*controls_delivery_time=*/false);
  EXPECT_EQ(transport_->type_name(), "cyber.SharedBytes");
  RemoteWriter writer;
  ASSERT_TRUE(transport_->Arrive(writer.Publish(1)));
  ASSERT_TRUE(test::Eventually([&] { return received_.size() == 1; }));
  EXPECT_EQ(DoorbellThreads(), 1);
  // No sample for these: the doorbell brings them.
  std::vector<std::string> late;
  for (int v = 2; v <= 5; ++v) late.push_back(writer.Publish(static_cast<uint8_t>(v)));
  ASSERT_TRUE(test::Eventually([&] { return received_.size() == 5; }));
  // Their samples, arriving now, only confirm.
  for (const std::string& w : late) EXPECT_TRUE(transport_->Arrive(w));
  // Arrive() hands over synchronously: a duplicate would already be in the
  // reader's queue; the pause only lets its routine run, so a slow machine
  // can miss a duplicate, never fail a correct run.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(received_.all(), (std::vector<int>{1, 2, 3, 4, 5}));
}

TEST_F(LoanChannelTest, ATransportThatControlsDeliveryTimeGetsNoDoorbell) {
  Start(/*controls_delivery_time=*/true);
  RemoteWriter writer;
  ASSERT_TRUE(transport_->Arrive(writer.Publish(1)));
  ASSERT_TRUE(test::Eventually([&] { return received_.size() == 1; }));
  const std::string second = writer.Publish(2);
  // Published, rung, but not handed over: only its sample may bring it.
  EXPECT_EQ(DoorbellThreads(), 0);
  // With no doorbell thread nothing can hand it over; the pause gives a
  // wrong one time to show (a slow machine can only miss it, never fail a
  // correct run).
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(received_.size(), 1u);
  ASSERT_TRUE(transport_->Arrive(second));
  ASSERT_TRUE(test::Eventually([&] { return received_.size() == 2; }));
  EXPECT_EQ(received_.all(), (std::vector<int>{1, 2}));
}

TEST_F(LoanChannelTest, AChannelGoneWithItsDoorbellRunningEndsIt) {
  Start(/*controls_delivery_time=*/false);
  RemoteWriter writer;
  ASSERT_TRUE(transport_->Arrive(writer.Publish(1)));
  ASSERT_TRUE(test::Eventually([&] { return received_.size() == 1; }));
  ASSERT_EQ(DoorbellThreads(), 1);
  TearDown();  // the runtime and its bus go; the doorbell thread ends
  EXPECT_EQ(DoorbellThreads(), 0);
  for (int v = 2; v < 10; ++v) writer.Publish(static_cast<uint8_t>(v));
  EXPECT_EQ(received_.size(), 1u);
}

}  // namespace
}  // namespace cyber
