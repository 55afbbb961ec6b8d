#include "cyber/lockstep/coordinator.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cyber {
namespace lockstep {
namespace {

using ::testing::HasSubstr;
using Kind = Coordinator::Decision::Kind;

constexpr int64_t kMs = 1000000;
const absl::Time kT0 = absl::FromUnixSeconds(1000);  // the steady clock's now, as a time

CoordinatorOptions TwoProcesses() {
  CoordinatorOptions o;
  o.processes = {"pollers", "fusion"};
  o.start_ns = 0;
  o.end_ns = 100 * kMs;
  o.run_id = 7;
  return o;
}

Report Join(const std::string& p, int64_t pid = 1, const std::string& clock = "simulated") {
  Report r;
  r.set_kind(Report::JOIN);
  r.set_process(p);
  r.set_clock(clock);
  r.set_host("h");
  r.set_pid(pid);
  return r;
}

struct Count {
  std::string channel;
  bool writes, reads;
  uint64_t sent, received;
};

Report Done(const std::string& p, uint64_t step, int64_t reached, int64_t next,
            std::vector<Count> counts = {}, uint64_t run = 7) {
  Report r;
  r.set_kind(Report::DONE);
  r.set_process(p);
  r.set_run_id(run);
  r.set_step(step);
  r.set_reached_ns(reached);
  r.set_next_event_ns(next);
  for (const Count& c : counts) {
    ChannelCount* cc = r.add_channels();
    cc->set_channel(c.channel);
    cc->set_writes(c.writes);
    cc->set_reads(c.reads);
    cc->set_sent(c.sent);
    cc->set_received(c.received);
  }
  return r;
}

Coordinator Joined() {
  absl::StatusOr<Coordinator> c = Coordinator::Create(TwoProcesses(), kT0);
  EXPECT_TRUE(c.ok()) << c.status();
  c->OnReport(Join("pollers"), kT0);
  c->OnReport(Join("fusion", 2), kT0);
  return *std::move(c);
}

// ReadyToGrant() says what Next() would do, without starting a step: a
// paused driver asks it.
TEST(CoordinatorTest, ReadyToGrantWhenJoinedOrReportedAndNotAtTheEnd) {
  absl::StatusOr<Coordinator> c = Coordinator::Create(TwoProcesses(), kT0);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE(c->ReadyToGrant());
  c->OnReport(Join("pollers"), kT0);
  c->OnReport(Join("fusion", 2), kT0);
  EXPECT_TRUE(c->ReadyToGrant());
  EXPECT_TRUE(c->ReadyToGrant()) << "asking starts nothing";
  ASSERT_EQ(c->Next(kT0).kind, Kind::kGrant);  // step 1 at 0
  EXPECT_FALSE(c->ReadyToGrant()) << "step 1 not reported";
  c->OnReport(Done("pollers", 1, 0, 100 * kMs), kT0);
  EXPECT_FALSE(c->ReadyToGrant());
  c->OnReport(Done("fusion", 1, 0, -1), kT0);
  EXPECT_TRUE(c->ReadyToGrant());
  // Held for a minute (a pause): the next grant's deadline starts when it
  // is asked for, not when the step became ready.
  const absl::Time later = kT0 + absl::Minutes(1);
  Coordinator::Decision d = c->Next(later);
  ASSERT_EQ(d.kind, Kind::kGrant);
  EXPECT_EQ(d.grant.instant_ns(), 100 * kMs);  // the end
  EXPECT_EQ(c->Next(later + absl::Seconds(9)).kind, Kind::kWait);
  c->OnReport(Done("pollers", 2, 100 * kMs, -1), later);
  c->OnReport(Done("fusion", 2, 100 * kMs, -1), later);
  EXPECT_FALSE(c->ReadyToGrant()) << "the end is reached: a stop, not a grant";
  EXPECT_EQ(c->Next(later).kind, Kind::kStop);
  EXPECT_FALSE(c->ReadyToGrant());
}

TEST(CoordinatorTest, NoGrantBeforeEveryProcessJoinedThenTheStartInstant) {
  absl::StatusOr<Coordinator> c = Coordinator::Create(TwoProcesses(), kT0);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->Next(kT0).kind, Kind::kWait);
  c->OnReport(Join("pollers"), kT0);
  Coordinator::Decision d = c->Next(kT0);
  EXPECT_EQ(d.kind, Kind::kWait);
  EXPECT_EQ(d.until, kT0 + absl::Seconds(60));
  EXPECT_EQ(c->Waiting(), "waiting for fusion to join");
  c->OnReport(Join("fusion", 2), kT0);
  d = c->Next(kT0);
  ASSERT_EQ(d.kind, Kind::kGrant);
  EXPECT_EQ(d.grant.step(), 1u);
  EXPECT_EQ(d.grant.instant_ns(), 0);
  EXPECT_EQ(d.grant.run_id(), 7u);
  EXPECT_EQ(c->Next(kT0).kind, Kind::kWait);  // handed out once
}

TEST(CoordinatorTest, NoGrantBeforeEveryWriterMatchedEveryReader) {
  absl::StatusOr<Coordinator> c = Coordinator::Create(TwoProcesses(), kT0);
  ASSERT_TRUE(c.ok());
  Report pollers = Join("pollers");
  ChannelCount* imu = pollers.add_channels();
  imu->set_channel("/imu");
  imu->set_writes(true);
  Report fusion = Join("fusion", 2);
  ChannelCount* in = fusion.add_channels();
  in->set_channel("/imu");
  in->set_reads(true);
  c->OnReport(pollers, kT0);
  c->OnReport(fusion, kT0);
  EXPECT_EQ(c->Next(kT0).kind, Kind::kWait);
  EXPECT_EQ(c->Waiting(), "the writer of \"pollers\" on \"/imu\" has not matched the reader of \"fusion\" yet");
  imu->add_matched_readers("fusion");  // its JOIN again, now matched
  c->OnReport(pollers, kT0);
  EXPECT_EQ(c->Next(kT0).kind, Kind::kGrant);
}

TEST(CoordinatorTest, TheNextInstantIsTheEarliestEventAnyProcessHas) {
  Coordinator c = Joined();
  ASSERT_EQ(c.Next(kT0).kind, Kind::kGrant);
  c.OnReport(Done("pollers", 1, 0, 10 * kMs), kT0);
  EXPECT_EQ(c.Next(kT0).kind, Kind::kWait);
  EXPECT_THAT(c.Waiting(), HasSubstr("no DONE yet from fusion"));
  c.OnReport(Done("fusion", 1, 0, 4 * kMs), kT0);
  Coordinator::Decision d = c.Next(kT0);
  ASSERT_EQ(d.kind, Kind::kGrant);
  EXPECT_EQ(d.grant.step(), 2u);
  EXPECT_EQ(d.grant.instant_ns(), 4 * kMs);
}

TEST(CoordinatorTest, TimeDoesNotMoveWhileAMessageIsInFlight) {
  Coordinator c = Joined();
  ASSERT_EQ(c.Next(kT0).kind, Kind::kGrant);
  // pollers sent 3 on /imu at the start instant; fusion has 2 of them.
  c.OnReport(Done("pollers", 1, 0, 10 * kMs, {{"/imu", true, false, 3, 0}}), kT0);
  c.OnReport(Done("fusion", 1, 0, -1, {{"/imu", false, true, 0, 2}}), kT0);
  EXPECT_EQ(c.Next(kT0).kind, Kind::kWait);
  EXPECT_THAT(c.Waiting(), HasSubstr("\"fusion\" has received 2 of the 3 messages the others sent on \"/imu\""));
  // The third arrives: fusion delivers it at the same instant, reports again.
  c.OnReport(Done("fusion", 1, 0, -1, {{"/imu", false, true, 0, 3}}), kT0);
  Coordinator::Decision d = c.Next(kT0);
  ASSERT_EQ(d.kind, Kind::kGrant);
  EXPECT_EQ(d.grant.instant_ns(), 10 * kMs);
}

std::vector<std::string> DueIn(const Grant& g) { return {g.due().begin(), g.due().end()}; }

// A process with nothing of its own at an instant is not waited for; its
// last report stands until a message of the instant reaches it.
TEST(CoordinatorTest, OnlyTheProcessesDueAtAnInstantMustReportIt) {
  Coordinator c = Joined();
  Coordinator::Decision d = c.Next(kT0);
  ASSERT_EQ(d.kind, Kind::kGrant);
  EXPECT_THAT(DueIn(d.grant), ::testing::ElementsAre("fusion", "pollers")) << "the start";
  c.OnReport(Done("pollers", 1, 0, 10 * kMs, {{"/imu", true, false, 0, 0}}), kT0);
  c.OnReport(Done("fusion", 1, 0, -1, {{"/imu", false, true, 0, 0}}), kT0);
  d = c.Next(kT0);
  ASSERT_EQ(d.kind, Kind::kGrant);
  EXPECT_EQ(d.grant.instant_ns(), 10 * kMs);
  EXPECT_THAT(DueIn(d.grant), ::testing::ElementsAre("pollers"));
  // pollers sent nothing to fusion: the step is complete without fusion.
  c.OnReport(Done("pollers", 2, 10 * kMs, 20 * kMs, {{"/imu", true, false, 0, 0}}), kT0);
  EXPECT_TRUE(c.StepComplete());
  d = c.Next(kT0);
  ASSERT_EQ(d.kind, Kind::kGrant);
  EXPECT_EQ(d.grant.instant_ns(), 20 * kMs);
  EXPECT_THAT(DueIn(d.grant), ::testing::ElementsAre("pollers"));
  // Now pollers sends one: fusion, not due, owes its delivery.
  c.OnReport(Done("pollers", 3, 20 * kMs, 30 * kMs, {{"/imu", true, false, 1, 0}}), kT0);
  EXPECT_FALSE(c.StepComplete());
  EXPECT_EQ(c.Next(kT0).kind, Kind::kWait);
  EXPECT_THAT(c.Waiting(), HasSubstr("\"fusion\" has received 0 of the 1 messages the others sent on \"/imu\""));
  // fusion ran at 20 ms for it; its next event (a timer it armed) makes it
  // due again at 25 ms, before pollers.
  c.OnReport(Done("fusion", 3, 20 * kMs, 25 * kMs, {{"/imu", false, true, 0, 1}}), kT0);
  d = c.Next(kT0);
  ASSERT_EQ(d.kind, Kind::kGrant);
  EXPECT_EQ(d.grant.instant_ns(), 25 * kMs);
  EXPECT_THAT(DueIn(d.grant), ::testing::ElementsAre("fusion"));
  EXPECT_EQ(c.Next(kT0).kind, Kind::kWait);
  EXPECT_THAT(c.Waiting(), HasSubstr("no DONE yet from fusion"));
}

TEST(CoordinatorTest, EveryProcessIsDueAtTheEnd) {
  Coordinator c = Joined();
  ASSERT_EQ(c.Next(kT0).kind, Kind::kGrant);
  c.OnReport(Done("pollers", 1, 0, 100 * kMs), kT0);
  c.OnReport(Done("fusion", 1, 0, -1), kT0);
  Coordinator::Decision d = c.Next(kT0);
  ASSERT_EQ(d.kind, Kind::kGrant);
  EXPECT_EQ(d.grant.instant_ns(), 100 * kMs);
  EXPECT_THAT(DueIn(d.grant), ::testing::ElementsAre("fusion", "pollers"));
  c.OnReport(Done("pollers", 2, 100 * kMs, -1), kT0);
  EXPECT_EQ(c.Next(kT0).kind, Kind::kWait);
  EXPECT_THAT(c.Waiting(), HasSubstr("no DONE yet from fusion"));
  c.OnReport(Done("fusion", 2, 100 * kMs, -1), kT0);
  EXPECT_EQ(c.Next(kT0).kind, Kind::kStop);
}

TEST(CoordinatorTest, AReaderAheadOfTheWritersReportWaitsForTheWritersNewReport) {
  Coordinator c = Joined();
  ASSERT_EQ(c.Next(kT0).kind, Kind::kGrant);
  // fusion answered a request (sent 1 on /reply); pollers got it and sent
  // one more /imu in reply, but its first report is older.
  c.OnReport(Done("pollers", 1, 0, 10 * kMs, {{"/imu", true, false, 1, 0}, {"/reply", false, true, 0, 0}}), kT0);
  c.OnReport(Done("fusion", 1, 0, -1, {{"/imu", false, true, 0, 2}, {"/reply", true, false, 1, 0}}), kT0);
  EXPECT_EQ(c.Next(kT0).kind, Kind::kWait);
  c.OnReport(Done("pollers", 1, 0, 10 * kMs, {{"/imu", true, false, 2, 0}, {"/reply", false, true, 0, 1}}), kT0);
  EXPECT_EQ(c.Next(kT0).kind, Kind::kGrant);
}

TEST(CoordinatorTest, AProcessOwnMessagesAreNotExpectedBack) {
  CoordinatorOptions o = TwoProcesses();
  o.processes = {"a", "b"};
  absl::StatusOr<Coordinator> c = Coordinator::Create(o, kT0);
  ASSERT_TRUE(c.ok());
  c->OnReport(Join("a"), kT0);
  c->OnReport(Join("b", 2), kT0);
  ASSERT_EQ(c->Next(kT0).kind, Kind::kGrant);
  // Both write and read /chat: each expects only the other's.
  c->OnReport(Done("a", 1, 0, -1, {{"/chat", true, true, 2, 5}}), kT0);
  c->OnReport(Done("b", 1, 0, -1, {{"/chat", true, true, 5, 2}}), kT0);
  EXPECT_EQ(c->Next(kT0).kind, Kind::kGrant);
}

// Three processes: "imu" and "lidar" each write a channel that "fusion"
// reads, so fusion reads from two processes and gathers.
Coordinator ThreeJoined() {
  CoordinatorOptions o = TwoProcesses();
  o.processes = {"imu", "lidar", "fusion"};
  absl::StatusOr<Coordinator> c = Coordinator::Create(o, kT0);
  EXPECT_TRUE(c.ok()) << c.status();
  for (const char* writer : {"imu", "lidar"}) {
    Report w = Join(writer);
    ChannelCount* out = w.add_channels();
    out->set_channel(absl::StrCat("/", writer));
    out->set_writes(true);
    out->add_matched_readers("fusion");
    c->OnReport(w, kT0);
  }
  Report f = Join("fusion", 2);
  for (const char* channel : {"/imu", "/lidar"}) {
    ChannelCount* in = f.add_channels();
    in->set_channel(channel);
    in->set_reads(true);
  }
  c->OnReport(f, kT0);
  return *std::move(c);
}

// fusion's report: delivered and arrived per channel, its arrivals in all.
Report FusionDone(uint64_t step, int64_t reached, int64_t next, uint64_t imu_received, uint64_t imu_arrived,
                  uint64_t lidar_received, uint64_t lidar_arrived) {
  Report r = Done("fusion", step, reached, next,
                  {{"/imu", false, true, 0, imu_received}, {"/lidar", false, true, 0, lidar_received}});
  r.mutable_channels(0)->set_arrived(imu_arrived);
  r.mutable_channels(1)->set_arrived(lidar_arrived);
  r.set_arrivals(imu_arrived + lidar_arrived);
  return r;
}

std::map<std::string, uint64_t> ThroughIn(const Grant& g) {
  return {g.deliver_through().begin(), g.deliver_through().end()};
}

// Where both writers may send at one instant, the reader hands over
// nothing that arrives during the step: the step is complete once the
// messages have arrived, and a second step at the same instant hands over
// what had arrived, all at once (deliver_through). Where only one of them
// may send, the reader takes messages as they arrive, as any reader does.
TEST(CoordinatorTest, AReaderOfTwoProcessesGathersTheirMessagesOfOneInstant) {
  Coordinator c = ThreeJoined();
  Coordinator::Decision d = c.Next(kT0);
  ASSERT_EQ(d.kind, Kind::kGrant);
  EXPECT_THAT(ThroughIn(d.grant), ::testing::ElementsAre(::testing::Pair("fusion", 0u)))
      << "both writers are due at the start";
  c.OnReport(Done("imu", 1, 0, 10 * kMs, {{"/imu", true, false, 1, 0}}), kT0);
  c.OnReport(Done("lidar", 1, 0, 100 * kMs, {{"/lidar", true, false, 1, 0}}), kT0);
  // fusion ran its own events; lidar's message has arrived, imu's not yet.
  c.OnReport(FusionDone(1, 0, 0, 0, 0, 0, 1), kT0);
  EXPECT_EQ(c.Next(kT0).kind, Kind::kWait);
  EXPECT_THAT(c.Waiting(), HasSubstr("\"fusion\" has had 0 of the 1 messages the others sent on \"/imu\" arrive"));
  c.OnReport(FusionDone(1, 0, 0, 0, 1, 0, 1), kT0);
  d = c.Next(kT0);
  ASSERT_EQ(d.kind, Kind::kGrant);
  EXPECT_EQ(d.grant.step(), 2u);
  EXPECT_EQ(d.grant.instant_ns(), 0) << "the same instant again: fusion hands over what arrived";
  EXPECT_THAT(DueIn(d.grant), ::testing::ElementsAre("fusion"));
  EXPECT_THAT(ThroughIn(d.grant), ::testing::ElementsAre(::testing::Pair("fusion", 2u)));
  c.OnReport(FusionDone(2, 0, 1000 * kMs, 1, 1, 1, 1), kT0);
  // At 10 ms only imu is due and nothing writes to fusion on its behalf:
  // fusion takes imu's messages as they arrive, and what it delivered is
  // what must balance.
  d = c.Next(kT0);
  ASSERT_EQ(d.kind, Kind::kGrant);
  EXPECT_EQ(d.grant.instant_ns(), 10 * kMs);
  EXPECT_THAT(DueIn(d.grant), ::testing::ElementsAre("imu"));
  EXPECT_TRUE(d.grant.deliver_through().empty());
  c.OnReport(Done("imu", 3, 10 * kMs, 100 * kMs, {{"/imu", true, false, 2, 0}}), kT0);
  c.OnReport(FusionDone(3, 10 * kMs, 1000 * kMs, 1, 2, 1, 1), kT0);
  EXPECT_EQ(c.Next(kT0).kind, Kind::kWait);
  EXPECT_THAT(c.Waiting(), HasSubstr("\"fusion\" has received 1 of the 2 messages the others sent on \"/imu\""));
  c.OnReport(FusionDone(3, 10 * kMs, 1000 * kMs, 2, 2, 1, 1), kT0);
  // At 100 ms both are due again: gathered.
  d = c.Next(kT0);
  ASSERT_EQ(d.kind, Kind::kGrant);
  EXPECT_EQ(d.grant.instant_ns(), 100 * kMs);
  EXPECT_THAT(DueIn(d.grant), ::testing::ElementsAre("fusion", "imu", "lidar")) << "the end";
  EXPECT_THAT(ThroughIn(d.grant), ::testing::ElementsAre(::testing::Pair("fusion", 3u)));
  c.OnReport(Done("imu", 4, 100 * kMs, -1, {{"/imu", true, false, 3, 0}}), kT0);
  c.OnReport(Done("lidar", 4, 100 * kMs, -1, {{"/lidar", true, false, 2, 0}}), kT0);
  c.OnReport(FusionDone(4, 100 * kMs, 100 * kMs, 2, 3, 1, 2), kT0);
  // The end is reached, but fusion has messages of it to hand over: one
  // more step at the end before the stop.
  d = c.Next(kT0);
  ASSERT_EQ(d.kind, Kind::kGrant);
  EXPECT_EQ(d.grant.instant_ns(), 100 * kMs);
  EXPECT_THAT(ThroughIn(d.grant), ::testing::ElementsAre(::testing::Pair("fusion", 5u)));
  c.OnReport(Done("imu", 5, 100 * kMs, -1, {{"/imu", true, false, 3, 0}}), kT0);
  c.OnReport(Done("lidar", 5, 100 * kMs, -1, {{"/lidar", true, false, 2, 0}}), kT0);
  c.OnReport(FusionDone(5, 100 * kMs, -1, 3, 3, 2, 2), kT0);
  d = c.Next(kT0);
  EXPECT_EQ(d.kind, Kind::kStop);
  EXPECT_THAT(d.grant.why(), HasSubstr("after 5 steps"));
}

// A process that may run at an instant because a due process writes to it
// counts as a writer that may send: here "relay" forwards imu's messages,
// so fusion reads from imu and relay, and both may send at 10 ms though
// only imu is due.
TEST(CoordinatorTest, AWriterReachedThroughAnotherProcessMaySendToo) {
  CoordinatorOptions o = TwoProcesses();
  o.processes = {"imu", "relay", "fusion"};
  absl::StatusOr<Coordinator> c = Coordinator::Create(o, kT0);
  ASSERT_TRUE(c.ok());
  auto channel = [](Report* r, const std::string& name, bool writes, const std::string& reader) {
    ChannelCount* cc = r->add_channels();
    cc->set_channel(name);
    cc->set_writes(writes);
    cc->set_reads(!writes);
    if (writes) cc->add_matched_readers(reader);
  };
  Report imu = Join("imu");
  channel(&imu, "/imu", true, "relay");
  imu.mutable_channels(0)->add_matched_readers("fusion");
  Report relay = Join("relay", 2);
  channel(&relay, "/imu", false, "");
  channel(&relay, "/relayed", true, "fusion");
  Report fusion = Join("fusion", 3);
  channel(&fusion, "/imu", false, "");
  channel(&fusion, "/relayed", false, "");
  c->OnReport(imu, kT0);
  c->OnReport(relay, kT0);
  c->OnReport(fusion, kT0);
  ASSERT_EQ(c->Next(kT0).kind, Kind::kGrant);
  c->OnReport(Done("imu", 1, 0, 10 * kMs, {{"/imu", true, false, 0, 0}}), kT0);
  c->OnReport(Done("relay", 1, 0, -1, {{"/imu", false, true, 0, 0}, {"/relayed", true, false, 0, 0}}), kT0);
  c->OnReport(Done("fusion", 1, 0, -1, {{"/imu", false, true, 0, 0}, {"/relayed", false, true, 0, 0}}), kT0);
  Coordinator::Decision d = c->Next(kT0);
  ASSERT_EQ(d.kind, Kind::kGrant);
  EXPECT_THAT(DueIn(d.grant), ::testing::ElementsAre("imu"));
  EXPECT_THAT(ThroughIn(d.grant), ::testing::ElementsAre(::testing::Pair("fusion", 0u)));
}

// Who reads from whom follows the reports: a channel opened after the
// join counts from the next grant.
TEST(CoordinatorTest, AChannelOpenedAfterTheJoinCanMakeAReaderGather) {
  CoordinatorOptions o = TwoProcesses();
  o.processes = {"imu", "lidar", "fusion"};
  absl::StatusOr<Coordinator> c = Coordinator::Create(o, kT0);
  ASSERT_TRUE(c.ok());
  Report imu = Join("imu");
  ChannelCount* out = imu.add_channels();
  out->set_channel("/imu");
  out->set_writes(true);
  out->add_matched_readers("fusion");
  Report fusion = Join("fusion", 2);
  ChannelCount* in = fusion.add_channels();
  in->set_channel("/imu");
  in->set_reads(true);
  c->OnReport(imu, kT0);
  c->OnReport(Join("lidar", 3), kT0);
  c->OnReport(fusion, kT0);
  Coordinator::Decision d = c->Next(kT0);
  ASSERT_EQ(d.kind, Kind::kGrant);
  EXPECT_TRUE(d.grant.deliver_through().empty()) << "one writer only";
  c->OnReport(Done("imu", 1, 0, 100 * kMs, {{"/imu", true, false, 0, 0}}), kT0);
  c->OnReport(Done("lidar", 1, 0, 100 * kMs, {{"/lidar", true, false, 0, 0}}), kT0);
  c->OnReport(FusionDone(1, 0, -1, 0, 0, 0, 0), kT0);
  d = c->Next(kT0);
  ASSERT_EQ(d.kind, Kind::kGrant);
  EXPECT_EQ(d.grant.instant_ns(), 100 * kMs);
  EXPECT_THAT(ThroughIn(d.grant), ::testing::ElementsAre(::testing::Pair("fusion", 0u)));
}

// "f1" reads from a and b, "f2" from a and c. At an instant where a and b
// are due, f1 gathers, and so does f2 though only one of its writers may
// send: a second step at the instant follows, and f2 must not take a
// message of that step as it arrives.
TEST(CoordinatorTest, WhenOneReaderGathersEveryGatheringReaderDoes) {
  CoordinatorOptions o = TwoProcesses();
  o.processes = {"a", "b", "c", "f1", "f2"};
  absl::StatusOr<Coordinator> c = Coordinator::Create(o, kT0);
  ASSERT_TRUE(c.ok());
  auto writer = [](const std::string& name, std::vector<std::string> readers) {
    Report r = Join(name);
    ChannelCount* out = r.add_channels();
    out->set_channel("/" + name);
    out->set_writes(true);
    for (const std::string& reader : readers) out->add_matched_readers(reader);
    return r;
  };
  auto reader = [](const std::string& name, std::vector<std::string> channels) {
    Report r = Join(name, 9);
    for (const std::string& ch : channels) {
      ChannelCount* in = r.add_channels();
      in->set_channel(ch);
      in->set_reads(true);
    }
    return r;
  };
  c->OnReport(writer("a", {"f1", "f2"}), kT0);
  c->OnReport(writer("b", {"f1"}), kT0);
  c->OnReport(writer("c", {"f2"}), kT0);
  c->OnReport(reader("f1", {"/a", "/b"}), kT0);
  c->OnReport(reader("f2", {"/a", "/c"}), kT0);
  ASSERT_EQ(c->Next(kT0).kind, Kind::kGrant);
  c->OnReport(Done("a", 1, 0, 10 * kMs, {{"/a", true, false, 0, 0}}), kT0);
  c->OnReport(Done("b", 1, 0, 10 * kMs, {{"/b", true, false, 0, 0}}), kT0);
  c->OnReport(Done("c", 1, 0, 50 * kMs, {{"/c", true, false, 0, 0}}), kT0);
  c->OnReport(Done("f1", 1, 0, -1, {{"/a", false, true, 0, 0}, {"/b", false, true, 0, 0}}), kT0);
  c->OnReport(Done("f2", 1, 0, -1, {{"/a", false, true, 0, 0}, {"/c", false, true, 0, 0}}), kT0);
  Coordinator::Decision d = c->Next(kT0);
  ASSERT_EQ(d.kind, Kind::kGrant);
  EXPECT_EQ(d.grant.instant_ns(), 10 * kMs);
  EXPECT_THAT(DueIn(d.grant), ::testing::ElementsAre("a", "b"));
  EXPECT_THAT(ThroughIn(d.grant), ::testing::ElementsAre(::testing::Pair("f1", 0u), ::testing::Pair("f2", 0u)));
  // Only a at 20 ms: nobody gathers.
  c->OnReport(Done("a", 2, 10 * kMs, 20 * kMs, {{"/a", true, false, 0, 0}}), kT0);
  c->OnReport(Done("b", 2, 10 * kMs, 100 * kMs, {{"/b", true, false, 0, 0}}), kT0);
  d = c->Next(kT0);
  ASSERT_EQ(d.kind, Kind::kGrant);
  EXPECT_EQ(d.grant.instant_ns(), 20 * kMs);
  EXPECT_TRUE(d.grant.deliver_through().empty());
}

TEST(CoordinatorTest, IdleUntilTheEndThenStop) {
  Coordinator c = Joined();
  ASSERT_EQ(c.Next(kT0).kind, Kind::kGrant);
  c.OnReport(Done("pollers", 1, 0, -1), kT0);
  c.OnReport(Done("fusion", 1, 0, -1), kT0);
  Coordinator::Decision d = c.Next(kT0);
  ASSERT_EQ(d.kind, Kind::kGrant);
  EXPECT_EQ(d.grant.instant_ns(), 100 * kMs);  // nothing due: straight to the end
  c.OnReport(Done("pollers", 2, 100 * kMs, 150 * kMs), kT0);
  c.OnReport(Done("fusion", 2, 100 * kMs, -1), kT0);
  d = c.Next(kT0);
  ASSERT_EQ(d.kind, Kind::kStop);
  EXPECT_TRUE(d.grant.stop());
  EXPECT_THAT(d.grant.why(), HasSubstr("the end (100ms) reached after 2 steps"));
  EXPECT_FALSE(d.grant.failed());
  EXPECT_FALSE(c.failure().has_value());
  EXPECT_TRUE(c.finished());
  EXPECT_EQ(c.Next(kT0).kind, Kind::kWait);
}

TEST(CoordinatorTest, AnEventPastTheEndIsCutToTheEnd) {
  Coordinator c = Joined();
  ASSERT_EQ(c.Next(kT0).kind, Kind::kGrant);
  c.OnReport(Done("pollers", 1, 0, 500 * kMs), kT0);
  c.OnReport(Done("fusion", 1, 0, 300 * kMs), kT0);
  EXPECT_EQ(c.Next(kT0).grant.instant_ns(), 100 * kMs);
}

TEST(CoordinatorTest, ARealClockProcessIsRefusedByName) {
  Coordinator c = Joined();
  c.OnReport(Join("pollers", 1, "steady"), kT0);
  Coordinator::Decision d = c.Next(kT0);
  ASSERT_EQ(d.kind, Kind::kStop);
  EXPECT_THAT(d.grant.why(), HasSubstr("process \"pollers\" (host h, pid 1) runs on the steady clock"));
  EXPECT_THAT(d.grant.why(), HasSubstr("--clock=simulated"));
  EXPECT_TRUE(d.grant.failed());
  ASSERT_TRUE(c.failure().has_value());
}

TEST(CoordinatorTest, AProcessNotOfTheRunIsRefusedByName) {
  Coordinator c = Joined();
  c.OnReport(Join("planner", 9), kT0);
  EXPECT_THAT(c.Next(kT0).grant.why(),
              HasSubstr("process \"planner\" (host h, pid 9) joined, but the run's processes are fusion, pollers"));
}

TEST(CoordinatorTest, ALostProcessEndsTheRunNamingItAndTheStep) {
  Coordinator c = Joined();
  ASSERT_EQ(c.Next(kT0).kind, Kind::kGrant);
  c.OnReport(Done("pollers", 1, 0, 10 * kMs), kT0);
  c.OnProcessLost("fusion", kT0);
  Coordinator::Decision d = c.Next(kT0);
  ASSERT_EQ(d.kind, Kind::kStop);
  EXPECT_THAT(d.grant.why(), HasSubstr("process \"fusion\" was lost"));
  EXPECT_THAT(d.grant.why(), HasSubstr("at step 1 (0)"));
}

TEST(CoordinatorTest, ARestartedProcessEndsTheRun) {
  Coordinator c = Joined();
  ASSERT_EQ(c.Next(kT0).kind, Kind::kGrant);
  c.OnReport(Join("fusion", 2), kT0);  // the same join again: nothing
  EXPECT_EQ(c.Next(kT0).kind, Kind::kWait);
  c.OnReport(Join("fusion", 3), kT0);
  EXPECT_THAT(c.Next(kT0).grant.why(), HasSubstr("\"fusion\" joined again as pid 3 (it was pid 2)"));
}

TEST(CoordinatorTest, AStepNotDoneWithinItsDeadlineNamesWhatItOwes) {
  Coordinator c = Joined();
  ASSERT_EQ(c.Next(kT0).kind, Kind::kGrant);
  c.OnReport(Done("pollers", 1, 0, 10 * kMs), kT0);
  Coordinator::Decision d = c.Next(kT0 + absl::Seconds(5));
  ASSERT_EQ(d.kind, Kind::kWait);
  EXPECT_EQ(d.until, kT0 + absl::Seconds(10));
  d = c.Next(kT0 + absl::Seconds(11));
  ASSERT_EQ(d.kind, Kind::kStop);
  EXPECT_THAT(d.grant.why(), HasSubstr("step not complete within 10s: step 1 (0): no DONE yet from fusion"));
}

TEST(CoordinatorTest, NotJoiningWithinTheDeadlineNamesWhoIsMissing) {
  absl::StatusOr<Coordinator> c = Coordinator::Create(TwoProcesses(), kT0);
  ASSERT_TRUE(c.ok());
  c->OnReport(Join("fusion", 2), kT0);
  Coordinator::Decision d = c->Next(kT0 + absl::Seconds(61));
  ASSERT_EQ(d.kind, Kind::kStop);
  EXPECT_THAT(d.grant.why(), HasSubstr("not every process joined within 1m: waiting for pollers to join"));
}

TEST(CoordinatorTest, ReportsOfAnotherRunOrStepAreIgnored) {
  Coordinator c = Joined();
  ASSERT_EQ(c.Next(kT0).kind, Kind::kGrant);
  c.OnReport(Done("pollers", 1, 0, 10 * kMs, {}, /*run=*/8), kT0);
  c.OnReport(Done("fusion", 2, 0, 10 * kMs), kT0);
  EXPECT_EQ(c.ignored(), 2u);
  EXPECT_EQ(c.Next(kT0).kind, Kind::kWait);
}

TEST(CoordinatorTest, ADoneAtAnotherInstantIsAnError) {
  Coordinator c = Joined();
  ASSERT_EQ(c.Next(kT0).kind, Kind::kGrant);
  c.OnReport(Done("pollers", 1, 5 * kMs, 10 * kMs), kT0);
  EXPECT_THAT(c.Next(kT0).grant.why(),
              HasSubstr("\"pollers\" reported step 1 done at 5ms, but the step granted 0"));
}

TEST(CoordinatorTest, ALeaveBeforeTheEndEndsTheRun) {
  Coordinator c = Joined();
  ASSERT_EQ(c.Next(kT0).kind, Kind::kGrant);
  Report leave;
  leave.set_kind(Report::LEAVE);
  leave.set_process("pollers");
  leave.set_run_id(7);
  c.OnReport(leave, kT0);
  EXPECT_THAT(c.Next(kT0).grant.why(), HasSubstr("\"pollers\" left at step 1 (0) before the end (100ms)"));
}

TEST(CoordinatorTest, BadOptionsAreNamed) {
  CoordinatorOptions o = TwoProcesses();
  o.processes = {};
  EXPECT_THAT(Coordinator::Create(o, kT0).status().message(), HasSubstr("option processes is empty"));
  o = TwoProcesses();
  o.processes = {"a", "a"};
  EXPECT_THAT(Coordinator::Create(o, kT0).status().message(), HasSubstr("names \"a\" twice"));
  o = TwoProcesses();
  o.end_ns = -1;
  EXPECT_THAT(Coordinator::Create(o, kT0).status().message(), HasSubstr("end_ns -1 is before start_ns 0"));
  o = TwoProcesses();
  o.run_id = 0;
  EXPECT_THAT(Coordinator::Create(o, kT0).status().message(), HasSubstr("run_id is 0"));
  o = TwoProcesses();
  o.step_deadline = absl::ZeroDuration();
  EXPECT_THAT(Coordinator::Create(o, kT0).status().message(), HasSubstr("step_deadline is 0"));
}

}  // namespace
}  // namespace lockstep
}  // namespace cyber
