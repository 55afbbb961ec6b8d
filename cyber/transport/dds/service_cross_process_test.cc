// Services between real processes: this test's clients and the server of
// dds_test_peer's "serve" mode (/test/add), on a random DDS domain per
// test, every peer killed and reaped even when an assertion fails.
//
// Nothing here asserts a duration: waits are generous deadlines on a
// condition, and the one timeout that must fire (a slow server) is far
// shorter than the server's work, so a loaded machine only makes the test
// slower.

#include <signal.h>
#include <unistd.h>

#include <future>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "cyber/runtime/runtime.h"
#include "cyber/transport/dds/dds_transport.h"
#include "cyber/transport/dds/testing/service_messages.pb.h"
#include "cyber/transport/dds/testing/dds_test_process.h"
#include "cyber/transport/dds/testing/subprocess.h"
#include "cyber/node/node.h"
#include "gtest/gtest.h"

namespace cyber {
namespace dds {
namespace {

using dds_test::AddRequest;
using dds_test::AddResponse;
using dds_test::Subprocess;
using AddClient = Client<AddRequest, AddResponse>;

using dds_test::Eventually;
using dds_test::kPatience;

constexpr char kService[] = "/test/add";

std::shared_ptr<const AddRequest> Add(int64_t a, int64_t b,
                                      absl::Duration work = absl::ZeroDuration()) {
  auto r = std::make_shared<AddRequest>();
  r->set_a(a);
  r->set_b(b);
  if (work > absl::ZeroDuration()) r->set_work_ns(absl::ToInt64Nanoseconds(work));
  return r;
}

bool Contains(const absl::Status& s, absl::string_view part) {
  return absl::StrContains(s.message(), part);
}

class ServiceCrossProcessTest : public ::testing::Test {
 protected:
  std::unique_ptr<Subprocess> StartServer() { return process_.StartPeer("dds_test_peer", "serve"); }

  std::shared_ptr<AddClient> NewClient() {
    auto client = node_->TryCreateClient<AddRequest, AddResponse>(kService);
    EXPECT_TRUE(client.ok()) << client.status();
    return client.ok() ? *client : nullptr;
  }

  dds_test::DdsTestProcess process_{"service_cross_process_test", "caller_rt", "caller"};
  const std::unique_ptr<Node>& node_ = process_.node;
};

TEST_F(ServiceCrossProcessTest, CallsReachAServerInAnotherProcessEachWithOneOutcome) {
  auto client = NewClient();
  auto peer = StartServer();
  ASSERT_TRUE(client->WaitForService(kPatience)) << "the server never became ready";
  const AddClient::Result r = client->Call(Add(2, 3), kPatience);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)->sum(), 5);
  EXPECT_EQ((*r)->server_pid(), peer->pid());
  // Many at once, from routines: each call gets its own answer, once.
  constexpr int kCalls = 40;
  std::vector<std::shared_future<AddClient::Result>> futures;
  for (int i = 0; i < kCalls; ++i) {
    futures.push_back(client->AsyncCall(Add(i, 1000), kPatience));
  }
  for (int i = 0; i < kCalls; ++i) {
    ASSERT_EQ(futures[i].wait_for(std::chrono::seconds(60)), std::future_status::ready) << i;
    const AddClient::Result& f = futures[i].get();
    ASSERT_TRUE(f.ok()) << i << ": " << f.status();
    EXPECT_EQ((*f)->sum(), i + 1000);
  }
  const ClientStats s = client->stats();
  EXPECT_EQ(s.calls, kCalls + 1u);
  EXPECT_EQ(s.responses, kCalls + 1u);
  EXPECT_EQ(s.timeouts + s.failed + s.server_gone + s.late_responses, 0u);
}

TEST_F(ServiceCrossProcessTest, TwoClientsOfOneProcessEachTakeOnlyTheirOwnResponses) {
  auto a = NewClient();
  auto b = NewClient();
  ASSERT_NE(a->id(), b->id());
  auto peer = StartServer();
  ASSERT_TRUE(a->WaitForService(kPatience));
  ASSERT_TRUE(b->WaitForService(kPatience));
  constexpr int kCalls = 20;
  std::vector<std::shared_future<AddClient::Result>> from_a;
  std::vector<std::shared_future<AddClient::Result>> from_b;
  for (int i = 0; i < kCalls; ++i) {
    // Same sequence numbers in both clients: only the client id tells
    // their responses apart.
    from_a.push_back(a->AsyncCall(Add(i, 0), kPatience));
    from_b.push_back(b->AsyncCall(Add(i, 5000), kPatience));
  }
  for (int i = 0; i < kCalls; ++i) {
    const AddClient::Result& ra = from_a[i].get();
    const AddClient::Result& rb = from_b[i].get();
    ASSERT_TRUE(ra.ok()) << ra.status();
    ASSERT_TRUE(rb.ok()) << rb.status();
    EXPECT_EQ((*ra)->sum(), i);
    EXPECT_EQ((*rb)->sum(), i + 5000);
  }
  // The other client's responses were ignored, not counted as late.
  EXPECT_EQ(a->stats().late_responses, 0u);
  EXPECT_EQ(b->stats().late_responses, 0u);
}

TEST_F(ServiceCrossProcessTest, WithoutAServerAnywhereACallFailsAtOnce) {
  auto client = NewClient();
  const AddClient::Result r = client->Call(Add(1, 2), kPatience);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable) << r.status();
  EXPECT_TRUE(Contains(r.status(), "node \"caller\"")) << r.status();
  EXPECT_TRUE(Contains(r.status(), "service \"/test/add\"")) << r.status();
  EXPECT_TRUE(Contains(r.status(), "none matched in another")) << r.status();
  EXPECT_FALSE(client->ServiceIsReady());
}

TEST_F(ServiceCrossProcessTest, ASlowServerTimesOutAndItsLateResponseIsDroppedAndCounted) {
  auto client = NewClient();
  auto peer = StartServer();
  ASSERT_TRUE(client->WaitForService(kPatience));
  // 200 ms against 2 s of work: a timeout whatever the load.
  const AddClient::Result r =
      client->Call(Add(1, 1, absl::Seconds(2)), absl::Milliseconds(200));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded) << r.status();
  EXPECT_TRUE(Contains(r.status(), "200ms")) << r.status();
  EXPECT_TRUE(Contains(r.status(), "service \"/test/add\"")) << r.status();
  ASSERT_TRUE(Eventually([&] { return client->stats().late_responses == 1; }))
      << "the server's answer never came";
  const ClientStats s = client->stats();
  EXPECT_EQ(s.timeouts, 1u);
  EXPECT_EQ(s.responses, 0u);
  // The server is fine: the next call is answered.
  const AddClient::Result next = client->Call(Add(3, 4), kPatience);
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ((*next)->sum(), 7);
}

TEST_F(ServiceCrossProcessTest, AServerKilledWhileACallIsPendingFailsItAsServerGone) {
  auto client = NewClient();
  auto peer = StartServer();
  ASSERT_TRUE(client->WaitForService(kPatience));
  // A timeout far beyond the transport's lease (2 s): the call must end
  // because the server is declared dead, not by its timeout.
  std::shared_future<AddClient::Result> pending =
      client->AsyncCall(Add(6, 7, absl::Hours(1)), absl::Seconds(300));
  ASSERT_TRUE(peer->WaitForLine("request 6 7", kPatience).has_value())
      << "the server never got the request";
  const pid_t pid = peer->pid();
  peer->Kill(SIGKILL);
  ASSERT_TRUE(peer->Wait(kPatience).has_value());
  ASSERT_EQ(pending.wait_for(std::chrono::seconds(60)), std::future_status::ready)
      << "the call is still pending after the server was killed";
  const absl::Status gone = pending.get().status();
  EXPECT_EQ(gone.code(), absl::StatusCode::kUnavailable) << gone;
  EXPECT_TRUE(Contains(gone, "server is gone")) << gone;
  EXPECT_TRUE(Contains(gone, absl::StrCat("pid ", pid))) << gone;
  EXPECT_TRUE(Contains(gone, "node \"caller\"")) << gone;
  const ClientStats s = client->stats();
  EXPECT_EQ(s.server_gone, 1u);
  EXPECT_EQ(s.timeouts, 0u);
  // No server left: the next call fails at once.
  ASSERT_TRUE(Eventually([&] { return !client->ServiceIsReady(); }));
  EXPECT_EQ(client->Call(Add(1, 1), kPatience).status().code(),
            absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace dds
}  // namespace cyber
