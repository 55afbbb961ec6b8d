// DomainGraph against a running two-process graph (the sensor_polling
// example's pollers and fusion, each a mainboard on a random domain): what
// the processes announce, how a tool decodes a channel it was not compiled
// with, how precisely another message version is named, which data-sharing
// bounds drop messages, and how soon a process that leaves or is killed
// drops out.

#include "cyber/graph/domain_graph.h"

#include <signal.h>
#include <sys/wait.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "cyber/common/mutex.h"
#include "cyber/graph/descriptors.h"
#include "cyber/graph/graph_announcer.h"
#include "cyber/testing/log_capture.h"
#include "cyber/transport/dds/testing/dds_test_process.h"
#include "cyber/transport/dds/testing/subprocess.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cyber {
namespace graph {
namespace {

namespace pb = google::protobuf;
using dds_test::kPatience;
using dds_test::RunfilePath;
using dds_test::Subprocess;
using ::testing::Contains;
using ::testing::HasSubstr;

class DomainGraphTest : public ::testing::Test {
 protected:
  void SetUp() override {
    domain_ = dds_test::RandomDomain();
    setenv("CYBER_DOMAIN_ID", std::to_string(domain_).c_str(), 1);
    absl::StatusOr<DomainGraphOptions> options = DomainGraphOptionsFromEnvironment("graph_test");
    ASSERT_TRUE(options.ok()) << options.status();
    absl::StatusOr<std::unique_ptr<DomainGraph>> graph = DomainGraph::Join(*options);
    ASSERT_TRUE(graph.ok()) << graph.status();
    graph_ = *std::move(graph);
  }

  void TearDown() override {
    for (auto& p : processes_) Stop(p.get());
    graph_.reset();
  }

  // The example's mainboard on one of its dags, or on `dag_path` (a
  // runfile path) when given.
  Subprocess* StartMainboard(const std::string& name, const std::string& dag,
                             const std::string& dag_path = "") {
    processes_.push_back(std::make_unique<Subprocess>(std::vector<std::string>{
        RunfilePath("examples/sensor_polling/mainboard"), "--process_name=" + name,
        "--status=never", "-d",
        RunfilePath(dag_path.empty() ? "examples/sensor_polling/" + dag : dag_path)}));
    return processes_.back().get();
  }

  static void Stop(Subprocess* p) {
    p->Kill(SIGINT);
    if (!p->Wait(kPatience).has_value()) p->Kill(SIGKILL);
  }

  // Waits until the graph shows /sensor/imu with a writer and a reader.
  bool ImuHasAWriterAndAReader() {
    return graph_->WaitUntil(
        [](const DomainGraph& g) {
          absl::StatusOr<ChannelView> imu = g.Channel("/sensor/imu");
          return imu.ok() && !imu->writers.empty() && !imu->readers.empty();
        },
        kPatience);
  }

  bool HasProcess(const std::string& name) {
    for (const ProcessView& p : graph_->Processes()) {
      if (p.graph.process() == name && p.graph.nodes_size() > 0) return true;
    }
    return false;
  }

  uint32_t domain_ = 0;
  std::unique_ptr<DomainGraph> graph_;
  std::vector<std::unique_ptr<Subprocess>> processes_;
};

TEST_F(DomainGraphTest, SeesBothProcessesTheirChannelsNodesAndStatus) {
  Subprocess* pollers = StartMainboard("pollers", "pollers.dag");
  StartMainboard("fusion", "fusion.dag");
  // A process announces itself at once, and its components' channels as
  // they are made.
  ASSERT_TRUE(ImuHasAWriterAndAReader());

  absl::StatusOr<ChannelView> imu = graph_->Channel("/sensor/imu");
  ASSERT_TRUE(imu.ok()) << imu.status();
  EXPECT_EQ(imu->type_name, "sensor_polling.ImuReading");
  EXPECT_FALSE(imu->type_conflict) << absl::StrJoin(imu->conflict_details, "\n");
  ASSERT_EQ(imu->writers.size(), 1u);
  EXPECT_EQ(imu->writers[0].node, "imu");
  EXPECT_EQ(imu->writers[0].process_label.rfind("pollers@", 0), 0u) << imu->writers[0].process_label;
  EXPECT_THAT(imu->writers[0].process_label, HasSubstr(absl::StrCat(":", pollers->pid())));
  ASSERT_TRUE(imu->writers[0].qos.has_value());
  ASSERT_FALSE(imu->readers.empty());
  EXPECT_EQ(imu->readers[0].process_label.rfind("fusion@", 0), 0u);
  EXPECT_EQ(LinkKind(imu->writers[0].host, imu->readers[0].host), "shm");
  ASSERT_NE(imu->descriptor, nullptr);
  // The tool is not compiled with the type: the descriptor is from the wire.
  EXPECT_EQ(pb::DescriptorPool::generated_pool()->FindMessageTypeByName(
                "sensor_polling.ImuReading"),
            nullptr);

  std::vector<std::string> nodes;
  for (const NodeView& n : graph_->Nodes()) nodes.push_back(n.name);
  EXPECT_THAT(nodes, Contains("imu"));
  EXPECT_THAT(nodes, Contains("lidar"));
  EXPECT_THAT(nodes, Contains("fusion"));

  // Statistics come once a second, and each mainboard says so.
  for (const ProcessView& p : graph_->Processes()) {
    EXPECT_EQ(p.graph.status_period_ns(), 1000000000) << p.label;
  }
  ASSERT_TRUE(graph_->WaitUntil(
      [](const DomainGraph& g) {
        for (const ProcessView& p : g.Processes()) {
          if (p.graph.process() != "pollers" || !p.status.has_value()) continue;
          bool imu_ran = false, imu_bytes_counted = false;
          for (const ComponentStatus& c : p.status->components()) {
            imu_ran |= c.name() == "imu" && c.procs() > 0;
          }
          for (const ChannelCounts& c : p.status->channels()) {
            imu_bytes_counted |= c.channel() == "/sensor/imu" && c.sent() > 0 &&
                                 c.bytes_sent() >= c.sent() * 10;  // an ImuReading is > 10 bytes
          }
          if (imu_ran && imu_bytes_counted) return true;
        }
        return false;
      },
      kPatience));

  // Unknown names get the nearest known one.
  absl::StatusOr<ChannelView> typo = graph_->Channel("/sensor/imv");
  ASSERT_FALSE(typo.ok());
  EXPECT_THAT(typo.status().message(), HasSubstr("did you mean \"/sensor/imu\""));
  EXPECT_THAT(typo.status().message(), HasSubstr(absl::StrCat("domain ", domain_)));
}

TEST_F(DomainGraphTest, DecodesMessagesOfATypeItWasNotCompiledWith) {
  StartMainboard("pollers", "pollers.dag");
  ASSERT_TRUE(graph_->WaitUntil(
      [](const DomainGraph& g) { return g.Channel("/sensor/imu").ok(); }, kPatience));
  struct Got {
    Mutex mu;
    std::vector<std::string> texts ABSL_GUARDED_BY(mu);
    std::vector<DomainGraph::Received> received ABSL_GUARDED_BY(mu);  // payload not kept
  } got;
  DomainGraph* g = graph_.get();
  const absl::Time before = absl::Now();
  absl::StatusOr<std::unique_ptr<RemoteSubscription>> sub =
      graph_->Subscribe("/sensor/imu", [&got, g](const DomainGraph::Received& r) {
        absl::StatusOr<std::unique_ptr<pb::Message>> m = g->Decode(r.type_name, r.payload);
        MutexLock lock(&got.mu);
        got.texts.push_back(m.ok() ? (*m)->ShortDebugString() : std::string(m.status().message()));
        got.received.push_back(r);
        got.received.back().payload = {};
      });
  ASSERT_TRUE(sub.ok()) << sub.status();
  ASSERT_TRUE(dds_test::Eventually([&got] {
    MutexLock lock(&got.mu);
    return got.texts.size() >= 3;
  }));
  sub->reset();
  MutexLock lock(&got.mu);
  // Every message decoded, with the fields the poller fills.
  for (const std::string& t : got.texts) EXPECT_THAT(t, HasSubstr("seq:")) << t;
  // Who sent each (what a recorder keeps): the process by its label, one
  // writer, increasing numbers, a send stamp of the writer's wall clock.
  ASSERT_GE(got.received.size(), 3u);
  for (size_t i = 0; i < got.received.size(); ++i) {
    const DomainGraph::Received& r = got.received[i];
    EXPECT_EQ(r.writer.rfind("pollers@", 0), 0u) << r.writer;
    EXPECT_EQ(r.writer_guid.size(), 32u) << r.writer_guid;
    EXPECT_EQ(r.writer_guid, got.received[0].writer_guid);
    // Increasing (a keep-last writer may drop one for a slow reader).
    if (i > 0) {
      EXPECT_GT(r.sequence, got.received[i - 1].sequence);
    }
    // The same host's wall clock: a minute either way only bounds a wrong
    // stamp (0, or the steady clock's), never a right one.
    EXPECT_GT(r.send_time, before - absl::Minutes(1));
    EXPECT_LT(r.send_time, absl::Now() + absl::Minutes(1));
  }
}

TEST_F(DomainGraphTest, NamesTheFieldsInWhichAnotherVersionDiffers) {
  Subprocess* pollers = StartMainboard("pollers", "pollers.dag");
  ASSERT_TRUE(graph_->WaitUntil(
      [](const DomainGraph& g) { return g.Channel("/sensor/imu").ok(); }, kPatience));
  absl::StatusOr<ChannelView> imu = graph_->Channel("/sensor/imu");
  ASSERT_TRUE(imu.ok()) << imu.status();
  ASSERT_NE(imu->descriptor, nullptr);

  // Another process reads /sensor/imu with an older ImuReading: one field
  // less, one of another type. It announces itself as any process does.
  pb::FileDescriptorSet old_set = DescriptorSetOf(imu->descriptor);
  pb::FileDescriptorProto* file = old_set.mutable_file(old_set.file_size() - 1);
  pb::DescriptorProto* reading = nullptr;
  for (pb::DescriptorProto& m : *file->mutable_message_type()) {
    if (m.name() == "ImuReading") reading = &m;
  }
  ASSERT_NE(reading, nullptr);
  ASSERT_GE(reading->field_size(), 2);
  const std::string removed = reading->field(reading->field_size() - 1).name();
  reading->mutable_field()->RemoveLast();
  reading->mutable_field(0)->set_type(pb::FieldDescriptorProto::TYPE_STRING);
  const std::string retyped = reading->field(0).name();

  test::LogCapture errors(google::GLOG_ERROR);
  dds::DdsTransportOptions t;
  t.domain_id = domain_;
  t.process_name = "old_reader";
  auto transport = std::make_shared<dds::DdsTransport>(t);
  ProcessGraph old_graph;
  old_graph.add_nodes("old_node");
  ChannelEndpoint* e = old_graph.add_channels();
  e->set_channel("/sensor/imu");
  e->set_node("old_node");
  e->set_role(ChannelEndpoint::READER);
  e->set_type_name("sensor_polling.ImuReading");
  e->mutable_qos()->set_reliable(true);
  (*old_graph.mutable_descriptors())["sensor_polling.ImuReading"] = old_set;
  absl::StatusOr<std::unique_ptr<GraphAnnouncer>> announcer = GraphAnnouncer::Start(
      transport, [&old_graph] { return old_graph; }, nullptr);
  ASSERT_TRUE(announcer.ok()) << announcer.status();

  ASSERT_TRUE(graph_->WaitUntil([this](const DomainGraph&) { return HasProcess("old_reader"); },
                                kPatience));
  imu = graph_->Channel("/sensor/imu");
  ASSERT_TRUE(imu.ok()) << imu.status();
  EXPECT_TRUE(imu->type_conflict);
  const std::string details = absl::StrJoin(imu->conflict_details, "\n");
  EXPECT_THAT(details, HasSubstr(absl::StrCat("only in pollers@")));
  EXPECT_THAT(details, HasSubstr(removed));
  EXPECT_THAT(details, HasSubstr(absl::StrCat(retyped, " (string) in old_reader@")));

  // Each process that uses the channel says so too, once: here, the old
  // reader's own announcer names the writer and the fields.
  // (Only lines about this test's pollers: a process of another test that
  // met this domain, which shell tests pick unclaimed, is not its business.)
  std::vector<std::string> said = errors.WaitFor(
      absl::StrCat(":", pollers->pid(), " writes another version of sensor_polling.ImuReading"), 1);
  ASSERT_EQ(said.size(), 1u);
  EXPECT_THAT(said[0], HasSubstr("channel \"/sensor/imu\": pollers@"));
  EXPECT_THAT(said[0], HasSubstr(absl::StrCat(retyped, " (string) in old_reader@")));
  EXPECT_THAT(said[0], HasSubstr(removed));
  announcer->reset();
  transport->Shutdown();
}

// A reader bounded for data sharing (from its dag) and an unbounded writer
// in another process: the reader's DDS drops the writer's messages over the
// bound, uncounted, so the graph names the pair, and a process of the pair
// says so in its log.
TEST_F(DomainGraphTest, ADataSharingBoundThatDropsMessagesIsNamed) {
  Subprocess* pollers = StartMainboard("pollers", "pollers.dag");
  Subprocess* fusion = StartMainboard("fusion", "", "tests/graph/testdata/fusion_bounded_imu.dag");
  ASSERT_TRUE(ImuHasAWriterAndAReader());
  absl::StatusOr<ChannelView> imu = graph_->Channel("/sensor/imu");
  ASSERT_TRUE(imu.ok()) << imu.status();
  ASSERT_EQ(imu->readers.size(), 1u);
  ASSERT_TRUE(imu->readers[0].qos.has_value());
  EXPECT_EQ(imu->readers[0].qos->data_sharing_max_bytes, 4096u);  // the dag's
  ASSERT_EQ(imu->bound_mismatches.size(), 1u) << absl::StrJoin(imu->bound_mismatches, "\n");
  const std::string fusion_label = imu->readers[0].process_label;
  EXPECT_THAT(fusion_label, HasSubstr(absl::StrCat(":", fusion->pid())));
  EXPECT_THAT(imu->writers[0].process_label, HasSubstr(absl::StrCat(":", pollers->pid())));
  EXPECT_THAT(imu->bound_mismatches[0],
              HasSubstr(absl::StrCat("reader ", fusion_label,
                                     " (fusion) has data_sharing_max_bytes 4096 and writer ",
                                     imu->writers[0].process_label, " (imu) has none")));

  // A third process that starts writing /sensor/imu unbounded (its graph
  // has no channel at first, then the writer): its own announcer says what
  // fusion's bound does to its messages, whichever of its graph and
  // fusion's it saw first.
  test::LogCapture errors(google::GLOG_ERROR);
  dds::DdsTransportOptions t;
  t.domain_id = domain_;
  t.process_name = "late_writer";
  auto transport = std::make_shared<dds::DdsTransport>(t);
  std::atomic<bool> writes{false};
  const std::string type = imu->type_name;
  absl::StatusOr<std::unique_ptr<GraphAnnouncer>> announcer = GraphAnnouncer::Start(
      transport,
      [&writes, type] {
        ProcessGraph g;
        g.add_nodes("late_node");
        if (writes.load()) {
          ChannelEndpoint* e = g.add_channels();
          e->set_channel("/sensor/imu");
          e->set_node("late_node");
          e->set_role(ChannelEndpoint::WRITER);
          e->set_type_name(type);
          e->mutable_qos()->set_reliable(true);
          e->mutable_qos()->set_depth(16);
        }
        return g;
      },
      nullptr);
  ASSERT_TRUE(announcer.ok()) << announcer.status();
  ASSERT_TRUE(graph_->WaitUntil([this](const DomainGraph&) { return HasProcess("late_writer"); },
                                kPatience));
  writes.store(true);
  (*announcer)->Poke();
  std::vector<std::string> said = errors.WaitFor(
      absl::StrCat("reader ", fusion_label, " (fusion) has data_sharing_max_bytes"), 1);
  ASSERT_EQ(said.size(), 1u);
  EXPECT_THAT(said[0], HasSubstr("channel \"/sensor/imu\""));
  EXPECT_THAT(said[0], HasSubstr("writer late_writer@"));
  EXPECT_THAT(said[0], HasSubstr("(late_node) has none"));
  EXPECT_THAT(said[0], HasSubstr("over 4096 bytes are dropped"));
  ASSERT_TRUE(graph_->WaitUntil(
      [](const DomainGraph& g) {
        absl::StatusOr<ChannelView> c = g.Channel("/sensor/imu");
        return c.ok() && c->bound_mismatches.size() == 2;
      },
      kPatience));
  announcer->reset();
  transport->Shutdown();
}

TEST_F(DomainGraphTest, AProcessThatLeavesOrIsKilledDropsOut) {
  Subprocess* pollers = StartMainboard("pollers", "pollers.dag");
  Subprocess* fusion = StartMainboard("fusion", "fusion.dag");
  ASSERT_TRUE(ImuHasAWriterAndAReader());

  // Killed: gone after its lease (3 s).
  const absl::Time killed = absl::Now();
  fusion->Kill(SIGKILL);
  fusion->Wait(kPatience);
  ASSERT_TRUE(graph_->WaitUntil([this](const DomainGraph&) { return !HasProcess("fusion"); },
                                kPatience));
  // The lease is 3 s; the bound leaves room for a loaded machine.
  EXPECT_LT(absl::Now() - killed, absl::Seconds(8)) << "lease is 3 s";
  // The living writer stays, or comes back. Under load CI saw pollers
  // dropped for a second with fusion and then found again: Fast-DDS 2.9's
  // shared-memory ports lock with a timeout (1 s), so a process killed
  // while it holds its own port's lock makes every send to it wait that
  // long until its lease ends, and pollers' announcements, sent from the
  // same thread, come late. The graph must end as the processes are.
  ASSERT_TRUE(graph_->WaitUntil(
      [this](const DomainGraph& g) {
        absl::StatusOr<ChannelView> imu = g.Channel("/sensor/imu");
        return HasProcess("pollers") && !HasProcess("fusion") && imu.ok() &&
               imu->writers.size() == 1 && imu->readers.empty();
      },
      kPatience))
      << "pollers' writer of /sensor/imu should remain after fusion's kill";

  // Leaving cleanly: gone as soon as it leaves.
  pollers->Kill(SIGINT);
  ASSERT_TRUE(pollers->Wait(kPatience).has_value());
  ASSERT_TRUE(graph_->WaitUntil([this](const DomainGraph&) { return !HasProcess("pollers"); },
                                absl::Seconds(3)));
  EXPECT_TRUE(graph_->Channels().empty());
  absl::StatusOr<ChannelView> gone = graph_->Channel("/sensor/imu");
  ASSERT_FALSE(gone.ok());
  EXPECT_THAT(gone.status().message(), HasSubstr("no process announced itself"));
}

TEST_F(DomainGraphTest, AProgramThatCallsCyberInitIsSeenWithoutDoingAnythingForIt) {
  processes_.push_back(std::make_unique<Subprocess>(std::vector<std::string>{
      RunfilePath("tests/graph/cyber_init_peer"), "--process_name=talker_process"}));
  ASSERT_TRUE(processes_.back()->WaitForLine("ready", kPatience).has_value());
  ASSERT_TRUE(graph_->WaitUntil(
      [](const DomainGraph& g) { return g.Channel("/talk").ok(); }, kPatience));
  absl::StatusOr<ChannelView> talk = graph_->Channel("/talk");
  ASSERT_TRUE(talk.ok()) << talk.status();
  EXPECT_EQ(talk->type_name, "cyber.dds_test.Ping");
  ASSERT_EQ(talk->writers.size(), 1u);
  EXPECT_EQ(talk->writers[0].node, "talker");
  EXPECT_NE(talk->descriptor, nullptr);
  absl::StatusOr<NodeView> talker = graph_->Node("talker");
  ASSERT_TRUE(talker.ok()) << talker.status();
  EXPECT_THAT(talker->writes, Contains("/talk"));
  // It sends no status, and says so: a tool waits for none.
  for (const ProcessView& p : graph_->Processes()) {
    if (p.graph.process() == "talker_process") {
      EXPECT_EQ(p.graph.status_period_ns(), 0) << p.label;
    }
  }
}

}  // namespace
}  // namespace graph
}  // namespace cyber
