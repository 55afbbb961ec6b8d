// Services between real processes: this test's clients and the servers of
// dds_test_peer's "serve" mode (/test/add_<random>, and the deferred
// /test/add_<random>_deferred), on a random DDS domain per test, every peer
// killed and reaped even when an assertion fails. The names are random as
// well: tests running at the same time on this host (other runs, other
// clones) may draw the same domain, and must still never meet.
//
// Nothing here asserts a duration: waits are generous deadlines on a
// condition. A timeout that must fire is either far shorter than the
// server's work (a slow server) or fires while the server is held by the
// test (a kHold request stays in its callback until the test writes
// "release"), so a loaded machine only makes the test slower. What the
// server did is read from the peer's own counts (its "stats" command).

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <fastdds/dds/core/status/PublicationMatchedStatus.hpp>
#include <fastdds/dds/domain/DomainParticipant.hpp>
#include <fastdds/dds/domain/DomainParticipantFactory.hpp>
#include <fastdds/dds/domain/qos/DomainParticipantQos.hpp>
#include <fastdds/dds/publisher/DataWriter.hpp>
#include <fastdds/dds/publisher/Publisher.hpp>
#include <fastdds/dds/topic/Topic.hpp>
#include <fastdds/dds/topic/TypeSupport.hpp>
#include <fastdds/rtps/transport/UDPv4TransportDescriptor.h>
#include <fastdds/rtps/transport/shared_mem/SharedMemTransportDescriptor.h>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "cyber/common/mutex.h"
#include "cyber/runtime/runtime.h"
#include "cyber/service/service_common.h"
#include "cyber/transport/dds/dds_qos.h"
#include "cyber/transport/dds/dds_transport.h"
#include "cyber/transport/dds/frame_topic_type.h"
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

// "/test/add_<random>", this test's own.
std::string UniqueServiceName() {
  std::random_device rd;
  return absl::StrCat("/test/add_", absl::Hex((static_cast<uint64_t>(rd()) << 32) | rd()));
}

std::shared_ptr<const AddRequest> Add(int64_t a, int64_t b,
                                      absl::Duration work = absl::ZeroDuration(),
                                      AddRequest::Behavior behavior = AddRequest::kAnswer) {
  auto r = std::make_shared<AddRequest>();
  r->set_a(a);
  r->set_b(b);
  if (work > absl::ZeroDuration()) r->set_work_ns(absl::ToInt64Nanoseconds(work));
  r->set_behavior(behavior);
  return r;
}

std::shared_ptr<const AddRequest> Add(int64_t a, int64_t b, AddRequest::Behavior behavior) {
  return Add(a, b, absl::ZeroDuration(), behavior);
}

// The peer's counts (its "stats" line: key=value pairs; see Serve in
// dds_test_peer.cc); -1 for a count it did not give (it did not answer).
struct PeerStats {
  int64_t operator[](const std::string& key) const {
    auto it = counts.find(key);
    return it != counts.end() ? it->second : -1;
  }
  std::map<std::string, int64_t> counts;
};

PeerStats StatsOf(Subprocess* peer) {
  PeerStats stats;
  if (!peer->WriteLine("stats")) return stats;
  const std::optional<std::string> line = peer->WaitForLine("stats ", kPatience);
  if (!line.has_value()) return stats;
  for (absl::string_view field : absl::StrSplit(*line, ' ', absl::SkipEmpty())) {
    const std::pair<std::string, std::string> kv = absl::StrSplit(field, absl::MaxSplits('=', 1));
    int64_t n = 0;
    if (absl::SimpleAtoi(kv.second, &n)) stats.counts[kv.first] = n;
  }
  return stats;
}

// Asks the peer for its counts until `holds` says yes (or kPatience
// passes); returns the last ones.
template <typename F>
PeerStats PeerStatsWhen(Subprocess* peer, F holds) {
  PeerStats last;
  Eventually([&] {
    last = StatsOf(peer);
    return holds(last);
  });
  return last;
}

std::string Show(const PeerStats& stats) {
  std::string out;
  for (const auto& [key, value] : stats.counts) absl::StrAppend(&out, key, "=", value, " ");
  return out;
}

bool Release(Subprocess* peer) {
  return peer->WriteLine("release") && peer->WaitForLine("released", kPatience).has_value();
}

// A writer of hand-made frames on one channel, straight on Fast-DDS (its
// own participant, shared memory and loopback as the transport's): what a
// process of an older version of this code sends.
class RawFrameWriter {
 public:
  RawFrameWriter(uint32_t domain, const std::string& channel, const std::string& type_name,
                 const ChannelQos& qos) {
    namespace fdds = eprosima::fastdds::dds;
    fdds::DomainParticipantQos pqos;
    pqos.name("raw_frame_writer");
    pqos.transport().use_builtin_transports = false;
    pqos.transport().user_transports.push_back(
        std::make_shared<eprosima::fastdds::rtps::SharedMemTransportDescriptor>());
    auto udp = std::make_shared<eprosima::fastdds::rtps::UDPv4TransportDescriptor>();
    udp->interfaceWhiteList.push_back("127.0.0.1");
    pqos.transport().user_transports.push_back(udp);
    participant_ = fdds::DomainParticipantFactory::get_instance()->create_participant(
        static_cast<fdds::DomainId_t>(domain), pqos);
    if (participant_ == nullptr) return;
    fdds::TypeSupport type(new FrameTopicType(type_name));
    type.register_type(participant_);
    topic_ = participant_->create_topic(channel, type_name, fdds::TOPIC_QOS_DEFAULT);
    publisher_ = participant_->create_publisher(fdds::PUBLISHER_QOS_DEFAULT);
    if (topic_ == nullptr || publisher_ == nullptr) return;
    writer_ = publisher_->create_datawriter(topic_, WriterQos(qos));
  }
  ~RawFrameWriter() {
    if (participant_ == nullptr) return;
    if (writer_ != nullptr) publisher_->delete_datawriter(writer_);
    if (publisher_ != nullptr) participant_->delete_publisher(publisher_);
    if (topic_ != nullptr) participant_->delete_topic(topic_);
    eprosima::fastdds::dds::DomainParticipantFactory::get_instance()->delete_participant(
        participant_);
  }
  RawFrameWriter(const RawFrameWriter&) = delete;
  RawFrameWriter& operator=(const RawFrameWriter&) = delete;

  bool ok() const { return writer_ != nullptr; }
  bool Matched() const {
    eprosima::fastdds::dds::PublicationMatchedStatus status;
    writer_->get_publication_matched_status(status);
    return status.current_count > 0;
  }
  bool Write(const std::string& frame) {
    FrameSample sample;
    sample.bytes = frame;
    return writer_->write(&sample);
  }

 private:
  eprosima::fastdds::dds::DomainParticipant* participant_ = nullptr;
  eprosima::fastdds::dds::Topic* topic_ = nullptr;
  eprosima::fastdds::dds::Publisher* publisher_ = nullptr;
  eprosima::fastdds::dds::DataWriter* writer_ = nullptr;
};

void PutLe(uint64_t value, size_t bytes, std::string* out) {
  for (size_t i = 0; i < bytes; ++i) out->push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

// A version-1 request frame (sample_frame.h: a 48-byte header, no budget),
// written out by hand, not by this version's encoder.
std::string Version1Request(uint64_t client, uint64_t sequence, const std::string& payload) {
  std::string f = "CYBR";
  PutLe(1, 1, &f);   // version
  PutLe(1, 1, &f);   // kind: request
  PutLe(48, 2, &f);  // header size
  PutLe(payload.size(), 4, &f);
  PutLe(0, 4, &f);         // reserved
  PutLe(sequence, 8, &f);  // the channel's sequence
  PutLe(0, 8, &f);         // sent at
  PutLe(client, 8, &f);
  PutLe(sequence, 8, &f);
  return f + payload;
}

bool Ready(const std::shared_future<AddClient::Result>& f) {
  return f.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

bool Contains(const absl::Status& s, absl::string_view part) {
  return absl::StrContains(s.message(), part);
}

class ServiceCrossProcessTest : public ::testing::Test {
 protected:
  // `options`: the servers' ServiceOptions ("concurrency=4", "queue_depth=1").
  std::unique_ptr<Subprocess> StartServer(std::vector<std::string> options = {}) {
    options.push_back(absl::StrCat("service=", service_));
    return process_.StartPeer("dds_test_peer", "serve", options);
  }

  // A client of service_, or of `service`.
  std::shared_ptr<AddClient> NewClient(const std::string& service = "") {
    auto client =
        node_->TryCreateClient<AddRequest, AddResponse>(service.empty() ? service_ : service);
    EXPECT_TRUE(client.ok()) << client.status();
    return client.ok() ? *client : nullptr;
  }

  // `service`: "node \"caller\": service \"<service>\"", how the client's
  // errors begin.
  static std::string CallerOf(const std::string& service) {
    return absl::StrCat("node \"caller\": service \"", service, "\"");
  }

  const std::string service_ = UniqueServiceName();
  const std::string deferred_service_ = service_ + "_deferred";

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
  EXPECT_TRUE(Contains(r.status(), CallerOf(service_))) << r.status();
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
  EXPECT_TRUE(Contains(r.status(), CallerOf(service_))) << r.status();
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

TEST_F(ServiceCrossProcessTest, AServerFailureInAnotherProcessReachesTheClientAsItself) {
  auto plain = NewClient();
  auto deferred = NewClient(deferred_service_);
  auto peer = StartServer();
  ASSERT_TRUE(plain->WaitForService(kPatience));
  ASSERT_TRUE(deferred->WaitForService(kPatience));
  // Each call would time out (DEADLINE_EXCEEDED) if the failure did not
  // travel: the server's own code and words must arrive instead.
  struct Case {
    std::shared_ptr<AddClient> client;
    AddRequest::Behavior behavior;
    absl::StatusCode code;
    std::string words;
    bool names_server;  // the failure says which server failed
  };
  const std::vector<Case> cases = {
      {plain, AddRequest::kThrow, absl::StatusCode::kInternal,
       "the service callback threw: no sum for 7", true},
      {plain, AddRequest::kNullResponse, absl::StatusCode::kInternal,
       "the service callback left the response null", true},
      {deferred, AddRequest::kThrow, absl::StatusCode::kInternal,
       "the service callback threw: no sum for 7", true},
      // ServiceResponder::Send(nullptr): named like the other failures.
      {deferred, AddRequest::kNullResponse, absl::StatusCode::kInternal,
       "answered with a null response", true},
      // Fail(status): the status as the callback made it.
      {deferred, AddRequest::kFailNotFound, absl::StatusCode::kNotFound, "no entry for 7",
       false},
      {deferred, AddRequest::kDropResponder, absl::StatusCode::kInternal,
       "dropped the request without an answer", true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(AddRequest::Behavior_Name(c.behavior));
    const AddClient::Result r = c.client->Call(Add(7, 1, c.behavior), kPatience);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), c.code) << r.status();
    EXPECT_TRUE(Contains(r.status(), c.words)) << r.status();
    // Who failed it, in the server's words, and who asked, in the client's.
    if (c.names_server) {
      EXPECT_TRUE(Contains(r.status(), "the server (node \"adder\")")) << r.status();
    }
    EXPECT_TRUE(Contains(r.status(), CallerOf(c.client->service_name()))) << r.status();
  }
  const ClientStats p = plain->stats();
  EXPECT_EQ(p.failed, 2u);
  EXPECT_EQ(p.timeouts, 0u);
  const ClientStats d = deferred->stats();
  EXPECT_EQ(d.failed, 4u);
  EXPECT_EQ(d.timeouts, 0u);
  // Counted on the server's side as what they were.
  const PeerStats s = StatsOf(peer.get());
  EXPECT_EQ(s["plain.callback_errors"], 2) << Show(s);
  EXPECT_EQ(s["deferred.callback_errors"], 1) << Show(s);
  EXPECT_EQ(s["deferred.errors"], 2) << Show(s);  // Fail, Send(nullptr)
  EXPECT_EQ(s["deferred.abandoned"], 1) << Show(s);
  EXPECT_EQ(s["plain.send_failures"] + s["deferred.send_failures"], 0) << Show(s);
  // Both servers still serve.
  for (const auto& client : {plain, deferred}) {
    const AddClient::Result ok = client->Call(Add(3, 4), kPatience);
    ASSERT_TRUE(ok.ok()) << ok.status();
    EXPECT_EQ((*ok)->sum(), 7);
  }
}

// A serial server of `peer`, whose counts are `prefix`.* ("plain",
// "deferred"), busy with a held request; the requests queued behind it:
// three whose clients wait 100 ms, and one whose client waits forever.
void ExpectRequestsPastTheirDeadlineSkipped(AddClient* client, Subprocess* peer,
                                            const std::string& prefix) {
  SCOPED_TRACE(prefix);
  auto count = [&prefix](const PeerStats& s, const std::string& name) {
    return s[absl::StrCat(prefix, ".", name)];
  };
  const PeerStats before = StatsOf(peer);
  constexpr absl::Duration kShort = absl::Milliseconds(100);
  std::shared_future<AddClient::Result> first =
      client->AsyncCall(Add(1, 0, AddRequest::kHold), absl::InfiniteDuration());
  ASSERT_EQ(PeerStatsWhen(peer, [](const PeerStats& s) { return s["inside"] == 1; })["inside"],
            1)
      << "the server never began the first request";
  std::vector<std::shared_future<AddClient::Result>> impatient;
  for (int i = 0; i < 3; ++i) impatient.push_back(client->AsyncCall(Add(10 + i, 0), kShort));
  std::shared_future<AddClient::Result> patient =
      client->AsyncCall(Add(2, 0), absl::InfiniteDuration());
  const PeerStats queued =
      PeerStatsWhen(peer, [&](const PeerStats& s) { return count(s, "pending") == 4; });
  ASSERT_EQ(count(queued, "pending"), 4) << Show(queued);
  // Every impatient request had arrived by now, so the server's deadline of
  // each (its arrival plus 100 ms, on the same CLOCK_MONOTONIC as ours) is
  // at most 100 ms after this instant: once that has passed, all three are
  // past their deadline, however slow the machine.
  const auto all_arrived = std::chrono::steady_clock::now();
  for (auto& f : impatient) {
    ASSERT_EQ(f.wait_for(std::chrono::seconds(60)), std::future_status::ready);
    EXPECT_EQ(f.get().status().code(), absl::StatusCode::kDeadlineExceeded) << f.get().status();
  }
  ASSERT_TRUE(Eventually([&] {
    return std::chrono::steady_clock::now() - all_arrived >=
           absl::ToChronoMilliseconds(kShort + absl::Milliseconds(1));
  }));
  ASSERT_TRUE(Release(peer));
  ASSERT_EQ(first.wait_for(std::chrono::seconds(60)), std::future_status::ready);
  ASSERT_TRUE(first.get().ok()) << first.get().status();
  EXPECT_EQ((*first.get())->sum(), 1);
  // Served after the skipped ones, though it waited longest: no deadline.
  ASSERT_EQ(patient.wait_for(std::chrono::seconds(60)), std::future_status::ready);
  ASSERT_TRUE(patient.get().ok()) << patient.get().status();
  EXPECT_EQ((*patient.get())->sum(), 2);
  // The server never ran the impatient ones' callbacks and sent them
  // nothing: a response would have come before `patient`'s (one writer,
  // reliable, in order) and been counted late.
  const PeerStats after = StatsOf(peer);
  EXPECT_EQ(count(after, "skipped_past_deadline") - count(before, "skipped_past_deadline"), 3)
      << Show(after);
  EXPECT_EQ(count(after, "responses") - count(before, "responses"), 2) << Show(after);
  EXPECT_EQ(after["runs"] - before["runs"], 2) << Show(after);
  const ClientStats c = client->stats();
  EXPECT_EQ(c.timeouts, 3u);
  EXPECT_EQ(c.responses, 2u);
  EXPECT_EQ(c.late_responses, 0u);
}

TEST_F(ServiceCrossProcessTest, ASerialServerInAnotherProcessSkipsRequestsPastTheirDeadline) {
  auto plain = NewClient();
  auto deferred = NewClient(deferred_service_);
  auto peer = StartServer();
  ASSERT_TRUE(plain->WaitForService(kPatience));
  ASSERT_TRUE(deferred->WaitForService(kPatience));
  ExpectRequestsPastTheirDeadlineSkipped(plain.get(), peer.get(), "plain");
  ASSERT_TRUE(peer->WriteLine("rearm") && peer->WaitForLine("rearmed", kPatience).has_value());
  ExpectRequestsPastTheirDeadlineSkipped(deferred.get(), peer.get(), "deferred");
}

TEST_F(ServiceCrossProcessTest, AFullQueueInAnotherProcessRefusesAtOnceNamingTheServerAndDepth) {
  auto client = NewClient();
  auto peer = StartServer({"concurrency=1", "queue_depth=1"});
  ASSERT_TRUE(client->WaitForService(kPatience));
  std::shared_future<AddClient::Result> busy =
      client->AsyncCall(Add(1, 0, AddRequest::kHold), kPatience);
  ASSERT_EQ(PeerStatsWhen(peer.get(), [](const PeerStats& s) { return s["inside"] == 1; })
                ["inside"],
            1)
      << "the server never began the first request";
  // A burst: the first waits in the queue (depth 1), the rest are refused
  // while the server is still held, so long before their timeouts.
  std::vector<std::shared_future<AddClient::Result>> burst;
  for (int i = 0; i < 4; ++i) burst.push_back(client->AsyncCall(Add(10 + i, 0), kPatience));
  ASSERT_TRUE(Eventually([&] {
    int ready = 0;
    for (const auto& f : burst) ready += Ready(f) ? 1 : 0;
    return ready == 3;
  })) << "the refusals never came";
  // The newest ones are refused: requests arrive in order (one writer).
  EXPECT_FALSE(Ready(burst[0]));
  for (int i = 1; i < 4; ++i) {
    const absl::Status refused = burst[i].get().status();
    EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted) << refused;
    EXPECT_TRUE(Contains(refused, "the server (node \"adder\")")) << refused;
    EXPECT_TRUE(Contains(refused, "queue is full (1 waiting")) << refused;
    EXPECT_TRUE(Contains(refused, CallerOf(service_))) << refused;
  }
  EXPECT_EQ(client->stats().refused, 3u);
  const PeerStats full = StatsOf(peer.get());
  EXPECT_EQ(full["plain.refused_full"], 3) << Show(full);
  EXPECT_EQ(full["plain.pending"], 1) << Show(full);
  EXPECT_EQ(full["inside"], 1) << Show(full);  // still held
  ASSERT_TRUE(Release(peer.get()));
  for (const auto* f : {&busy, &burst[0]}) {
    ASSERT_EQ(f->wait_for(std::chrono::seconds(60)), std::future_status::ready);
    EXPECT_TRUE(f->get().ok()) << f->get().status();
  }
  const ClientStats c = client->stats();
  EXPECT_EQ(c.responses, 2u);
  EXPECT_EQ(c.timeouts + c.failed, 0u);
}

TEST_F(ServiceCrossProcessTest, AServerInAnotherProcessRunsUpToConcurrencyCallbacksSideBySide) {
  auto client = NewClient();
  auto peer = StartServer({"concurrency=4"});
  ASSERT_TRUE(client->WaitForService(kPatience));
  // Five held requests: four callbacks begin and stay inside until the
  // release, the fifth waits for a free lane. No timing involved.
  std::vector<std::shared_future<AddClient::Result>> calls;
  for (int i = 0; i < 5; ++i) {
    calls.push_back(client->AsyncCall(Add(i, 100, AddRequest::kHold), absl::InfiniteDuration()));
  }
  const PeerStats held = PeerStatsWhen(peer.get(), [](const PeerStats& s) {
    return s["inside"] == 4 && s["plain.pending"] == 1;
  });
  ASSERT_EQ(held["inside"], 4) << Show(held);
  ASSERT_EQ(held["plain.pending"], 1) << Show(held);
  ASSERT_TRUE(Release(peer.get()));
  for (int i = 0; i < 5; ++i) {
    ASSERT_EQ(calls[i].wait_for(std::chrono::seconds(60)), std::future_status::ready) << i;
    ASSERT_TRUE(calls[i].get().ok()) << calls[i].get().status();
    EXPECT_EQ((*calls[i].get())->sum(), i + 100);
  }
  const PeerStats s = StatsOf(peer.get());
  EXPECT_EQ(s["max_inside"], 4) << Show(s);
  EXPECT_EQ(s["runs"], 5) << Show(s);
  EXPECT_EQ(s["plain.responses"], 5) << Show(s);
}

TEST_F(ServiceCrossProcessTest, ADeferredServerInAnotherProcessAnswersFromATimerARoutineOrAThread) {
  auto client = NewClient(deferred_service_);
  auto peer = StartServer();  // one callback at a time
  ASSERT_TRUE(client->WaitForService(kPatience));
  // The first is kept by the callback and answered by the peer's command
  // thread on "release". Its callback has returned, so the serial server
  // goes on: the timer's and the routine's answers come before it.
  std::shared_future<AddClient::Result> by_thread =
      client->AsyncCall(Add(1, 0, AddRequest::kAnswerFromThread), kPatience);
  std::shared_future<AddClient::Result> by_timer = client->AsyncCall(
      Add(2, 0, absl::Milliseconds(20), AddRequest::kAnswerFromTimer), kPatience);
  std::shared_future<AddClient::Result> by_routine = client->AsyncCall(
      Add(3, 0, absl::Milliseconds(20), AddRequest::kAnswerFromRoutine), kPatience);
  for (const auto& [f, sum, by] : {std::make_tuple(&by_timer, 2, "timer"),
                                   std::make_tuple(&by_routine, 3, "routine")}) {
    ASSERT_EQ(f->wait_for(std::chrono::seconds(60)), std::future_status::ready) << by;
    ASSERT_TRUE(f->get().ok()) << by << ": " << f->get().status();
    EXPECT_EQ((*f->get())->sum(), sum);
    EXPECT_EQ((*f->get())->answered_by(), by);
  }
  const PeerStats waiting = StatsOf(peer.get());
  EXPECT_EQ(waiting["deferred.in_progress"], 1) << Show(waiting);  // the thread's
  EXPECT_EQ(waiting["inside"], 0) << Show(waiting);
  ASSERT_TRUE(Release(peer.get()));
  ASSERT_EQ(by_thread.wait_for(std::chrono::seconds(60)), std::future_status::ready);
  ASSERT_TRUE(by_thread.get().ok()) << by_thread.get().status();
  EXPECT_EQ((*by_thread.get())->answered_by(), "thread");
  const PeerStats s = StatsOf(peer.get());
  EXPECT_EQ(s["deferred.responses"], 3) << Show(s);
  EXPECT_EQ(s["deferred.in_progress"], 0) << Show(s);
  EXPECT_EQ(client->stats().responses, 3u);
}

TEST_F(ServiceCrossProcessTest, AVersion1RequestFrameIsServedWithoutADeadline) {
  auto client = NewClient();
  auto peer = StartServer();
  ASSERT_TRUE(client->WaitForService(kPatience));
  // The answers to the old client, as they come back on the response
  // channel (a version-2 frame: an old reader decodes it as well).
  constexpr uint64_t kOldClient = 0x0123456789abcdefu;
  Mutex mu;
  std::vector<std::pair<Correlation, std::string>> answers;
  RemoteEndpoint responses;
  responses.channel = transport_internal::ResponseChannel(service_);
  responses.type_name = AddResponse::descriptor()->full_name();
  responses.qos = transport_internal::ResponseQos();
  responses.node = "old_client";
  auto inlet = process_.transport->Subscribe(responses, [&](const RemoteSample& sample) {
    if (sample.correlation.client != kOldClient) return true;
    MutexLock lock(&mu);
    answers.emplace_back(sample.correlation, std::string(sample.payload));
    return true;
  });
  ASSERT_TRUE(inlet.ok()) << inlet.status();
  RawFrameWriter old(process_.domain, transport_internal::RequestChannel(service_),
                     AddRequest::descriptor()->full_name(), transport_internal::RequestQos());
  ASSERT_TRUE(old.ok());
  ASSERT_TRUE(Eventually([&] { return old.Matched(); })) << "the server never matched";
  // Queued behind a held request for as long as the test likes: without a
  // budget it has no deadline, so it is served whenever its turn comes.
  std::shared_future<AddClient::Result> busy =
      client->AsyncCall(Add(1, 0, AddRequest::kHold), absl::InfiniteDuration());
  const PeerStats busy_now =
      PeerStatsWhen(peer.get(), [](const PeerStats& s) { return s["inside"] == 1; });
  ASSERT_EQ(busy_now["inside"], 1) << Show(busy_now);
  std::string payload;
  ASSERT_TRUE(Add(20, 22)->SerializeToString(&payload));
  ASSERT_TRUE(old.Write(Version1Request(kOldClient, 1, payload)));
  const PeerStats queued = PeerStatsWhen(
      peer.get(), [](const PeerStats& s) { return s["plain.pending"] == 1; });
  ASSERT_EQ(queued["plain.pending"], 1) << Show(queued);
  ASSERT_TRUE(Release(peer.get()));
  ASSERT_TRUE(Eventually([&] {
    MutexLock lock(&mu);
    return !answers.empty();
  })) << "the old client got no answer";
  MutexLock lock(&mu);
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_EQ(answers[0].first.kind, Correlation::Kind::kResponse);
  EXPECT_EQ(answers[0].first.sequence, 1u);
  AddResponse response;
  ASSERT_TRUE(response.ParseFromString(answers[0].second));
  EXPECT_EQ(response.sum(), 42);
  const PeerStats s = StatsOf(peer.get());
  EXPECT_EQ(s["plain.requests"], 2) << Show(s);
  EXPECT_EQ(s["plain.responses"], 2) << Show(s);
  EXPECT_EQ(s["plain.skipped_past_deadline"], 0) << Show(s);
  ASSERT_EQ(busy.wait_for(std::chrono::seconds(60)), std::future_status::ready);
  EXPECT_TRUE(busy.get().ok()) << busy.get().status();
}

}  // namespace
}  // namespace dds
}  // namespace cyber
