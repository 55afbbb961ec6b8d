// Lockstep over DDS: a coordinator and two members, each member on its own
// DDS participant as if in its own process. Member "a" writes /tick every
// 10 simulated ms; member "b" reads it and delivers what arrived only when
// run to an instant, and only what is due by then (its send instant, which
// the message carries). What is asserted is the protocol's promise: every
// message is delivered at the instant it was sent (time never moves while
// one is in flight), every instant is granted once, in order, and a member
// that goes away ends the run with its name.

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "cyber/common/mutex.h"
#include "cyber/lockstep/coordinator_driver.h"
#include "cyber/lockstep/lockstep_process.h"
#include "cyber/lockstep/member.h"
#include "cyber/transport/dds/dds_transport.h"
#include "cyber/transport/dds/testing/dds_test_process.h"
#include "cyber/transport/dds/testing/test_messages.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cyber {
namespace lockstep {
namespace {

using ::testing::HasSubstr;
constexpr int64_t kMs = 1000000;

std::shared_ptr<dds::DdsTransport> Participant(uint32_t domain, const std::string& name) {
  dds::DdsTransportOptions o;
  o.domain_id = domain;
  o.process_name = name;
  o.lease = absl::Seconds(2);
  return std::make_shared<dds::DdsTransport>(o);
}

RemoteEndpoint Tick(const std::string& node) {
  RemoteEndpoint e;
  e.channel = "/tick";
  e.type_name = dds_test::Ping::descriptor()->full_name();
  e.qos.reliability = ChannelQos::Reliability::kReliable;
  e.qos.history = ChannelQos::History::kKeepAll;
  e.qos.depth = 1000;
  e.node = node;
  return e;
}

// "a": a 10 ms periodic writer on simulated time.
class Writer {
 public:
  explicit Writer(std::shared_ptr<RemoteTransport> t) : transport_(std::move(t)) {
    out_ = *transport_->Publisher(Tick("a"));
  }
  MemberHooks Hooks() {
    MemberHooks h;
    h.run_until = [this](int64_t t, uint64_t /*through*/) {
      while (next_ <= t) {
        dds_test::Ping p;
        p.set_seq(static_cast<uint64_t>(next_));  // its send instant
        EXPECT_TRUE(out_->PublishMessage(p).ok());
        ++sent_;
        next_ += 10 * kMs;
      }
    };
    h.next_event_ns = [this] { return next_; };
    h.counts = [this](uint64_t*) {
      ChannelCount c;
      c.set_channel("/tick");
      c.set_writes(true);
      c.set_sent(sent_);
      if (out_->Wanted()) c.add_matched_readers("b");  // the only other process
      return std::vector<ChannelCount>{c};
    };
    h.on_stop = [](const std::string&) {};
    return h;
  }
  // Matched to the reader (lockstep members join once their endpoints
  // match; here the test waits for it).
  bool Wanted() const { return out_->Wanted(); }

 private:
  std::shared_ptr<RemoteTransport> transport_;
  std::shared_ptr<RemotePublisher> out_;
  int64_t next_ = 0;
  uint64_t sent_ = 0;
};

// "b": delivers what arrived when run to an instant, noting the instant.
class Reader {
 public:
  explicit Reader(std::shared_ptr<RemoteTransport> t) : transport_(std::move(t)) {}
  void Open(LockstepMember** member) {
    member_ = member;
    in_ = *transport_->Subscribe(Tick("b"), [this](const RemoteSample& s) {
      dds_test::Ping p;
      if (!p.ParseFromArray(s.payload.data(), static_cast<int>(s.payload.size()))) return false;
      {
        MutexLock lock(&mu_);
        arrived_.push_back(static_cast<int64_t>(p.seq()));
      }
      if (*member_ != nullptr) (*member_)->Poke();
      return true;
    });
  }
  MemberHooks Hooks() {
    MemberHooks h;
    // A message is due at its send instant: one that arrives before this
    // process got the grant for that instant waits for it (the writer may
    // be granted, and send, first).
    h.run_until = [this](int64_t t, uint64_t /*through*/) {
      MutexLock lock(&mu_);
      std::vector<int64_t> later;
      for (int64_t sent_at : arrived_) {
        if (sent_at <= t) {
          delivered_.push_back({sent_at, t});
        } else {
          later.push_back(sent_at);
        }
      }
      arrived_.swap(later);
    };
    // Its only events are the messages that arrived and wait for their
    // instant.
    h.next_event_ns = [this] {
      MutexLock lock(&mu_);
      int64_t earliest = -1;
      for (int64_t sent_at : arrived_) {
        if (earliest < 0 || sent_at < earliest) earliest = sent_at;
      }
      return earliest;
    };
    h.counts = [this](uint64_t*) {
      MutexLock lock(&mu_);
      ChannelCount c;
      c.set_channel("/tick");
      c.set_reads(true);
      c.set_received(delivered_.size());
      return std::vector<ChannelCount>{c};
    };
    h.on_stop = [](const std::string&) {};
    return h;
  }
  // (sent at, delivered at) per message.
  std::vector<std::pair<int64_t, int64_t>> Delivered() {
    MutexLock lock(&mu_);
    return delivered_;
  }
  void Close() { in_.reset(); }

 private:
  std::shared_ptr<RemoteTransport> transport_;
  std::unique_ptr<RemoteSubscription> in_;
  LockstepMember** member_ = nullptr;
  Mutex mu_;
  std::vector<int64_t> arrived_ ABSL_GUARDED_BY(mu_);
  std::vector<std::pair<int64_t, int64_t>> delivered_ ABSL_GUARDED_BY(mu_);
};

class LockstepDdsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    domain_ = dds_test::RandomDomain();
    coordinator_transport_ = Participant(domain_, "lockstep_coordinator");
    a_transport_ = Participant(domain_, "a");
    b_transport_ = Participant(domain_, "b");
    writer_ = std::make_unique<Writer>(a_transport_);
    reader_ = std::make_unique<Reader>(b_transport_);
    reader_->Open(&b_raw_);
    ASSERT_TRUE(dds_test::Eventually([&] { return writer_->Wanted(); }));
  }
  void TearDown() override {
    reader_->Close();
    b_.reset();
    a_.reset();
    for (auto* t : {&coordinator_transport_, &a_transport_, &b_transport_}) {
      if (*t) (*t)->Shutdown();
    }
  }

  std::unique_ptr<CoordinatorDriver> Coordinator(int64_t end_ns, absl::Duration step_deadline = absl::Seconds(30)) {
    CoordinatorDriverOptions o;
    o.coordinator.processes = {"a", "b"};
    o.coordinator.start_ns = 0;
    o.coordinator.end_ns = end_ns;
    o.coordinator.run_id = 42;
    o.coordinator.step_deadline = step_deadline;
    absl::StatusOr<std::unique_ptr<CoordinatorDriver>> d = CoordinatorDriver::Start(coordinator_transport_, o);
    EXPECT_TRUE(d.ok()) << d.status();
    return d.ok() ? *std::move(d) : nullptr;
  }

  void StartMembers() {
    MemberOptions ao;
    ao.process = "a";
    absl::StatusOr<std::unique_ptr<LockstepMember>> a = LockstepMember::Start(a_transport_, ao, writer_->Hooks());
    ASSERT_TRUE(a.ok()) << a.status();
    a_ = *std::move(a);
    MemberOptions bo;
    bo.process = "b";
    absl::StatusOr<std::unique_ptr<LockstepMember>> b = LockstepMember::Start(b_transport_, bo, reader_->Hooks());
    ASSERT_TRUE(b.ok()) << b.status();
    b_ = *std::move(b);
    b_raw_ = b_.get();
  }

  uint32_t domain_ = 0;
  std::shared_ptr<dds::DdsTransport> coordinator_transport_, a_transport_, b_transport_;
  std::unique_ptr<Writer> writer_;
  std::unique_ptr<Reader> reader_;
  std::unique_ptr<LockstepMember> a_, b_;
  LockstepMember* b_raw_ = nullptr;
};

TEST_F(LockstepDdsTest, EveryMessageIsDeliveredAtTheInstantItWasSent) {
  std::unique_ptr<CoordinatorDriver> coordinator = Coordinator(1000 * kMs);
  ASSERT_NE(coordinator, nullptr);
  StartMembers();
  const RunOutcome outcome = coordinator->Run();
  EXPECT_TRUE(outcome.ok) << outcome.why;
  EXPECT_THAT(outcome.why, HasSubstr("the end (1s) reached after 101 steps"));
  EXPECT_EQ(outcome.reached_ns, 1000 * kMs);
  EXPECT_EQ(a_->WaitForStop(), outcome.why);
  EXPECT_EQ(b_->WaitForStop(), outcome.why);
  EXPECT_FALSE(a_->failed());
  const std::vector<std::pair<int64_t, int64_t>> delivered = reader_->Delivered();
  ASSERT_EQ(delivered.size(), 101u);  // 0, 10, ..., 1000 ms
  for (size_t i = 0; i < delivered.size(); ++i) {
    EXPECT_EQ(delivered[i].first, static_cast<int64_t>(i) * 10 * kMs);
    EXPECT_EQ(delivered[i].second, delivered[i].first) << "message " << i << " delivered at another instant";
  }
  std::printf("lockstep: 101 steps of two members over DDS in %s of real time\n",
              absl::FormatDuration(outcome.wall).c_str());
}

// Paused, the coordinator grants nothing, however long (longer than the
// step deadline: a held grant's deadline does not run); each Step() lets
// one grant out; Resume() runs to the end as if never paused.
TEST_F(LockstepDdsTest, PausedNothingIsGrantedButOneStepAtATimeThenResumeRunsToTheEnd) {
  std::unique_ptr<CoordinatorDriver> coordinator = Coordinator(1000 * kMs, absl::Seconds(1));
  ASSERT_NE(coordinator, nullptr);
  coordinator->Pause();
  StartMembers();
  RunOutcome outcome;
  std::thread run([&] { outcome = coordinator->Run(); });
  absl::SleepFor(absl::Milliseconds(1500));  // past the step deadline
  EXPECT_EQ(coordinator->step(), 0u) << "granted while paused";
  EXPECT_EQ(a_->step(), 0u);
  for (uint64_t k = 1; k <= 3; ++k) {
    coordinator->Step();
    EXPECT_TRUE(dds_test::Eventually([&] { return a_->step() == k && b_raw_->step() == k; }))
        << "step " << k << " not granted";
  }
  // Past the step deadline again: a fourth step, if one went out wrongly,
  // would be granted and answered (about 100 µs) long before this ends.
  absl::SleepFor(absl::Milliseconds(1500));
  EXPECT_EQ(coordinator->step(), 3u) << "a step let more than one grant out";
  EXPECT_EQ(coordinator->instant_ns(), 20 * kMs);
  EXPECT_TRUE(coordinator->paused());
  coordinator->Resume();
  run.join();
  EXPECT_TRUE(outcome.ok) << outcome.why;
  EXPECT_THAT(outcome.why, HasSubstr("the end (1s) reached after 101 steps"));
  EXPECT_EQ(reader_->Delivered().size(), 101u);
}

TEST_F(LockstepDdsTest, AMemberThatGoesAwayEndsTheRunWithItsName) {
  std::unique_ptr<CoordinatorDriver> coordinator = Coordinator(1000000 * kMs);
  ASSERT_NE(coordinator, nullptr);
  StartMembers();
  std::thread killer([&] {
    // Once the run is under way, "b" goes (its participant too).
    EXPECT_TRUE(dds_test::Eventually([&] { return b_raw_->step() >= 10; })) << "the run never got going";
    b_raw_ = nullptr;
    reader_->Close();
    b_.reset();
    b_transport_->Shutdown();
  });
  const RunOutcome outcome = coordinator->Run();
  killer.join();
  EXPECT_FALSE(outcome.ok);
  EXPECT_THAT(outcome.why, HasSubstr("\"b\""));
  EXPECT_EQ(a_->WaitForStop(), outcome.why);
}

TEST_F(LockstepDdsTest, ACoordinatorThatGoesAwayEndsTheRunForTheMembers) {
  std::unique_ptr<CoordinatorDriver> coordinator = Coordinator(1000000 * kMs, absl::Seconds(2));
  ASSERT_NE(coordinator, nullptr);
  StartMembers();
  std::thread run([&] { coordinator->Run(); });
  EXPECT_TRUE(dds_test::Eventually([&] { return a_->step() >= 10; })) << "the run never got going";
  coordinator_transport_->Shutdown();  // its participant leaves the domain
  EXPECT_THAT(a_->WaitForStop(), HasSubstr("the lockstep coordinator (lockstep_coordinator"));
  EXPECT_TRUE(a_->failed());
  EXPECT_THAT(b_->WaitForStop(), HasSubstr("was lost before the end"));
  EXPECT_TRUE(b_->failed());
  run.join();
}

TEST_F(LockstepDdsTest, AMemberThatNeverAnswersIsNamedAtTheDeadline) {
  std::unique_ptr<CoordinatorDriver> coordinator = Coordinator(1000 * kMs, absl::Seconds(1));
  ASSERT_NE(coordinator, nullptr);
  MemberOptions ao;
  ao.process = "a";
  absl::StatusOr<std::unique_ptr<LockstepMember>> a = LockstepMember::Start(a_transport_, ao, writer_->Hooks());
  ASSERT_TRUE(a.ok());
  a_ = *std::move(a);
  // "b" joins, then hangs in its first step.
  MemberHooks hang = reader_->Hooks();
  Mutex gate_mu;
  CondVar gate;
  bool release = false;
  hang.run_until = [&](int64_t, uint64_t) {
    MutexLock lock(&gate_mu);
    while (!release) gate.Wait(&gate_mu);
  };
  MemberOptions bo;
  bo.process = "b";
  absl::StatusOr<std::unique_ptr<LockstepMember>> b = LockstepMember::Start(b_transport_, bo, hang);
  ASSERT_TRUE(b.ok());
  b_ = *std::move(b);
  const RunOutcome outcome = coordinator->Run();
  EXPECT_FALSE(outcome.ok);
  EXPECT_THAT(outcome.why, HasSubstr("step not complete within 1s: step 1 (0): no DONE yet from b"));
  {
    MutexLock lock(&gate_mu);
    release = true;
    gate.SignalAll();
  }
  b_.reset();  // before `hang`'s captures go
}

// The same two roles as LockstepProcesses: "a"'s timer writes through the
// lockstep transport (stamped with its instant), "b" gets each message
// handed over at that instant, in order, with the instant it was sent.
TEST(LockstepProcessTest, TwoProcessesOnOneSimulatedTime) {
  const uint32_t domain = dds_test::RandomDomain();
  auto coordinator_transport = Participant(domain, "lockstep_coordinator");
  auto a_real = Participant(domain, "a");
  auto b_real = Participant(domain, "b");
  int64_t a_now = 0, b_now = 0;  // each process's simulated clock
  LockstepProcess a(a_real, [&a_now] { return a_now; });
  LockstepProcess b(b_real, [&b_now] { return b_now; });
  std::shared_ptr<RemotePublisher> out = *a.transport()->Publisher(Tick("a"));
  Mutex mu;
  std::vector<std::pair<int64_t, int64_t>> got;  // (stamped, delivered at)
  std::unique_ptr<RemoteSubscription> in = *b.transport()->Subscribe(Tick("b"), [&](const RemoteSample& s) {
    MutexLock lock(&mu);
    got.push_back({s.origin.source_time_ns, b_now});
    return true;
  });
  ASSERT_TRUE(dds_test::Eventually([&] { return out->Wanted(); }));

  CoordinatorDriverOptions o;
  o.coordinator.processes = {"a", "b"};
  o.coordinator.end_ns = 500 * kMs;
  o.coordinator.run_id = 3;
  auto driver = CoordinatorDriver::Start(coordinator_transport, o);
  ASSERT_TRUE(driver.ok()) << driver.status();

  int64_t next_tick = 0;
  SimulationHooks ah;
  ah.run_until = [&](int64_t t) {
    a_now = t;
    while (next_tick <= t) {
      dds_test::Ping p;
      p.set_seq(static_cast<uint64_t>(next_tick));
      EXPECT_TRUE(out->PublishMessage(p).ok());
      next_tick += 25 * kMs;
    }
  };
  ah.next_event_ns = [&] { return next_tick; };
  SimulationHooks bh;
  bh.run_until = [&](int64_t t) { b_now = t; };
  bh.next_event_ns = [] { return int64_t{-1}; };
  MemberOptions ao, bo;
  ao.process = "a";
  bo.process = "b";
  ASSERT_TRUE(a.Join(ao, ah).ok());
  ASSERT_TRUE(b.Join(bo, bh).ok());
  const RunOutcome outcome = (*driver)->Run();
  EXPECT_TRUE(outcome.ok) << outcome.why;
  EXPECT_EQ(a.WaitForStop(), outcome.why);
  EXPECT_EQ(b.WaitForStop(), outcome.why);
  in.reset();  // no handler call after this (not under `mu`: the handler takes it)
  {
    // Released before the shut-downs: the handler took `mu` on a DDS
    // thread inside the transport's locks (b's steps run there).
    MutexLock lock(&mu);
    EXPECT_EQ(got.size(), 21u);  // 0, 25, ..., 500 ms
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].first, static_cast<int64_t>(i) * 25 * kMs);
      EXPECT_EQ(got[i].second, got[i].first);
    }
  }
  for (auto* t : {&coordinator_transport, &a_real, &b_real}) (*t)->Shutdown();
}

RemoteEndpoint Channel(const std::string& channel, const std::string& node) {
  RemoteEndpoint e = Tick(node);
  e.channel = channel;
  return e;
}

// Two writers, one reader of both: "a" writes /tick and "c" writes /tock,
// both every 10 simulated ms, each after a random pause of up to 300 µs
// of real time, so their messages of one instant reach "b" in either
// order, now one first, now the other. "b" gathers: it hands them over at
// a second step at the instant, all at once, in writer order ("a" before
// "c"), in every run. (Handed over as they arrive, the order here would
// follow the pauses.)
TEST(LockstepProcessTest, AReaderOfTwoProcessesGetsTheirMessagesOfOneInstantInWriterOrder) {
  const uint32_t domain = dds_test::RandomDomain();
  auto coordinator_transport = Participant(domain, "lockstep_coordinator");
  auto a_real = Participant(domain, "a");
  auto b_real = Participant(domain, "b");
  auto c_real = Participant(domain, "c");
  int64_t a_now = 0, b_now = 0, c_now = 0;
  LockstepProcess a(a_real, [&a_now] { return a_now; });
  LockstepProcess b(b_real, [&b_now] { return b_now; });
  LockstepProcess c(c_real, [&c_now] { return c_now; });
  std::shared_ptr<RemotePublisher> a_out = *a.transport()->Publisher(Channel("/tick", "a"));
  std::shared_ptr<RemotePublisher> c_out = *c.transport()->Publisher(Channel("/tock", "c"));
  Mutex mu;
  std::vector<std::string> got;  // "<instant ms> <channel> at <delivered ms>", in delivery order
  auto record = [&](const std::string& channel) {
    return [&, channel](const RemoteSample& s) {
      MutexLock lock(&mu);
      got.push_back(absl::StrCat(s.origin.source_time_ns / kMs, " ", channel, " at ", b_now / kMs));
      return true;
    };
  };
  std::unique_ptr<RemoteSubscription> tick = *b.transport()->Subscribe(Channel("/tick", "b"), record("/tick"));
  std::unique_ptr<RemoteSubscription> tock = *b.transport()->Subscribe(Channel("/tock", "b"), record("/tock"));
  ASSERT_TRUE(dds_test::Eventually([&] { return a_out->Wanted() && c_out->Wanted(); }));

  constexpr int64_t kEnd = 300 * kMs;
  CoordinatorDriverOptions o;
  o.coordinator.processes = {"a", "b", "c"};
  o.coordinator.end_ns = kEnd;
  o.coordinator.run_id = 5;
  auto driver = CoordinatorDriver::Start(coordinator_transport, o);
  ASSERT_TRUE(driver.ok()) << driver.status();

  // A writer's hooks: one message per 10 ms instant, after a random pause.
  struct Ticker {
    std::shared_ptr<RemotePublisher> out;
    int64_t* now;
    int64_t next = 0;
    std::mt19937 random;
  };
  Ticker at{a_out, &a_now, 0, std::mt19937(1)}, ct{c_out, &c_now, 0, std::mt19937(2)};
  auto hooks = [](Ticker* t) {
    SimulationHooks h;
    h.run_until = [t](int64_t instant) {
      *t->now = instant;
      while (t->next <= instant) {
        absl::SleepFor(absl::Microseconds(std::uniform_int_distribution<int>(0, 300)(t->random)));
        dds_test::Ping p;
        p.set_seq(static_cast<uint64_t>(t->next));
        EXPECT_TRUE(t->out->PublishMessage(p).ok());
        t->next += 10 * kMs;
      }
    };
    h.next_event_ns = [t] { return t->next; };
    return h;
  };
  SimulationHooks bh;
  bh.run_until = [&](int64_t t) { b_now = t; };
  bh.next_event_ns = [] { return int64_t{-1}; };
  MemberOptions ao, bo, co;
  ao.process = "a";
  bo.process = "b";
  co.process = "c";
  ASSERT_TRUE(a.Join(ao, hooks(&at)).ok());
  ASSERT_TRUE(b.Join(bo, bh).ok());
  ASSERT_TRUE(c.Join(co, hooks(&ct)).ok());
  const RunOutcome outcome = (*driver)->Run();
  EXPECT_TRUE(outcome.ok) << outcome.why;
  // Each instant: one step for the writers, one to hand over (at the end,
  // every process is due at both).
  EXPECT_THAT(outcome.why, HasSubstr("after 62 steps"));
  EXPECT_EQ(a.WaitForStop(), outcome.why);
  EXPECT_EQ(b.WaitForStop(), outcome.why);
  EXPECT_EQ(c.WaitForStop(), outcome.why);
  tick.reset();
  tock.reset();
  std::vector<std::string> expected;
  for (int64_t ms = 0; ms <= kEnd / kMs; ms += 10) {
    expected.push_back(absl::StrCat(ms, " /tick at ", ms));
    expected.push_back(absl::StrCat(ms, " /tock at ", ms));
  }
  {
    MutexLock lock(&mu);
    EXPECT_EQ(got, expected);
  }
  for (auto* t : {&coordinator_transport, &a_real, &b_real, &c_real}) (*t)->Shutdown();
}

}  // namespace
}  // namespace lockstep
}  // namespace cyber
