// The DDS transport between real processes: this test and the peers of
// cyber/transport/dds/testing, each test on its own random DDS domain (so
// tests running at the same time on this host never meet), every peer
// killed and reaped even when an assertion fails.
//
// Nothing here asserts a duration: waits are generous deadlines on a
// condition, so a loaded machine only makes the test slower.

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <atomic>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <fastdds/dds/domain/DomainParticipant.hpp>
#include <fastdds/dds/domain/DomainParticipantFactory.hpp>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "cyber/common/mutex.h"
#include "cyber/runtime/runtime.h"
#include "cyber/testing/log_capture.h"
#include "cyber/transport/channel_report.h"
#include "cyber/transport/dds/dds_transport.h"
#include "cyber/transport/dds/frame_topic_type.h"
#include "cyber/transport/dds/shm_cleanup.h"
#include "cyber/transport/dds/testing/dds_test_process.h"
#include "cyber/transport/dds/testing/peer_main.h"
#include "cyber/transport/dds/testing/subprocess.h"
#include "cyber/transport/dds/testing/test_messages.pb.h"
#include "cyber/node/loan_writer.h"
#include "cyber/node/node.h"
#include "cyber/transport/loan/loan_segment.h"
#include "gtest/gtest.h"

namespace cyber {
namespace dds {
namespace {

using dds_test::Ping;
namespace fdds = eprosima::fastdds::dds;
using dds_test::Subprocess;
using dds_test::Telemetry;

using dds_test::Eventually;
using dds_test::kPatience;
using dds_test::RandomDomain;

class CrossProcessTest : public ::testing::Test {
 protected:
  std::unique_ptr<Subprocess> StartPeer(const std::string& binary, const std::string& mode) {
    return process_.StartPeer(binary, mode);
  }

  std::optional<RemoteChannelStats> Stats(const std::string& channel) const {
    for (RemoteChannelStats& s : transport_->ChannelStats()) {
      if (s.channel == channel) return s;
    }
    return std::nullopt;
  }

  // Whether `channel` lists a type conflict now.
  bool ConflictListed(const std::string& channel) const {
    auto s = Stats(channel);
    return s.has_value() && !s->type_conflicts.empty();
  }

  // The live status line mainboard prints for this process's channels.
  std::string StatusLine() const { return ChannelStatusLine(transport_->ChannelStats()); }

  // Waits until a process other than this one reads `channel`.
  bool RemoteReaderOn(const std::string& channel) {
    return Eventually([&] {
      auto s = Stats(channel);
      return s.has_value() && !s->remote_readers.empty();
    });
  }

  // Pings received by a reader, by seq; seq 0 (Handshake's) counted apart,
  // so a handshake answer that comes late never mixes with a test's own.
  struct Received {
    Mutex mu;
    std::vector<uint64_t> seqs ABSL_GUARDED_BY(mu);
    int handshakes ABSL_GUARDED_BY(mu) = 0;
    size_t size() {
      MutexLock l(&mu);
      return seqs.size();
    }
    int handshake_count() {
      MutexLock l(&mu);
      return handshakes;
    }
  };

  std::shared_ptr<Reader<Ping>> ReadInto(const std::string& channel, Received* into) {
    ReaderConfig config;
    config.channel_name = channel;
    config.pending_queue_size = 10000;
    auto reader = node_->TryCreateReader<Ping>(config, [into](const std::shared_ptr<const Ping>& p) {
      MutexLock l(&into->mu);
      if (p->seq() == 0) {
        ++into->handshakes;
      } else {
        into->seqs.push_back(p->seq());
      }
    });
    EXPECT_TRUE(reader.ok()) << reader.status();
    return reader.ok() ? *reader : nullptr;
  }

  // Writes Ping 0 on `writer` until the echo peer's answer is in `pongs`
  // (a Received, or anything with its handshake_count()): then both
  // directions are matched. Returns how many it wrote. (The 20 ms between
  // writes only spaces the retries; answers to earlier ones may come
  // later, counted apart by Received.)
  template <typename Answers>
  int Handshake(Writer<Ping>* writer, Answers* pongs) {
    int writes = 0;
    EXPECT_TRUE(Eventually([&] {
      Ping p;
      p.set_seq(0);
      writer->Write(p);
      ++writes;
      absl::SleepFor(absl::Milliseconds(20));
      return pongs->handshake_count() > 0;
    })) << "the echo peer never answered";
    return writes;
  }

  dds_test::DdsTestProcess process_{"cross_process_test", "test", "tester"};
  const std::shared_ptr<DdsTransport>& transport_ = process_.transport;
  const std::unique_ptr<Node>& node_ = process_.node;
};

// A domain is claimed for the process's life: a test never gets one that
// another test of this machine (or of this binary) holds.
TEST(RandomDomainTest, ADomainIsNeverHandedOutTwiceWhileItsProcessLives) {
  std::set<uint32_t> seen;
  for (int i = 0; i < 20; ++i) {
    const uint32_t domain = RandomDomain();
    EXPECT_GE(domain, 1u);
    EXPECT_LE(domain, 200u);
    EXPECT_TRUE(seen.insert(domain).second) << "domain " << domain << " handed out twice";
  }
}

TEST_F(CrossProcessTest, MessagesCrossToAnotherProcessAndBackInOrderExactlyOnce) {
  auto writer = node_->TryCreateWriter<Ping>("/ping");
  ASSERT_TRUE(writer.ok()) << writer.status();
  Received pongs;
  auto reader = ReadInto("/pong", &pongs);
  const absl::Time start = absl::Now();
  auto peer = StartPeer("dds_test_peer", "echo");
  const int handshake = Handshake(writer->get(), &pongs);
  std::printf("first answer %s after the peer's start\n",
              absl::FormatDuration(absl::Now() - start).c_str());
  constexpr uint64_t kCount = 500;
  // At most kWindow pings unanswered: both hops keep the last 16, and a
  // keep-last writer drops its oldest sample acknowledged or not, so a
  // peer stalled by a loaded machine must never fall 16 behind.
  constexpr uint64_t kWindow = 8;
  for (uint64_t i = 1; i <= kCount; ++i) {
    ASSERT_TRUE(Eventually([&] { return pongs.size() + kWindow >= i; }))
        << pongs.size() << " pongs for " << i - 1 << " pings";
    Ping p;
    p.set_seq(i);
    p.set_body(std::string(64, 'x'));
    ASSERT_TRUE((*writer)->Write(p));
    // About 1 kHz when the peer keeps up.
    absl::SleepFor(absl::Milliseconds(1));
  }
  ASSERT_TRUE(Eventually([&] { return pongs.size() >= kCount; }))
      << pongs.size() << " of " << kCount << " came back";
  // Nothing more may come; as above, the wait can only miss a duplicate,
  // never fail a correct run.
  absl::SleepFor(absl::Milliseconds(100));
  MutexLock l(&pongs.mu);
  ASSERT_EQ(pongs.seqs.size(), kCount);
  for (uint64_t i = 0; i < kCount; ++i) ASSERT_EQ(pongs.seqs[i], i + 1);
  const auto stats = Stats("/ping");
  ASSERT_TRUE(stats.has_value());
  // Handshake writes before the match were not sent (nobody wanted them).
  EXPECT_GE(stats->sent, kCount + 1);
  EXPECT_LE(stats->sent, kCount + static_cast<uint64_t>(handshake));
  EXPECT_EQ(stats->send_failures, 0u);
  ASSERT_EQ(stats->remote_readers.size(), 1u);
  EXPECT_EQ(stats->remote_readers[0].pid, peer->pid());
  EXPECT_EQ(stats->remote_readers[0].process, "dds_test_peer");
  const auto pong_stats = Stats("/pong");
  ASSERT_TRUE(pong_stats.has_value());
  EXPECT_GE(pong_stats->received, kCount + 1);  // and the handshake's
  EXPECT_GT(pong_stats->latency_p99_ns, 0);  // same host: measured
  EXPECT_EQ((*writer)->stats().remote_failures, 0u);
}

// What a recorder keeps of a sample: who sent it, its number, its stamp;
// and PublishAt's stamp arrives as given (a replayed message's original).
TEST_F(CrossProcessTest, ASampleCarriesItsSenderItsSequenceAndItsSendStamp) {
  RemoteEndpoint endpoint;
  endpoint.channel = "/ping";
  endpoint.type_name = Ping::descriptor()->full_name();
  endpoint.qos.reliability = ChannelQos::Reliability::kReliable;
  endpoint.qos.depth = 100;
  endpoint.node = "tester";
  auto out = transport_->Publisher(endpoint);
  ASSERT_TRUE(out.ok()) << out.status();
  auto peer = StartPeer("dds_test_peer", "origins");
  ASSERT_TRUE(Eventually([&] { return (*out)->Wanted(); })) << "the peer's reader never matched";
  Ping ping;
  ping.set_seq(1);
  const std::string bytes = ping.SerializeAsString();
  const absl::Time before = absl::Now();
  ASSERT_TRUE((*out)->Publish(bytes).ok());
  const absl::Time after = absl::Now();
  const absl::Time recorded = absl::FromUnixNanos(1577836800123456789);  // 2020-01-01
  ASSERT_TRUE((*out)->PublishAt(bytes, recorded).ok());
  EXPECT_EQ((*out)->PublishAt(bytes, absl::InfinitePast()).code(), absl::StatusCode::kInvalidArgument);

  std::vector<std::vector<std::string>> origins;
  while (origins.size() < 2) {
    std::optional<std::string> line = peer->WaitForLine("origin ", kPatience);
    ASSERT_TRUE(line.has_value()) << "the peer printed " << origins.size() << " origins";
    origins.push_back(absl::StrSplit(*line, ' '));
  }
  ASSERT_EQ(origins[0].size(), 6u);
  ASSERT_EQ(origins[1].size(), 6u);
  EXPECT_EQ(origins[0][1], "1");
  EXPECT_EQ(origins[1][1], "2");  // the writer's numbers, consecutive
  int64_t stamp0 = 0, stamp1 = 0;
  ASSERT_TRUE(absl::SimpleAtoi(origins[0][2], &stamp0));
  ASSERT_TRUE(absl::SimpleAtoi(origins[1][2], &stamp1));
  // Publish: stamped with the sender's wall clock at the call (DDS keeps
  // the stamp to the nanosecond).
  EXPECT_GE(absl::FromUnixNanos(stamp0), before - absl::Microseconds(1));
  EXPECT_LE(absl::FromUnixNanos(stamp0), after + absl::Microseconds(1));
  // PublishAt: the stamp given.
  EXPECT_EQ(stamp1, 1577836800123456789);
  EXPECT_EQ(origins[0][3], absl::StrCat(getpid()));
  EXPECT_EQ(origins[0][4], "cross_process_test");
  EXPECT_EQ(origins[0][5].size(), 32u);
  EXPECT_EQ(origins[0][5], origins[1][5]);  // one writer
}

TEST_F(CrossProcessTest, AProcessGetsItsOwnMessagesOnceNotAgainFromTheTransport) {
  auto writer = node_->TryCreateWriter<Ping>("/ping");
  ASSERT_TRUE(writer.ok());
  Received local;
  auto local_reader = ReadInto("/ping", &local);
  Received pongs;
  auto pong_reader = ReadInto("/pong", &pongs);
  auto peer = StartPeer("dds_test_peer", "echo");
  const int handshake = Handshake(writer->get(), &pongs);
  for (uint64_t i = 1; i <= 50; ++i) {
    Ping p;
    p.set_seq(i);
    (*writer)->Write(p);
  }
  ASSERT_TRUE(Eventually([&] { return pongs.size() >= 50; }));
  // A second copy would come within a millisecond on this host; waiting
  // longer can only let a late one slip by (a missed failure), never fail
  // a correct run.
  absl::SleepFor(absl::Milliseconds(200));
  // Each local write once, never again from the transport.
  EXPECT_EQ(local.size(), 50u);
  EXPECT_EQ(local.handshake_count(), handshake);
  EXPECT_EQ(Stats("/ping")->received, 0u);
}

TEST_F(CrossProcessTest, AMessageLargerThanTheSharedMemorySegmentStillArrives) {
  auto writer = node_->TryCreateWriter<Ping>("/ping");
  ASSERT_TRUE(writer.ok());
  Received pongs;
  auto reader = ReadInto("/pong", &pongs);
  auto peer = StartPeer("dds_test_peer", "echo");
  Handshake(writer->get(), &pongs);
  // 12 MiB: more than the 8 MiB segment; Fast-DDS fragments it.
  Ping big;
  big.set_seq(42);
  big.set_body(std::string(12u << 20, 'b'));
  ASSERT_TRUE((*writer)->Write(big));
  ASSERT_TRUE(Eventually([&] { return pongs.size() >= 1; }))
      << "the 12 MiB message did not come back; writer failures "
      << (*writer)->stats().remote_failures;
  MutexLock l(&pongs.mu);
  EXPECT_EQ(pongs.seqs, std::vector<uint64_t>{42});
}

TEST_F(CrossProcessTest, ATransientLocalChannelReplaysItsLastValuesToALateJoiner) {
  ChannelQos qos;
  qos.durability = ChannelQos::Durability::kTransientLocal;
  qos.depth = 5;
  auto writer = node_->TryCreateWriter<Ping>("/ping", qos);
  ASSERT_TRUE(writer.ok()) << writer.status();
  for (uint64_t i = 1; i <= 8; ++i) {
    Ping p;
    p.set_seq(i);
    (*writer)->Write(p);
  }
  Received pongs;
  auto reader = ReadInto("/pong", &pongs);
  auto peer = StartPeer("dds_test_peer", "echo_transient");
  ASSERT_TRUE(Eventually([&] { return pongs.size() >= 5; })) << pongs.size();
  // Anything beyond the last 5 would have been replayed with them; the wait
  // can only miss an extra one, never fail a correct run.
  absl::SleepFor(absl::Milliseconds(200));
  MutexLock l(&pongs.mu);
  EXPECT_EQ(pongs.seqs, (std::vector<uint64_t>{4, 5, 6, 7, 8}));  // the last 5
}

TEST_F(CrossProcessTest, AnotherMessageTypeOnAChannelIsAnErrorInBothProcesses) {
  test::LogCapture errors(google::GLOG_ERROR);
  Received pings;
  auto reader = ReadInto("/ping", &pings);
  auto peer = StartPeer("dds_test_peer", "telemetry");
  // The peer's side: it names this process and both types.
  std::optional<std::string> conflict = peer->WaitForLine("conflict ", kPatience);
  ASSERT_TRUE(conflict.has_value());
  EXPECT_TRUE(absl::StrContains(*conflict, "cross_process_test")) << *conflict;
  EXPECT_TRUE(absl::StrContains(*conflict, absl::StrCat("pid ", getpid()))) << *conflict;
  EXPECT_TRUE(absl::StrContains(*conflict, "cyber.dds_test.Ping")) << *conflict;
  // This side: the same, in its stats and its log.
  ASSERT_TRUE(Eventually([&] {
    auto s = Stats("/ping");
    return s.has_value() && !s->type_conflicts.empty();
  }));
  const std::string mine = Stats("/ping")->type_conflicts.front();
  EXPECT_TRUE(absl::StrContains(mine, "cyber.dds_test.Telemetry")) << mine;
  EXPECT_TRUE(absl::StrContains(mine, absl::StrCat("pid ", peer->pid()))) << mine;
  EXPECT_FALSE(errors.WaitFor("message types differ", 1).empty());
  EXPECT_EQ(pings.size(), 0u);
}

// A type conflict belongs to the peer's endpoint: it is listed while that
// endpoint lives and ends when it goes, whichever way it goes.

TEST_F(CrossProcessTest, ATypeConflictEndsWhenThePeerIsKilled) {
  Received pings;
  auto reader = ReadInto("/ping", &pings);
  auto peer = StartPeer("dds_test_peer", "telemetry");
  ASSERT_TRUE(Eventually([&] { return ConflictListed("/ping"); }));
  EXPECT_TRUE(absl::StrContains(StatusLine(), "TYPE CONFLICT")) << StatusLine();
  const pid_t pid = peer->pid();
  peer->Kill(SIGKILL);
  ASSERT_TRUE(peer->Wait(kPatience).has_value());
  // Declared dead after its 2 s lease; the deadline only bounds a failure.
  ASSERT_TRUE(Eventually([&] { return !ConflictListed("/ping"); }))
      << "the conflict outlived its peer: " << StatusLine();
  EXPECT_FALSE(absl::StrContains(StatusLine(), "TYPE CONFLICT")) << StatusLine();
  EXPECT_EQ(Stats("/ping")->type_conflicts_ended, 1u);
  // Fast-DDS removes the dead peer's endpoints (which ends the conflict)
  // just before it reports the participant dropped (which lists it lost).
  ASSERT_TRUE(Eventually([&] { return transport_->LostPeers().size() == 1; }))
      << transport_->LostPeers().size() << " peers listed lost";
  EXPECT_EQ(transport_->LostPeers()[0].pid, pid);
}

TEST_F(CrossProcessTest, ATypeConflictEndsWhenThePeerRestartsWithTheRightType) {
  auto writer = node_->TryCreateWriter<Ping>("/ping");
  ASSERT_TRUE(writer.ok()) << writer.status();
  Received pongs;
  auto reader = ReadInto("/pong", &pongs);
  auto wrong = StartPeer("dds_test_peer", "telemetry");
  ASSERT_TRUE(Eventually([&] { return ConflictListed("/ping"); }));
  wrong->Kill(SIGKILL);
  ASSERT_TRUE(wrong->Wait(kPatience).has_value());
  auto right = StartPeer("dds_test_peer", "echo");
  Handshake(writer->get(), &pongs);  // messages flow with the restarted peer
  // The killed one's endpoint goes when it is declared dead (its lease).
  ASSERT_TRUE(Eventually([&] { return !ConflictListed("/ping"); }))
      << "the conflict outlived its peer's restart: " << StatusLine();
  const auto stats = Stats("/ping");
  ASSERT_EQ(stats->remote_readers.size(), 1u);
  EXPECT_EQ(stats->remote_readers[0].pid, right->pid());
  EXPECT_EQ(stats->type_conflicts_ended, 1u);
  EXPECT_TRUE(absl::StrContains(StatusLine(), "/ping →1")) << StatusLine();
  EXPECT_FALSE(absl::StrContains(StatusLine(), "TYPE CONFLICT")) << StatusLine();
}

TEST_F(CrossProcessTest, ATypeConflictEndsWhenThePeerClosesItsEndpoint) {
  auto writer = node_->TryCreateWriter<Ping>("/ping");
  ASSERT_TRUE(writer.ok()) << writer.status();
  auto peer = StartPeer("dds_test_peer", "telemetry_reader");
  ASSERT_TRUE(Eventually([&] { return ConflictListed("/ping"); }));
  const std::string conflict = Stats("/ping")->type_conflicts.front();
  EXPECT_TRUE(absl::StrContains(conflict, "reads cyber.dds_test.Telemetry")) << conflict;
  EXPECT_TRUE(absl::StrContains(conflict, absl::StrCat("pid ", peer->pid()))) << conflict;
  ASSERT_TRUE(peer->WriteLine("close"));
  ASSERT_TRUE(peer->WaitForLine("closed", kPatience).has_value());
  ASSERT_TRUE(Eventually([&] { return !ConflictListed("/ping"); }))
      << "the conflict outlived its endpoint: " << StatusLine();
  EXPECT_EQ(Stats("/ping")->type_conflicts_ended, 1u);
  // The peer itself is still there: only its endpoint went.
  bool alive = false;
  for (const RemotePeer& p : transport_->Peers()) alive = alive || p.pid == peer->pid();
  EXPECT_TRUE(alive);
  EXPECT_TRUE(transport_->LostPeers().empty());
}

TEST_F(CrossProcessTest, AnIncompatibleVersionOfTheMessageIsDroppedCountedAndNamed) {
  test::LogCapture errors(google::GLOG_ERROR);
  Received pings;
  auto reader = ReadInto("/ping", &pings);
  auto v2 = StartPeer("dds_test_peer_v2", "write");
  ASSERT_TRUE(Eventually([&] {
    auto s = Stats("/ping");
    return s.has_value() && s->dropped_undecodable >= 5;
  }));
  EXPECT_EQ(pings.size(), 0u);
  EXPECT_FALSE(errors.WaitFor(absl::StrCat("pid ", v2->pid()), 1).empty());
  EXPECT_FALSE(errors.WaitFor("does not parse as cyber.dds_test.Ping", 1).empty());
  // The reader keeps working: a compatible peer still gets through.
  auto writer = node_->TryCreateWriter<Ping>("/ping");
  ASSERT_TRUE(writer.ok());
  Received pongs;
  auto pong_reader = ReadInto("/pong", &pongs);
  auto echo = StartPeer("dds_test_peer", "echo");
  Handshake(writer->get(), &pongs);
}

TEST_F(CrossProcessTest, APeerKilledWithSigkillIsReportedAndItsRestartIsServed) {
  std::atomic<int> crashed{0};
  std::atomic<int64_t> crashed_pid{0};
  const uint64_t listener = transport_->AddPeerLostListener([&](const RemotePeer& p, bool c) {
    if (c) {
      crashed_pid = p.pid;
      ++crashed;
    }
  });
  auto writer = node_->TryCreateWriter<Ping>("/ping");
  ASSERT_TRUE(writer.ok());
  Received pongs;
  auto reader = ReadInto("/pong", &pongs);
  for (int round = 1; round <= 2; ++round) {
    auto peer = StartPeer("dds_test_peer", "echo");
    ASSERT_TRUE(RemoteReaderOn("/ping")) << "round " << round;
    const size_t before = pongs.size();
    Ping p;
    p.set_seq(static_cast<uint64_t>(round));
    ASSERT_TRUE(Eventually([&] {
      // Resent until answered: the restarted peer's reader may match late.
      (*writer)->Write(p);
      absl::SleepFor(absl::Milliseconds(20));
      return pongs.size() > before;
    })) << "round " << round;
    if (round == 1) {
      const pid_t pid = peer->pid();
      peer->Kill(SIGKILL);
      ASSERT_TRUE(peer->Wait(kPatience).has_value());
      ASSERT_TRUE(Eventually([&] { return crashed.load() == 1; }))
          << "the killed peer was never declared dead";
      EXPECT_EQ(crashed_pid.load(), pid);
      ASSERT_EQ(transport_->LostPeers().size(), 1u);
      EXPECT_EQ(transport_->LostPeers()[0].pid, pid);
      // Its reader is gone from the channel.
      EXPECT_TRUE(Eventually([&] { return Stats("/ping")->remote_readers.empty(); }));
    }
  }
  transport_->RemovePeerLostListener(listener);
}

// Whether `address` lies in a mapping of a loan segment in this process
// (/proc/self/maps names the file of each mapping).
bool InLoanSegment(const void* address) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  const uintptr_t a = reinterpret_cast<uintptr_t>(address);
  while (std::getline(maps, line)) {
    if (line.find("/dev/shm/cyber_loan.") == std::string::npos) continue;
    uintptr_t from = 0;
    uintptr_t to = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx", &from, &to) == 2 && a >= from && a < to) {
      return true;
    }
  }
  return false;
}

// The frames of dds_test_peer's loan_camera, held by the test's reader.
struct Frames {
  Mutex mu;
  std::vector<std::shared_ptr<const SharedBytes>> held ABSL_GUARDED_BY(mu);
  size_t size() {
    MutexLock l(&mu);
    return held.size();
  }
};

constexpr size_t kFrameBytes = size_t{4} << 20;  // the peer's frames

uint64_t FrameIndex(const SharedBytes& frame) {
  uint64_t i = 0;
  for (int b = 0; b < 8; ++b) i |= uint64_t{frame.data()[b]} << (8 * b);
  return i;
}

TEST_F(CrossProcessTest, ALoanedFrameIsReadInPlaceInAnotherProcess) {
  Frames frames;
  ReaderConfig config;
  config.channel_name = "/camera";
  config.pending_queue_size = 4;
  uint64_t checked = 0;
  uint64_t last = 0;
  std::string problem;
  auto reader = node_->TryCreateReader<SharedBytes>(
      config, [&](const std::shared_ptr<const SharedBytes>& frame) {
        // Checked here, while the routine holds it, then let go.
        ++checked;
        const uint64_t i = FrameIndex(*frame);
        const uint8_t fill = static_cast<uint8_t>(i & 0xff);
        if (frame->size() != kFrameBytes) problem = absl::StrCat("size ", frame->size());
        for (size_t k = 8; k < frame->size(); k += 4096) {
          if (frame->data()[k] != fill) problem = absl::StrCat("frame ", i, " torn at ", k);
        }
        if (frame->data()[frame->size() - 1] != fill) problem = "last byte";
        if (i <= last) problem = absl::StrCat("frame ", i, " after ", last);
        last = i;
        if (frame->loan() == nullptr) problem = "not a loan";
        if (!InLoanSegment(frame->data())) problem = "not in a loan segment mapping";
        MutexLock l(&frames.mu);
        if (frames.held.size() < 1) frames.held.push_back(frame);  // keeps the first
      });
  ASSERT_TRUE(reader.ok()) << reader.status();
  auto peer = StartPeer("dds_test_peer", "loan_camera");
  ASSERT_TRUE(Eventually([&] { return (*reader)->stats().delivered >= 50; }))
      << (*reader)->stats().delivered << " frames";
  (*reader)->Shutdown();
  EXPECT_EQ(problem, "");
  EXPECT_GE(checked, 50u);
  const auto stats = Stats("/camera");
  ASSERT_TRUE(stats.has_value());
  EXPECT_EQ(stats->type_name, "cyber.SharedBytes");
  // Only references crossed: tens of bytes per 4 MiB frame.
  EXPECT_GT(stats->received, 0u);
  EXPECT_LT(stats->bytes_received, stats->received * 128) << stats->bytes_received;
  EXPECT_EQ(stats->dropped_undecodable, 0u);
  // A held frame stays readable after its writer is gone.
  peer->CloseStdin();
  ASSERT_TRUE(peer->Wait(kPatience).has_value());
  MutexLock l(&frames.mu);
  ASSERT_EQ(frames.held.size(), 1u);
  const SharedBytes& kept = *frames.held[0];
  EXPECT_EQ(kept.data()[kFrameBytes - 1], static_cast<uint8_t>(FrameIndex(kept) & 0xff));
}

TEST_F(CrossProcessTest, AReaderKilledWithNineGivesBackTheSlotsItHeld) {
  LoanWriterOptions options;
  options.slots = 3;
  options.slot_bytes = 1 << 20;
  auto camera = LoanWriter::Create(node_.get(), "/camera", options);
  ASSERT_TRUE(camera.ok()) << camera.status();
  auto holder = StartPeer("dds_test_peer", "loan_hold");
  ASSERT_TRUE(RemoteReaderOn("/camera"));
  // The holder keeps every frame it gets: after three, every slot is held.
  int published = 0;
  ASSERT_TRUE(Eventually([&] {
    absl::StatusOr<LoanedBuffer> frame = (*camera)->Loan();
    if (!frame.ok()) return true;  // all held
    std::memset(frame->data(), 1, 64);
    EXPECT_TRUE((*camera)->Publish(*std::move(frame), 64).ok());
    ++published;
    absl::SleepFor(absl::Milliseconds(20));
    return false;
  })) << "the holder never held every slot";
  EXPECT_GE(published, 3);
  absl::StatusOr<LoanedBuffer> refused = (*camera)->Loan();
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("held by readers"), std::string::npos)
      << refused.status();
  holder->Kill(SIGKILL);
  ASSERT_TRUE(holder->Wait(kPatience).has_value());
  // The dead holder's pins are cleared at the next Loan() once the kernel
  // has dropped its locks (a moment after its death at worst: another
  // process may hold its memory map, and so the mapped segment, briefly).
  absl::StatusOr<LoanedBuffer> again = (*camera)->Loan();
  EXPECT_TRUE(Eventually([&] {
    again = (*camera)->Loan();
    return again.ok();
  })) << again.status();
}

TEST_F(CrossProcessTest, AWriterKilledWithNineLeavesNothingInDevShmAfterTheSweep) {
  Frames frames;
  ReaderConfig config;
  config.channel_name = "/camera";
  auto reader = node_->TryCreateReader<SharedBytes>(
      config, [&](const std::shared_ptr<const SharedBytes>& frame) {
        MutexLock l(&frames.mu);
        if (frames.held.empty()) frames.held.push_back(frame);
      });
  ASSERT_TRUE(reader.ok());
  auto peer = StartPeer("dds_test_peer", "loan_camera");
  ASSERT_TRUE(Eventually([&] { return frames.size() == 1; }));
  std::string segment;
  {
    MutexLock l(&frames.mu);
    ASSERT_TRUE(frames.held[0]->loan() != nullptr);
    segment = frames.held[0]->loan()->segment;
  }
  const std::string path = absl::StrCat("/dev/shm/", segment);
  peer->Kill(SIGKILL);
  ASSERT_TRUE(peer->Wait(kPatience).has_value());
  (*reader)->Shutdown();
  // A killed writer cannot remove its own; a sweep (this one, or another
  // test process's) does.
  // (Its lock may outlive it a moment: see above.)
  EXPECT_TRUE(Eventually([&] {
    loan::SweepAbandonedSegments();
    return access(path.c_str(), F_OK) != 0;
  })) << path << " is still there";
  // The frame this process holds is still readable: its mapping stays.
  MutexLock l(&frames.mu);
  const SharedBytes& kept = *frames.held[0];
  EXPECT_EQ(kept.data()[kFrameBytes - 1], static_cast<uint8_t>(FrameIndex(kept) & 0xff));
}

struct NotProtobuf {
  int value = 0;
};

// The Fast-DDS data-sharing files (a writer's pool, a reader's
// acknowledgements: "fast_datasharing_<endpoint guid>") that process `pid`
// maps now. By process, not by listing /dev/shm: other tests of this host
// make such files at the same time.
std::set<std::string> DataSharingFilesMappedBy(pid_t pid) {
  std::set<std::string> files;
  std::ifstream maps(absl::StrCat("/proc/", pid, "/maps"));
  std::string line;
  while (std::getline(maps, line)) {
    const size_t at = line.find("/dev/shm/fast_datasharing_");
    if (at == std::string::npos) continue;
    std::string name = line.substr(at + std::strlen("/dev/shm/"));
    if (const size_t space = name.find(' '); space != std::string::npos) name.resize(space);
    files.insert(name);
  }
  return files;
}

bool InDevShm(const std::string& name) { return access(("/dev/shm/" + name).c_str(), F_OK) == 0; }

std::set<std::string> Minus(const std::set<std::string>& a, const std::set<std::string>& b) {
  std::set<std::string> out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::inserter(out, out.end()));
  return out;
}

// A body of `bytes` whose every byte says which message it is.
std::string BodyOf(uint64_t seq, size_t bytes) {
  return std::string(bytes, static_cast<char>('a' + seq % 26));
}

// A channel with data sharing: our writer's pool is mapped by the peer (it
// reads /ping there) and the peer's by us, messages of half a MiB cross
// both ways whole and in order, one over the bound is refused naming it,
// and a reader killed with -9 costs the writer nothing (the pool is
// keep-last: a dead reader holds no sample the writer needs); the sweep
// then removes what the peer left.
TEST_F(CrossProcessTest, ADataSharingChannelCrossesWholeAndSurvivesItsReaderKilledWithNine) {
  ChannelQos qos;
  qos.data_sharing_max_bytes = dds_test::kSharedEchoBytes;
  auto writer = node_->TryCreateWriter<Ping>("/ping", qos);
  ASSERT_TRUE(writer.ok()) << writer.status();
  const std::set<std::string> ours = DataSharingFilesMappedBy(getpid());
  ASSERT_FALSE(ours.empty()) << "no data-sharing pool for the writer of /ping";
  struct Pongs {
    Mutex mu;
    std::vector<uint64_t> seqs ABSL_GUARDED_BY(mu);
    int handshakes ABSL_GUARDED_BY(mu) = 0;
    int damaged ABSL_GUARDED_BY(mu) = 0;
    int handshake_count() {
      MutexLock l(&mu);
      return handshakes;
    }
  } pongs;
  ReaderConfig config;
  config.channel_name = "/pong";
  config.pending_queue_size = 1000;
  config.qos_profile = qos;
  auto reader = node_->TryCreateReader<Ping>(config, [&pongs](const std::shared_ptr<const Ping>& p) {
    MutexLock l(&pongs.mu);
    if (p->seq() == 0) {
      ++pongs.handshakes;
      return;
    }
    pongs.seqs.push_back(p->seq());
    if (p->body() != BodyOf(p->seq(), p->body().size()) || p->body().size() != (512u << 10)) {
      ++pongs.damaged;
    }
  });
  ASSERT_TRUE(reader.ok()) << reader.status();
  const std::set<std::string> before_peer = DataSharingFilesMappedBy(getpid());
  auto peer = StartPeer("dds_test_peer", "echo_shared");
  Handshake(writer->get(), &pongs);
  ASSERT_GT(pongs.handshake_count(), 0);
  // Shared for real: the peer maps our writer's pool, we map its.
  EXPECT_TRUE(Eventually([&] {
    const std::set<std::string> theirs = DataSharingFilesMappedBy(peer->pid());
    return Minus(ours, theirs).size() < ours.size();
  })) << "the peer does not map the pool of our writer of /ping";
  const std::set<std::string> peers_files =
      Minus(DataSharingFilesMappedBy(peer->pid()), before_peer);
  EXPECT_FALSE(peers_files.empty());

  constexpr uint64_t kCount = 40;
  for (uint64_t i = 1; i <= kCount; ++i) {
    // At most 8 unanswered: both hops keep the last 16.
    ASSERT_TRUE(Eventually([&] {
      MutexLock l(&pongs.mu);
      return pongs.seqs.size() + 8 >= i;
    }));
    Ping p;
    p.set_seq(i);
    p.set_body(BodyOf(i, 512u << 10));
    ASSERT_TRUE((*writer)->Write(p));
  }
  ASSERT_TRUE(Eventually([&] {
    MutexLock l(&pongs.mu);
    return pongs.seqs.size() >= kCount;
  }));
  {
    MutexLock l(&pongs.mu);
    ASSERT_EQ(pongs.seqs.size(), kCount);
    for (uint64_t i = 0; i < kCount; ++i) EXPECT_EQ(pongs.seqs[i], i + 1);
    EXPECT_EQ(pongs.damaged, 0);
  }
  EXPECT_EQ((*writer)->stats().remote_failures, 0u);

  // Over the bound: delivered in this process, refused between processes.
  Ping over;
  over.set_seq(kCount + 1);
  over.set_body(std::string(dds_test::kSharedEchoBytes, 'x'));
  EXPECT_TRUE((*writer)->Write(over));
  EXPECT_EQ((*writer)->stats().remote_failures, 1u);
  auto stats = Stats("/ping");
  ASSERT_TRUE(stats.has_value());
  EXPECT_EQ(stats->send_failures, 1u);

  // The reader killed with -9: every later write still goes out (a writer
  // waiting for a dead reader's acknowledgement would fail after 10 ms
  // each: remote failures). The 5 ms only spreads the writes over the time
  // the dead reader is still matched (its 2 s lease); nothing here depends
  // on a duration, so a slow machine only writes some after the lease.
  peer->Kill(SIGKILL);
  for (uint64_t i = kCount + 2; i < kCount + 2 + 40; ++i) {
    Ping p;
    p.set_seq(i);
    p.set_body(BodyOf(i, 512u << 10));
    EXPECT_TRUE((*writer)->Write(p));
    absl::SleepFor(absl::Milliseconds(5));
  }
  EXPECT_EQ((*writer)->stats().remote_failures, 1u) << "a write after the kill failed";
  // The sweep removes what the dead peer left once nobody maps it (we let
  // go of its pool when it is declared dead, after its lease); ours stay.
  EXPECT_TRUE(Eventually([&] {
    RemoveDeadPeerSegments();
    for (const std::string& name : peers_files) {
      if (InDevShm(name)) return false;
    }
    return true;
  })) << "files of the killed peer are still in /dev/shm";
  for (const std::string& name : ours) EXPECT_TRUE(InDevShm(name)) << name;
}

// Without a bound nothing shares: the writer maps no data-sharing pool.
TEST_F(CrossProcessTest, AChannelWithoutABoundMakesNoDataSharingPool) {
  auto writer = node_->TryCreateWriter<Ping>("/ping");
  ASSERT_TRUE(writer.ok()) << writer.status();
  EXPECT_TRUE(DataSharingFilesMappedBy(getpid()).empty());
}

// One bound per message type per process: the first channel of a type
// sets it (none included), and every other reader and writer of the type
// must ask for the same.
TEST(DdsTransportStartTest, OneDataSharingBoundPerMessageTypePerProcess) {
  DdsTransportOptions t;
  t.domain_id = RandomDomain();
  DdsTransport transport(t);
  auto endpoint = [](const std::string& channel, const std::string& type, uint32_t bound) {
    RemoteEndpoint e;
    e.channel = channel;
    e.type_name = type;
    e.node = "n";
    e.qos.data_sharing_max_bytes = bound;
    return e;
  };
  ASSERT_TRUE(transport.Publisher(endpoint("/a", "cyber.dds_test.Ping", 1000)).ok());
  auto other = transport.Publisher(endpoint("/b", "cyber.dds_test.Ping", 2000));
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().code(), absl::StatusCode::kFailedPrecondition);
  for (const char* part : {"\"/b\"", "2000", "1000", "\"/a\"", "cyber.dds_test.Ping"}) {
    EXPECT_TRUE(absl::StrContains(other.status().message(), part)) << part << ": " << other.status();
  }
  // None is another bound: Fast-DDS would give it the type's fixed-size
  // buffers (a larger message would overflow a writer's, a reader would
  // drop it unseen).
  EXPECT_FALSE(transport.Publisher(endpoint("/c", "cyber.dds_test.Ping", 0)).ok());
  auto reader = transport.Subscribe(endpoint("/a", "cyber.dds_test.Ping", 0),
                                    [](const RemoteSample&) { return true; });
  ASSERT_FALSE(reader.ok());
  EXPECT_TRUE(absl::StrContains(reader.status().message(), "data_sharing_max_bytes 0"))
      << reader.status();
  EXPECT_TRUE(transport.Subscribe(endpoint("/a", "cyber.dds_test.Ping", 1000),
                                  [](const RemoteSample&) { return true; })
                  .ok());
  // The first channel of a type sets its bound, none included.
  ASSERT_TRUE(transport.Publisher(endpoint("/d", "cyber.dds_test.Telemetry", 0)).ok());
  auto late = transport.Publisher(endpoint("/e", "cyber.dds_test.Telemetry", 1000));
  ASSERT_FALSE(late.ok());
  for (const char* part : {"\"/e\"", "1000", "data_sharing_max_bytes 0", "\"/d\""}) {
    EXPECT_TRUE(absl::StrContains(late.status().message(), part)) << part << ": " << late.status();
  }
  transport.Shutdown();
}

// Under DDS Security a bounded channel shares no memory: the pool, a plain
// file in /dev/shm, would bypass the payload's protection. The same
// channel without security maps one (so the check can fail). Two rules
// keep it off here: Fast-DDS's own (no data sharing for a writer its
// governance protects, as tools/make_security_set.sh's protects every
// channel; this test passes with ours removed) and ours, which also
// covers a channel a governance leaves unprotected (not made here).
TEST(DdsTransportStartTest, UnderDdsSecurityABoundMakesNoDataSharingPool) {
  const std::string dir = absl::StrCat(std::getenv("TEST_TMPDIR"), "/security");
  {
    std::ofstream spec(dir + ".spec");
    spec << "secure_writer publish=/shared\n";
  }
  const std::string make = absl::StrCat("bash ", dds_test::RunfilePath("tools/make_security_set.sh"),
                                        " ", dir, " ", dir, ".spec > /dev/null");
  ASSERT_EQ(std::system(make.c_str()), 0) << make;
  RemoteEndpoint e;
  e.channel = "/shared";
  e.type_name = "cyber.dds_test.Ping";
  e.node = "n";
  e.qos.data_sharing_max_bytes = 1 << 20;
  Ping ping;
  ping.set_seq(1);

  DdsTransportOptions secured;
  secured.domain_id = RandomDomain();
  secured.process_name = "secure_writer";
  secured.security_dir = dir + "/secure_writer";
  DdsTransport secure(secured);
  auto secure_publisher = secure.Publisher(e);
  ASSERT_TRUE(secure_publisher.ok()) << secure_publisher.status();
  EXPECT_TRUE((*secure_publisher)->PublishMessage(ping).ok());
  EXPECT_TRUE(DataSharingFilesMappedBy(getpid()).empty());

  DdsTransportOptions plain;
  plain.domain_id = RandomDomain();
  DdsTransport open(plain);
  auto open_publisher = open.Publisher(e);
  ASSERT_TRUE(open_publisher.ok()) << open_publisher.status();
  EXPECT_FALSE(DataSharingFilesMappedBy(getpid()).empty());
  secure_publisher->reset();
  open_publisher->reset();
  secure.Shutdown();
  open.Shutdown();
}

// Over the bound: refused by the publisher, naming channel, size and bound.
TEST(DdsTransportStartTest, AMessageOverTheDataSharingBoundIsRefusedNamingIt) {
  DdsTransportOptions t;
  t.domain_id = RandomDomain();
  DdsTransport transport(t);
  RemoteEndpoint e;
  e.channel = "/shared";
  e.type_name = "cyber.dds_test.Ping";
  e.qos.data_sharing_max_bytes = 1000;
  auto publisher = transport.Publisher(e);
  ASSERT_TRUE(publisher.ok()) << publisher.status();
  EXPECT_TRUE((*publisher)->Publish(std::string(1000, 'x')).ok());
  const absl::Status s = (*publisher)->Publish(std::string(1001, 'x'));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  for (const char* part : {"\"/shared\"", "1001 bytes", "1000 bytes", "data_sharing_max_bytes"}) {
    EXPECT_TRUE(absl::StrContains(s.message(), part)) << part << ": " << s;
  }
  transport.Shutdown();
}

// A reader that takes parsed messages (RemoteEndpoint::prototype) gets
// them parsed where they arrived, not as bytes, and a reader of the same
// channel and type that takes bytes (as a service's or the graph's do)
// gets bytes, each message, in the same process; when the bytes reader
// is gone, nothing changes for the other.
TEST(DdsTransportStartTest, EachReaderGetsMessagesParsedOrAsBytesAsItAsks) {
  DdsTransportOptions t;
  t.domain_id = RandomDomain();
  t.process_name = "writer";
  DdsTransport writer(t);
  t.process_name = "reader";
  DdsTransport reader(t);
  RemoteEndpoint e;
  e.channel = "/parsed";
  e.type_name = "cyber.dds_test.Ping";
  e.node = "n";
  struct Got {
    Mutex mu;
    // (seq, parsed) as each reader got them.
    std::vector<std::pair<uint64_t, bool>> parsed_reader ABSL_GUARDED_BY(mu);
    std::vector<std::pair<uint64_t, bool>> bytes_reader ABSL_GUARDED_BY(mu);
  } got;
  auto take_into = [&got](std::vector<std::pair<uint64_t, bool>> Got::*into) {
    return [&got, into](const RemoteSample& s) {
      Ping ping;
      bool parsed = false;
      if (s.message != nullptr) {
        if (!s.payload.empty()) return false;
        const auto* m = dynamic_cast<const Ping*>(s.message.get());
        if (m == nullptr) return false;
        ping = *m;
        parsed = true;
      } else if (!ping.ParseFromArray(s.payload.data(), static_cast<int>(s.payload.size()))) {
        return false;
      }
      MutexLock lock(&got.mu);
      (got.*into).emplace_back(ping.seq(), parsed);
      return true;
    };
  };
  RemoteEndpoint parsed_reader = e;
  parsed_reader.prototype = &Ping::default_instance();
  auto sub = reader.Subscribe(parsed_reader, take_into(&Got::parsed_reader));
  ASSERT_TRUE(sub.ok()) << sub.status();
  auto bytes = reader.Subscribe(e, take_into(&Got::bytes_reader));
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  auto publisher = writer.Publisher(e);
  ASSERT_TRUE(publisher.ok()) << publisher.status();
  ASSERT_TRUE(Eventually([&] { return (*publisher)->Wanted(); }));
  auto last_seq = [](const std::vector<std::pair<uint64_t, bool>>& of) {
    return of.empty() ? uint64_t{0} : of.back().first;
  };
  auto send_and_wait = [&](uint64_t seq, bool with_bytes_reader,
                           absl::Duration patience = kPatience) {
    Ping ping;
    ping.set_seq(seq);
    ping.set_body(std::string(1000, 'p'));
    EXPECT_TRUE((*publisher)->PublishMessage(ping).ok());
    return Eventually(
        [&] {
          MutexLock lock(&got.mu);
          return last_seq(got.parsed_reader) == seq &&
                 (!with_bytes_reader || last_seq(got.bytes_reader) == seq);
        },
        patience);
  };
  // Wanted() says one reader matched: the other can match a moment later
  // and miss what came before (volatile), so send until both have one.
  uint64_t seq = 0;
  ASSERT_TRUE(Eventually([&] { return send_and_wait(++seq, true, absl::Milliseconds(200)); }));
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(send_and_wait(++seq, true));
  {
    MutexLock lock(&got.mu);
    for (const auto& [n, parsed] : got.parsed_reader) {
      EXPECT_TRUE(parsed) << "message " << n << ": a reader with a prototype got bytes";
    }
    for (const auto& [n, parsed] : got.bytes_reader) {
      EXPECT_FALSE(parsed) << "message " << n << ": a reader of bytes got a parsed message";
    }
  }
  bytes->reset();
  ASSERT_TRUE(send_and_wait(++seq, false));
  {
    MutexLock lock(&got.mu);
    EXPECT_TRUE(got.parsed_reader.back().second) << "bytes after the bytes reader closed";
  }
  sub->reset();
  publisher->reset();
  reader.Shutdown();
  writer.Shutdown();
}

// Fast-DDS hands a process's readers what the same process writes on the
// channel; they drop it (its own readers got it from the writer already,
// in the process) without parsing or copying it. What another process
// writes on the same channel meanwhile reaches them, every message.
TEST(DdsTransportStartTest, AProcessDropsWhatItWritesUnparsedUncopied) {
  DdsTransportOptions t;
  t.domain_id = RandomDomain();
  t.process_name = "both";
  DdsTransport transport(t);
  // Another participant (another process, as DDS sees it) writing the
  // same channel.
  t.process_name = "other";
  DdsTransport other(t);
  RemoteEndpoint e;
  e.channel = "/own";
  e.type_name = "cyber.dds_test.Ping";
  e.node = "n";
  struct Got {
    Mutex mu;
    std::vector<uint64_t> seqs ABSL_GUARDED_BY(mu);
  } got;
  RemoteEndpoint parsed_reader = e;
  parsed_reader.prototype = &Ping::default_instance();
  auto sub = transport.Subscribe(parsed_reader, [&got](const RemoteSample& s) {
    const auto* ping = dynamic_cast<const Ping*>(s.message.get());
    if (ping == nullptr) return false;
    MutexLock lock(&got.mu);
    got.seqs.push_back(ping->seq());
    return true;
  });
  ASSERT_TRUE(sub.ok()) << sub.status();
  auto publisher = transport.Publisher(e);
  ASSERT_TRUE(publisher.ok()) << publisher.status();
  auto foreign = other.Publisher(e);
  ASSERT_TRUE(foreign.ok()) << foreign.status();
  // The type this process registered for the channel (the first
  // participant on this domain in this process is `transport`'s).
  fdds::DomainParticipant* participant =
      fdds::DomainParticipantFactory::get_instance()->lookup_participant(t.domain_id);
  ASSERT_NE(participant, nullptr);
  fdds::TypeSupport registered = participant->find_type(e.type_name);
  const auto* type = dynamic_cast<const FrameTopicType*>(registered.get());
  ASSERT_NE(type, nullptr);
  // Own messages count up from 1, the other process's from 1,000,000.
  uint64_t own_seq = 0;
  uint64_t foreign_seq = 1000000;
  auto publish = [](RemotePublisher& to, uint64_t seq) {
    Ping ping;
    ping.set_seq(seq);
    ping.set_body(std::string(100000, 'o'));
    return to.PublishMessage(ping).ok();
  };
  // Until the reader has matched both writers (Wanted() counts other
  // processes' readers only, so it cannot say): the first of each taken.
  ASSERT_TRUE(Eventually([&] { return publish(**publisher, ++own_seq) && type->discarded() > 0; }));
  // The other's: until the last one sent has arrived (in order, so
  // nothing sent before it is still on its way).
  ASSERT_TRUE(Eventually([&] {
    if (!publish(**foreign, ++foreign_seq)) return false;
    return Eventually(
        [&] {
          MutexLock lock(&got.mu);
          return !got.seqs.empty() && got.seqs.back() == foreign_seq;
        },
        absl::Milliseconds(200));
  }));
  const uint64_t discarded_before = type->discarded();
  const uint64_t parsed_before = type->parsed();
  size_t handled_before = 0;
  {
    MutexLock lock(&got.mu);
    handled_before = got.seqs.size();
  }
  constexpr uint64_t kMessages = 20;
  std::vector<uint64_t> sent_foreign;
  for (uint64_t i = 0; i < kMessages; ++i) {
    ASSERT_TRUE(publish(**publisher, ++own_seq));
    ASSERT_TRUE(publish(**foreign, ++foreign_seq));
    sent_foreign.push_back(foreign_seq);
  }
  // Counted as each is taken: all of them, or the test's patience ends.
  EXPECT_TRUE(Eventually([&] { return type->discarded() >= discarded_before + kMessages; }))
      << "discarded " << type->discarded() - discarded_before << " of " << kMessages;
  ASSERT_TRUE(Eventually([&] {
    MutexLock lock(&got.mu);
    return got.seqs.size() >= handled_before + kMessages;
  }));
  {
    MutexLock lock(&got.mu);
    const std::vector<uint64_t> handled(got.seqs.begin() + static_cast<std::ptrdiff_t>(handled_before),
                                        got.seqs.end());
    EXPECT_EQ(handled, sent_foreign) << "the other process's messages, each once, in order";
    for (uint64_t seq : got.seqs) EXPECT_GE(seq, 1000000u) << "an own message was handed over";
  }
  // Parsed: the other process's messages only.
  EXPECT_EQ(type->parsed() - parsed_before, kMessages);
  EXPECT_EQ(transport.ChannelStats().at(0).lost, 0u);
  sub->reset();
  publisher->reset();
  foreign->reset();
  other.Shutdown();
  transport.Shutdown();
}

TEST(DdsTransportStartTest, NoParticipantUntilAProtobufChannelNeedsOne) {
  DdsTransportOptions t;
  t.domain_id = RandomDomain();
  auto transport = std::make_shared<DdsTransport>(t);
  Runtime::Options o;
  o.remote = transport;
  Runtime rt(std::move(o));
  {
    Node node("plain", rt.scheduler(), rt.bus());
    auto w = node.TryCreateWriter<NotProtobuf>("/plain");
    ASSERT_TRUE(w.ok());
    auto r = node.TryCreateReader<NotProtobuf>("/plain", [](const std::shared_ptr<const NotProtobuf>&) {});
    ASSERT_TRUE(r.ok());
    (*w)->Write(NotProtobuf{});
    EXPECT_FALSE(transport->participant_started());
    auto p = node.TryCreateWriter<Ping>("/ping");
    ASSERT_TRUE(p.ok());
    EXPECT_TRUE(transport->participant_started());
  }
  rt.Shutdown();
  EXPECT_FALSE(transport->participant_started());
}

TEST(DdsTransportStartTest, OneProcessWritesAChannelWithOneQos) {
  DdsTransportOptions t;
  t.domain_id = RandomDomain();
  Runtime::Options o;
  o.remote = std::make_shared<DdsTransport>(t);
  Runtime rt(std::move(o));
  Node node("n", rt.scheduler(), rt.bus());
  ASSERT_TRUE(node.TryCreateWriter<Ping>("/ping").ok());
  auto second = node.TryCreateWriter<Ping>("/ping", ChannelQos::SensorData());
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(second.status().message(), "node \"n\"")) << second.status();
  EXPECT_TRUE(absl::StrContains(second.status().message(), "best effort")) << second.status();
  EXPECT_TRUE(absl::StrContains(second.status().message(), "reliable")) << second.status();
  ReaderConfig config;
  config.channel_name = "/ping";
  ASSERT_TRUE(node.TryCreateReader<Ping>(config, [](const std::shared_ptr<const Ping>&) {}).ok());
  config.qos_profile = ChannelQos::SensorData();
  auto reader = node.TryCreateReader<Ping>(config, [](const std::shared_ptr<const Ping>&) {});
  ASSERT_FALSE(reader.ok());
  EXPECT_TRUE(absl::StrContains(reader.status().message(), "qos")) << reader.status();
  node.Shutdown();
}

TEST(DdsTransportStartTest, AMessageOverTheSizeLimitIsRefusedNamingChannelSizeAndLimit) {
  DdsTransportOptions t;
  t.domain_id = RandomDomain();
  t.max_message_bytes = 1000;
  DdsTransport transport(t);
  RemoteEndpoint e;
  e.channel = "/big";
  e.type_name = "cyber.dds_test.Ping";
  auto publisher = transport.Publisher(e);
  ASSERT_TRUE(publisher.ok()) << publisher.status();
  const absl::Status s = (*publisher)->Publish(std::string(2000, 'x'));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "\"/big\"")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "2000 bytes")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "1000 bytes")) << s;
  EXPECT_EQ(transport.ChannelStats().front().send_failures, 1u);
  transport.Shutdown();
  EXPECT_EQ((*publisher)->Publish("x").code(), absl::StatusCode::kFailedPrecondition);
}

TEST(DdsTransportStartTest, AProfileFileThatDoesNotLoadIsAnErrorNamingIt) {
  DdsTransportOptions t;
  t.domain_id = RandomDomain();
  t.profile_file = "/nonexistent/profiles.xml";
  DdsTransport transport(t);
  RemoteEndpoint e;
  e.channel = "/ping";
  e.type_name = "cyber.dds_test.Ping";
  auto publisher = transport.Publisher(e);
  ASSERT_FALSE(publisher.ok());
  EXPECT_EQ(publisher.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(publisher.status().message(),
                                "profile_file \"/nonexistent/profiles.xml\""))
      << publisher.status();
  EXPECT_FALSE(transport.participant_started());
}

TEST(DdsTransportOptionsTest, MalformedEnvironmentIsNamed) {
  setenv("CYBER_DOMAIN_ID", "300", 1);
  auto o = DdsTransportOptionsFromEnvironment("p");
  ASSERT_FALSE(o.ok());
  EXPECT_TRUE(absl::StrContains(o.status().message(), "CYBER_DOMAIN_ID")) << o.status();
  EXPECT_TRUE(absl::StrContains(o.status().message(), "\"300\"")) << o.status();
  setenv("CYBER_DOMAIN_ID", "7", 1);
  setenv("CYBER_IP", "10.0.0", 1);
  o = DdsTransportOptionsFromEnvironment("p");
  ASSERT_FALSE(o.ok());
  EXPECT_TRUE(absl::StrContains(o.status().message(), "CYBER_IP")) << o.status();
  setenv("CYBER_IP", "127.0.0.1", 1);  // every host has it
  o = DdsTransportOptionsFromEnvironment("p");
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->domain_id, 7u);
  EXPECT_EQ(o->interface_address, "127.0.0.1");
  unsetenv("CYBER_DOMAIN_ID");
  unsetenv("CYBER_IP");
  o = DdsTransportOptionsFromEnvironment("p");
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->domain_id, 80u);  // Cyber RT's default
  EXPECT_TRUE(o->interface_address.empty());
}

// An address the host does not have would leave the process alone on the
// network without a word from Fast-DDS: refused, naming the variable, the
// value and the addresses the host has (198.18.255.254: the benchmarking
// range, on no interface of a test machine).
TEST(DdsTransportOptionsTest, CyberIpThisHostDoesNotHaveIsRefusedWithItsAddresses) {
  setenv("CYBER_IP", "198.18.255.254", 1);
  auto o = DdsTransportOptionsFromEnvironment("p");
  unsetenv("CYBER_IP");
  ASSERT_FALSE(o.ok());
  const std::string message(o.status().message());
  EXPECT_TRUE(absl::StrContains(message, "CYBER_IP")) << message;
  EXPECT_TRUE(absl::StrContains(message, "\"198.18.255.254\"")) << message;
  EXPECT_TRUE(absl::StrContains(message, "lo 127.0.0.1")) << message;
}

TEST(DdsTransportOptionsTest, DiscoveryServerFromEnvironment) {
  setenv("CYBER_DISCOVERY_SERVER", "198.18.0.1", 1);
  auto o = DdsTransportOptionsFromEnvironment("p");
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->discovery_server_address, "198.18.0.1");
  EXPECT_EQ(o->discovery_server_port, 11811);
  setenv("CYBER_DISCOVERY_SERVER", "198.18.0.1:12000", 1);
  o = DdsTransportOptionsFromEnvironment("p");
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->discovery_server_port, 12000);
  setenv("CYBER_DISCOVERY_SERVER", "198.18.0.1:0", 1);
  o = DdsTransportOptionsFromEnvironment("p");
  unsetenv("CYBER_DISCOVERY_SERVER");
  ASSERT_FALSE(o.ok());
  EXPECT_TRUE(absl::StrContains(o.status().message(), "CYBER_DISCOVERY_SERVER: \"198.18.0.1:0\""))
      << o.status();
}

}  // namespace
}  // namespace dds
}  // namespace cyber
