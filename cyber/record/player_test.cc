// Player against fake publishers: the recorded pace (never early, at any
// rate), the start offset with transient-local values before it first,
// the original send stamps, pause, step and resume, loop and stop, and
// bad options named.
#include "cyber/record/player.h"

#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cyber/common/mutex.h"
#include "cyber/common/steady_time.h"
#include "cyber/record/recording_writer.h"
#include "google/protobuf/descriptor.pb.h"
#include "google/protobuf/timestamp.pb.h"
#include "gtest/gtest.h"

namespace cyber {
namespace record {
namespace {

constexpr uint64_t kT0 = 1'700'000'000'000'000'000ull;
constexpr uint64_t kMs = 1'000'000;

struct Sent {
  std::string channel;
  int64_t value;
  absl::Time at;           // steady
  absl::Time source_time;  // the stamp readers see
};

class Sink {
 public:
  void Add(Sent s) {
    MutexLock lock(&mu_);
    sent_.push_back(std::move(s));
  }
  std::vector<Sent> sent() const {
    MutexLock lock(&mu_);
    return sent_;
  }
  size_t size() const { return sent().size(); }

 private:
  mutable Mutex mu_;
  std::vector<Sent> sent_ ABSL_GUARDED_BY(mu_);
};

class FakePublisher : public RemotePublisher {
 public:
  FakePublisher(std::string channel, Sink* sink, bool fail)
      : channel_(std::move(channel)), sink_(sink), fail_(fail) {}
  bool Wanted() const override { return true; }
  absl::Status Publish(absl::string_view payload, Correlation) override {
    return PublishAt(payload, absl::Now(), {});
  }
  absl::Status PublishMessage(const google::protobuf::MessageLite&, Correlation) override {
    return absl::UnimplementedError("not used by the player");
  }
  absl::Status PublishAt(absl::string_view payload, absl::Time source_time, Correlation) override {
    if (fail_) return absl::UnavailableError("the transport shut down");
    google::protobuf::Timestamp t;
    EXPECT_TRUE(t.ParseFromArray(payload.data(), payload.size()));
    sink_->Add({channel_, t.seconds(), SteadyNow(), source_time});
    return absl::OkStatus();
  }

 private:
  std::string channel_;
  Sink* sink_;
  bool fail_;
};

PublisherFactory Fakes(Sink* sink, bool fail = false) {
  return [sink, fail](const std::string& channel, const std::string&, const ChannelQos&)
             -> absl::StatusOr<std::shared_ptr<RemotePublisher>> {
    return std::make_shared<FakePublisher>(channel, sink, fail);
  };
}

ChannelInfo Info(const std::string& name, bool transient) {
  google::protobuf::FileDescriptorSet set;
  google::protobuf::Timestamp::descriptor()->file()->CopyTo(set.add_file());
  return ChannelInfo{name, "google.protobuf.Timestamp", set.SerializeAsString(),
                     {{"transient_local", transient ? "true" : "false"}}};
}

std::string Value(int64_t v) {
  google::protobuf::Timestamp t;
  t.set_seconds(v);
  return t.SerializeAsString();
}

// /map (transient local): 1 at 0 ms, 2 at 5 ms. /imu: 10..19 at 10, 20,
// ..., 100 ms, each sent 1 ms before it was received.
Recording Sample() {
  std::string path = absl::StrCat(std::getenv("TEST_TMPDIR"), "/player.mcap");
  RecordingWriterOptions o;
  o.path = path;
  auto w = RecordingWriter::Open(o);
  EXPECT_TRUE(w.ok());
  ChannelInfo map = Info("/map", true), imu = Info("/imu", false);
  EXPECT_TRUE((*w)->Write(map, {"m@h:1", "m", 1}, kT0, kT0, Value(1)).ok());
  EXPECT_TRUE((*w)->Write(map, {"m@h:1", "m", 2}, kT0 + 5 * kMs, kT0 + 5 * kMs, Value(2)).ok());
  for (int i = 0; i < 10; ++i) {
    uint64_t at = kT0 + (10 + 10 * i) * kMs;
    EXPECT_TRUE((*w)->Write(imu, {"i@h:2", "i", uint64_t(i + 1)}, at, at - kMs, Value(10 + i)).ok());
  }
  EXPECT_TRUE((*w)->Close().ok());
  absl::StatusOr<Recording> r = Recording::Load(path);
  EXPECT_TRUE(r.ok()) << r.status();
  return *std::move(r);
}

// Waits (bounded) until `sink` holds `n` messages.
bool WaitFor(const Sink& sink, size_t n) {
  absl::Time end = SteadyNow() + absl::Seconds(30);
  while (sink.size() < n && SteadyNow() < end) absl::SleepFor(absl::Milliseconds(1));
  return sink.size() >= n;
}

// Until the pause has reached the playing thread, which then waits to send
// its next message; false if the player finished first (this thread was
// not scheduled for the rest of the recording) or 30 s passed.
bool WaitHolding(const Player& p) {
  absl::Time end = SteadyNow() + absl::Seconds(30);
  while (!p.Progress().holding && !p.Progress().done && SteadyNow() < end) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  return p.Progress().holding;
}

TEST(Player, EveryMessageAtItsRecordedOffsetNeverEarlyWithItsOriginalStamp) {
  Recording r = Sample();
  for (double rate : {1.0, 4.0}) {
    Sink sink;
    PlayerOptions o;
    o.rate = rate;
    auto p = Player::Create(Fakes(&sink), &r, o);
    ASSERT_TRUE(p.ok()) << p.status();
    absl::Time start = SteadyNow();
    ASSERT_TRUE((*p)->Run().ok());
    std::vector<Sent> sent = sink.sent();
    ASSERT_EQ(sent.size(), 12u);
    for (size_t i = 0; i < sent.size(); ++i) {
      const RecordedMessage& m = r.messages()[i];
      EXPECT_EQ(sent[i].channel, m.channel) << i;
      EXPECT_EQ(sent[i].source_time, absl::FromUnixNanos(m.publish_time)) << i;
      absl::Duration due = absl::Nanoseconds(static_cast<double>(m.log_time - kT0) / rate);
      EXPECT_GE(sent[i].at - start, due) << "message " << i << " at rate " << rate << " early";
    }
    EXPECT_TRUE((*p)->Progress().done);
    EXPECT_EQ((*p)->Progress().published, 12u);
  }
}

TEST(Player, AStartOffsetSendsTheTransientLocalValueBeforeItFirst) {
  Recording r = Sample();
  Sink sink;
  PlayerOptions o;
  o.start_offset = absl::Milliseconds(50);
  auto p = Player::Create(Fakes(&sink), &r, o);
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE((*p)->Run().ok());
  std::vector<Sent> sent = sink.sent();
  ASSERT_EQ(sent.size(), 1u + 6u);  // /map = 2, then /imu at 50..100 ms
  EXPECT_EQ(sent[0].channel, "/map");
  EXPECT_EQ(sent[0].value, 2);
  EXPECT_EQ(sent[1].channel, "/imu");
  EXPECT_EQ(sent[1].value, 14);
  EXPECT_EQ(sent.back().value, 19);

  // Begin and end as instants, and a channel filter.
  Sink only;
  PlayerOptions f;
  f.begin_ns = kT0 + 20 * kMs;
  f.end_ns = kT0 + 40 * kMs;
  f.channels = {"/imu"};
  auto q = Player::Create(Fakes(&only), &r, f);
  ASSERT_TRUE(q.ok());
  ASSERT_TRUE((*q)->Run().ok());
  ASSERT_EQ(only.size(), 3u);
  EXPECT_EQ(only.sent()[0].value, 11);
  EXPECT_EQ(only.sent()[2].value, 13);
}

TEST(Player, PausedItSendsNothingButOneMessagePerStepUntilResumed) {
  Recording r = Sample();
  Sink sink;
  auto p = Player::Create(Fakes(&sink), &r, {});
  ASSERT_TRUE(p.ok());
  (*p)->Pause();
  absl::Status result;
  std::thread run([&] { result = (*p)->Run(); });
  absl::SleepFor(absl::Milliseconds(150));  // past the whole recording
  EXPECT_EQ(sink.size(), 0u);
  EXPECT_TRUE((*p)->Progress().paused);
  (*p)->Step();
  ASSERT_TRUE(WaitFor(sink, 1));
  (*p)->Step();
  ASSERT_TRUE(WaitFor(sink, 2));
  ASSERT_TRUE(WaitHolding(**p));
  EXPECT_EQ(sink.size(), 2u) << "a step sends one message";
  const absl::Time resumed = SteadyNow();
  (*p)->Resume();
  run.join();
  ASSERT_TRUE(result.ok()) << result;
  std::vector<Sent> sent = sink.sent();
  ASSERT_EQ(sent.size(), 12u);
  // The resume sends message 2 at once; the rest keep their recorded
  // offsets from the resume, never early. (Not from message 2's own send:
  // the player takes its new schedule when it wakes, and the fake stamps
  // message 2 a little later, when it is published.)
  for (size_t i = 3; i < sent.size(); ++i) {
    absl::Duration recorded = absl::Nanoseconds(r.messages()[i].log_time -
                                                r.messages()[2].log_time);
    EXPECT_GE(sent[i].at - resumed, recorded) << i;
  }
}

// A pause shorter than the gap to the next message moves that message by
// the pause: it never goes early.
TEST(Player, AShortPauseMovesTheScheduleItNeverSendsEarly) {
  Recording r = Sample();
  Sink sink;
  auto p = Player::Create(Fakes(&sink), &r, {});
  ASSERT_TRUE(p.ok());
  absl::Status result;
  absl::Time start = SteadyNow();
  std::thread run([&] { result = (*p)->Run(); });
  ASSERT_TRUE(WaitFor(sink, 3));  // /map 1, /map 2, /imu 10 (at 10 ms)
  (*p)->Pause();
  // On a loaded machine this thread may not run again before the player
  // has sent the whole recording (100 ms): then no pause was held, and
  // only the never-early check below applies.
  const bool held = WaitHolding(**p);
  ASSERT_TRUE(held || (*p)->Progress().done) << "the pause never reached the player";
  const size_t before = held ? sink.size() : 12;  // 3, or more on a loaded machine
  absl::SleepFor(absl::Milliseconds(3));
  const absl::Time resumed = SteadyNow();
  (*p)->Resume();
  run.join();
  ASSERT_TRUE(result.ok());
  std::vector<Sent> sent = sink.sent();
  ASSERT_EQ(sent.size(), 12u);
  // Every message at least its recorded offset from the start; and those
  // held by the pause at least their recorded offset from the first held
  // one, counted from the resume: the pause moved the schedule, and
  // nothing went early after it.
  for (size_t i = 0; i < sent.size(); ++i) {
    EXPECT_GE(sent[i].at - start, absl::Nanoseconds(r.messages()[i].log_time - kT0)) << i;
  }
  for (size_t i = before; i < sent.size(); ++i) {
    EXPECT_GE(sent[i].at - resumed,
              absl::Nanoseconds(r.messages()[i].log_time - r.messages()[before].log_time))
        << "message " << i << " early after the pause";
  }
}

TEST(Player, StopEndsALoopAndNothingIsSentAfterRunReturns) {
  Recording r = Sample();
  Sink sink;
  PlayerOptions o;
  o.loop = true;
  o.rate = 10;
  auto p = Player::Create(Fakes(&sink), &r, o);
  ASSERT_TRUE(p.ok());
  absl::Status result;
  std::thread run([&] { result = (*p)->Run(); });
  ASSERT_TRUE(WaitFor(sink, 30));  // into the third pass
  (*p)->Stop();
  run.join();
  EXPECT_TRUE(result.ok());
  size_t n = sink.size();
  EXPECT_GE((*p)->Progress().pass, 3);
  absl::SleepFor(absl::Milliseconds(30));
  EXPECT_EQ(sink.size(), n);
}

TEST(Player, BadOptionsAndPublishErrorsAreNamed) {
  Recording r = Sample();
  Sink sink;
  PlayerOptions rate;
  rate.rate = 0;
  EXPECT_NE(Player::Create(Fakes(&sink), &r, rate).status().message().find("rate (-r) 0"),
            std::string::npos);
  PlayerOptions channel;
  channel.channels = {"/lidar"};
  absl::Status s = Player::Create(Fakes(&sink), &r, channel).status();
  EXPECT_NE(s.message().find("\"/lidar\" is not in the recording; it has: /map, /imu"),
            std::string::npos)
      << s;
  PlayerOptions order;
  order.begin_ns = kT0 + 2;
  order.end_ns = kT0 + 1;
  EXPECT_EQ(Player::Create(Fakes(&sink), &r, order).status().code(),
            absl::StatusCode::kInvalidArgument);
  PlayerOptions none;
  none.begin_ns = kT0 + 500 * kMs;
  none.channels = {"/imu"};
  auto empty = Player::Create(Fakes(&sink), &r, none);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ((*empty)->Run().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE((*empty)->Progress().done) << "the terminal loop waits for done";

  auto failing = Player::Create(Fakes(&sink, /*fail=*/true), &r, {});
  ASSERT_TRUE(failing.ok());
  absl::Status f = (*failing)->Run();
  EXPECT_EQ(f.code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(f.message().find("\"/map\" message at log_time"), std::string::npos) << f;
}

}  // namespace
}  // namespace record
}  // namespace cyber
