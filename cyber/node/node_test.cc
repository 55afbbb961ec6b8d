#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "cyber/transport/channel_bus.h"
#include "cyber/node/node.h"
#include "cyber/runtime/process_runtime.h"
#include "cyber/node/reader.h"
#include "cyber/node/writer.h"
#include "cyber/common/test_waits.h"
#include "gtest/gtest.h"
#include "scheduler/config/scheduler_config.h"
#include "scheduler/croutine.h"
#include "scheduler/scheduler.h"

namespace cyber {
namespace transport_test {

struct Imu {
  int writer = 0;
  int seq = 0;
};
struct Pose {
  double x = 0;
};

using scheduler::CRoutine;
using test::Eventually;
using test::Gate;
using scheduler::Scheduler;

Scheduler::Options Processors(int n) {
  Scheduler::Options o;
  o.config = scheduler::DefaultSchedulerConfig(n);
  return o;
}

// What a reader's callback saw, safe to read from the test thread.
class Recorder {
 public:
  void Add(int seq, bool in_routine) {
    std::lock_guard<std::mutex> lock(mu_);
    seqs_.push_back(seq);
    if (!in_routine) ++outside_routine_;
    cv_.notify_all();
  }
  // Waits until `n` messages were recorded.
  bool AwaitCount(size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(30),
                        [&] { return seqs_.size() >= n; });
  }
  std::vector<int> seqs() {
    std::lock_guard<std::mutex> lock(mu_);
    return seqs_;
  }
  int outside_routine() {
    std::lock_guard<std::mutex> lock(mu_);
    return outside_routine_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<int> seqs_;
  int outside_routine_ = 0;
};

std::vector<int> Range(int from, int to) {
  std::vector<int> v;
  for (int i = from; i < to; ++i) v.push_back(i);
  return v;
}

TEST(TransportTest, TwoReadersGetEveryMessageInOrder) {
  Scheduler sched(Processors(2));
  ChannelBus bus;
  Node talker("talker", &sched, &bus);
  Node listener("listener", &sched, &bus);
  Recorder a, b;
  constexpr int kMessages = 200;
  auto reader_a = listener.TryCreateReader<Imu>(
      "/imu",
      [&](const std::shared_ptr<const Imu>& m) {
        a.Add(m->seq, CRoutine::Current() != nullptr);
      },
      kMessages);
  ASSERT_TRUE(reader_a.ok()) << reader_a.status();
  auto reader_b = listener.TryCreateReader<Imu>(
      "/imu",
      [&](const std::shared_ptr<const Imu>& m) {
        b.Add(m->seq, CRoutine::Current() != nullptr);
      },
      kMessages);
  ASSERT_TRUE(reader_b.ok()) << reader_b.status();
  auto writer = talker.TryCreateWriter<Imu>("/imu");
  ASSERT_TRUE(writer.ok()) << writer.status();

  for (int i = 0; i < kMessages; ++i) {
    Imu m;
    m.seq = i;
    ASSERT_TRUE((*writer)->Write(m));
  }
  ASSERT_TRUE(a.AwaitCount(kMessages));
  ASSERT_TRUE(b.AwaitCount(kMessages));
  EXPECT_EQ(a.seqs(), Range(0, kMessages));
  EXPECT_EQ(b.seqs(), Range(0, kMessages));
  EXPECT_EQ(a.outside_routine(), 0);
  EXPECT_EQ(b.outside_routine(), 0);
  EXPECT_EQ((*writer)->stats().written, static_cast<uint64_t>(kMessages));
  EXPECT_EQ((*writer)->channel_name(), "/imu");
  EXPECT_EQ((*reader_a)->channel_name(), "/imu");
  for (const auto* r : {&*reader_a, &*reader_b}) {
    const ReaderStats s = (**r).stats();
    EXPECT_EQ(s.received, static_cast<uint64_t>(kMessages));
    EXPECT_EQ(s.delivered, static_cast<uint64_t>(kMessages));
    EXPECT_EQ(s.dropped_overflow, 0u);
    EXPECT_EQ(s.pending, 0u);
  }
}

TEST(TransportTest, CallbackRunsInARoutineNotOnTheWriterThread) {
  Scheduler sched(Processors(2));
  ChannelBus bus;
  Node node("node", &sched, &bus);
  std::mutex mu;
  std::condition_variable cv;
  bool called = false;
  const CRoutine* routine = nullptr;
  std::thread::id thread;
  auto reader = node.TryCreateReader<Pose>(
      "/pose", [&](const std::shared_ptr<const Pose>&) {
        std::lock_guard<std::mutex> lock(mu);
        routine = CRoutine::Current();
        thread = std::this_thread::get_id();
        called = true;
        cv.notify_all();
      });
  ASSERT_TRUE(reader.ok()) << reader.status();
  auto writer = node.TryCreateWriter<Pose>("/pose");
  ASSERT_TRUE(writer.ok()) << writer.status();
  ASSERT_TRUE((*writer)->Write(std::make_shared<const Pose>()));
  std::unique_lock<std::mutex> lock(mu);
  ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(30), [&] { return called; }));
  EXPECT_NE(routine, nullptr);
  EXPECT_NE(thread, std::this_thread::get_id());
}

TEST(TransportTest, SlowReaderDropsOldestPendingAndWriterNeverBlocks) {
  Scheduler sched(Processors(2));
  ChannelBus bus;
  Node node("node", &sched, &bus);
  Gate gate;
  Recorder seen;
  auto reader = node.TryCreateReader<Imu>(
      "/imu",
      [&](const std::shared_ptr<const Imu>& m) {
        seen.Add(m->seq, true);
        if (m->seq == 1) gate.Wait();
      },
      /*pending_queue_size=*/2);
  ASSERT_TRUE(reader.ok()) << reader.status();
  auto writer = node.TryCreateWriter<Imu>("/imu");
  ASSERT_TRUE(writer.ok()) << writer.status();

  Imu m;
  m.seq = 1;
  ASSERT_TRUE((*writer)->Write(m));
  ASSERT_TRUE(gate.AwaitEntered());  // the callback holds message 1
  // The gate is closed while these are written: every Write returns, so the
  // writer does not wait for the reader.
  for (int seq = 2; seq <= 5; ++seq) {
    m.seq = seq;
    ASSERT_TRUE((*writer)->Write(m));
  }
  ReaderStats s = (*reader)->stats();
  EXPECT_EQ(s.received, 5u);
  EXPECT_EQ(s.dropped_overflow, 2u);  // 2 and 3 made room for 4 and 5
  EXPECT_EQ(s.pending, 2u);
  EXPECT_EQ((*writer)->stats().written, 5u);

  gate.Open();
  ASSERT_TRUE(seen.AwaitCount(3));
  EXPECT_EQ(seen.seqs(), (std::vector<int>{1, 4, 5}));
  ASSERT_TRUE(Eventually([&] { return (*reader)->stats().delivered == 3; }));
  s = (*reader)->stats();
  EXPECT_EQ(s.dropped_overflow, 2u);
  EXPECT_EQ(s.pending, 0u);
  EXPECT_EQ(s.received, s.delivered + s.dropped_overflow + s.dropped_shutdown +
                            s.pending);
}

TEST(TransportTest, TypeMismatchNamesBothTypes) {
  Scheduler sched(Processors(2));
  ChannelBus bus;
  Node first("imu_driver", &sched, &bus);
  Node second("localizer", &sched, &bus);
  ASSERT_TRUE(first.TryCreateWriter<Imu>("/sensor/imu").ok());

  auto reader = second.TryCreateReader<Pose>(
      "/sensor/imu", [](const std::shared_ptr<const Pose>&) {});
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().code(), absl::StatusCode::kFailedPrecondition);
  const std::string message(reader.status().message());
  EXPECT_NE(message.find("localizer"), std::string::npos) << message;
  EXPECT_NE(message.find("/sensor/imu"), std::string::npos) << message;
  EXPECT_NE(message.find("cyber::transport_test::Imu"), std::string::npos)
      << message;
  EXPECT_NE(message.find("cyber::transport_test::Pose"), std::string::npos)
      << message;
  EXPECT_NE(message.find("imu_driver"), std::string::npos) << message;

  auto writer = second.TryCreateWriter<Pose>("/sensor/imu");
  ASSERT_FALSE(writer.ok());
  EXPECT_NE(std::string(writer.status().message())
                .find(transport_internal::TypeName(typeid(Pose))),
            std::string::npos)
      << writer.status();
  // The same type is still welcome.
  EXPECT_TRUE(second.TryCreateReader<Imu>(
                        "/sensor/imu", [](const std::shared_ptr<const Imu>&) {})
                  .ok());
  EXPECT_EQ(bus.ChannelNames(), std::vector<std::string>{"/sensor/imu"});
}

TEST(TransportTest, BadInputsAreErrorsNamingNodeAndChannel) {
  Scheduler sched(Processors(2));
  ChannelBus bus;
  Node node("planner", &sched, &bus);
  auto ignore = [](const std::shared_ptr<const Imu>&) {};

  auto w = node.TryCreateWriter<Imu>("");
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(w.status().message(),
            "node \"planner\": CreateWriter: channel name is empty");

  auto r = node.TryCreateReader<Imu>("", ignore);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(),
            "node \"planner\": CreateReader: channel name is empty");

  r = node.TryCreateReader<Imu>("/imu", nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(),
            "node \"planner\": CreateReader on channel \"/imu\": callback is "
            "empty");

  r = node.TryCreateReader<Imu>("/imu", ignore, /*pending_queue_size=*/0);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(),
            "node \"planner\": CreateReader on channel \"/imu\": "
            "pending_queue_size 0 is invalid (must be at least 1)");

  // None of the refused calls registered a channel.
  EXPECT_TRUE(bus.ChannelNames().empty());
}

TEST(TransportTest, ReaderShutdownFromInsideItsCallbackReturns) {
  Scheduler sched(Processors(2));
  ChannelBus bus;
  Node node("node", &sched, &bus);
  std::shared_ptr<Reader<Imu>> self;  // set before the first write
  std::atomic<int> calls{0};
  std::atomic<bool> returned{false};
  auto reader = node.TryCreateReader<Imu>(
      "/imu",
      [&](const std::shared_ptr<const Imu>&) {
        calls.fetch_add(1);
        self->Shutdown();  // must not wait for itself
        returned.store(true);
      },
      /*pending_queue_size=*/10);
  ASSERT_TRUE(reader.ok()) << reader.status();
  self = *reader;
  auto writer = node.TryCreateWriter<Imu>("/imu");
  ASSERT_TRUE(writer.ok()) << writer.status();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE((*writer)->Write(Imu()));
  ASSERT_TRUE(Eventually([&] { return returned.load(); }));

  self->Shutdown();  // from outside: waits until that callback has finished
  EXPECT_EQ(calls.load(), 1);
  EXPECT_TRUE(self->is_shut_down());
  const uint64_t received = self->stats().received;
  ASSERT_TRUE((*writer)->Write(Imu()));  // the reader left the channel
  const ReaderStats s = self->stats();
  EXPECT_EQ(s.received, received);
  EXPECT_EQ(s.delivered, 1u);
  EXPECT_EQ(s.pending, 0u);
  EXPECT_EQ(s.received, s.delivered + s.dropped_overflow + s.dropped_shutdown);
  EXPECT_EQ(calls.load(), 1);
}

TEST(TransportTest, ReaderShutdownFromOutsideWaitsForTheRunningCallback) {
  Scheduler sched(Processors(2));
  ChannelBus bus;
  Node node("node", &sched, &bus);
  Gate gate;
  std::atomic<int> calls{0};
  std::atomic<bool> finished{false};
  auto reader = node.TryCreateReader<Imu>(
      "/imu",
      [&](const std::shared_ptr<const Imu>&) {
        calls.fetch_add(1);
        gate.Wait();
        finished.store(true);
      },
      /*pending_queue_size=*/4);
  ASSERT_TRUE(reader.ok()) << reader.status();
  auto writer = node.TryCreateWriter<Imu>("/imu");
  ASSERT_TRUE(writer.ok()) << writer.status();
  ASSERT_TRUE((*writer)->Write(Imu()));
  ASSERT_TRUE(gate.AwaitEntered());
  ASSERT_TRUE((*writer)->Write(Imu()));  // pending behind the running callback

  std::atomic<bool> finished_when_returned{false};
  std::thread stopper([&] {
    (*reader)->Shutdown();
    finished_when_returned.store(finished.load());
  });
  // Shutdown has begun (the flag is set before it waits); only then let the
  // callback finish. Had Shutdown not waited, it would have returned while
  // the callback was still held at the gate.
  ASSERT_TRUE(Eventually([&] { return (*reader)->is_shut_down(); }));
  gate.Open();
  stopper.join();
  EXPECT_TRUE(finished_when_returned.load());
  EXPECT_EQ(calls.load(), 1);  // the pending message was dropped, not run
  const ReaderStats s = (*reader)->stats();
  EXPECT_EQ(s.delivered, 1u);
  EXPECT_EQ(s.dropped_shutdown, 1u);
  EXPECT_EQ(s.pending, 0u);
}

TEST(TransportTest, NodeShutdownRefusesWritesAndStopsReaders) {
  Scheduler sched(Processors(2));
  ChannelBus bus;
  Node node("node", &sched, &bus);
  Node other("other", &sched, &bus);
  auto reader =
      node.TryCreateReader<Imu>("/imu", [](const std::shared_ptr<const Imu>&) {});
  ASSERT_TRUE(reader.ok()) << reader.status();
  auto writer = node.TryCreateWriter<Imu>("/imu");
  ASSERT_TRUE(writer.ok()) << writer.status();
  auto other_writer = other.TryCreateWriter<Imu>("/imu");
  ASSERT_TRUE(other_writer.ok()) << other_writer.status();

  node.Shutdown();
  EXPECT_TRUE(node.is_shut_down());
  EXPECT_FALSE((*writer)->Write(Imu()));
  EXPECT_FALSE((*writer)->Write(std::make_shared<const Imu>()));
  EXPECT_EQ((*writer)->stats().refused, 2u);
  EXPECT_EQ((*writer)->stats().written, 0u);
  EXPECT_TRUE((*reader)->is_shut_down());
  // Other nodes still write; the shut-down reader no longer receives.
  EXPECT_TRUE((*other_writer)->Write(Imu()));
  EXPECT_EQ((*reader)->stats().received, 0u);

  auto late = node.TryCreateWriter<Imu>("/imu");
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(late.status().message(),
            "node \"node\": CreateWriter on channel \"/imu\": node is shut "
            "down");
  EXPECT_FALSE(
      node.TryCreateReader<Imu>("/imu", [](const std::shared_ptr<const Imu>&) {})
          .ok());
  node.Shutdown();  // idempotent
}

TEST(TransportTest, NullMessageIsRefused) {
  Scheduler sched(Processors(2));
  ChannelBus bus;
  Node node("node", &sched, &bus);
  auto writer = node.TryCreateWriter<Imu>("/imu");
  ASSERT_TRUE(writer.ok()) << writer.status();
  EXPECT_FALSE((*writer)->Write(std::shared_ptr<const Imu>()));
  EXPECT_EQ((*writer)->stats().refused, 1u);
}

TEST(TransportTest, FourWritersDeliverEveryMessageOnceInPerWriterOrder) {
  Scheduler sched(Processors(2));
  ChannelBus bus;
  Node node("node", &sched, &bus);
  constexpr int kWriters = 4;
  constexpr int kPerWriter = 10000;
  constexpr int kTotal = kWriters * kPerWriter;
  // Written only by the callback, which never runs concurrently with itself;
  // read by the test after `count` reaches kTotal.
  std::vector<std::vector<int>> seen(kWriters);
  std::atomic<int> inside{0};
  std::atomic<int> overlaps{0};
  std::atomic<int> count{0};
  auto reader = node.TryCreateReader<Imu>(
      "/imu",
      [&](const std::shared_ptr<const Imu>& m) {
        if (inside.fetch_add(1) != 0) overlaps.fetch_add(1);
        seen[m->writer].push_back(m->seq);
        inside.fetch_sub(1);
        count.fetch_add(1, std::memory_order_release);
      },
      /*pending_queue_size=*/kTotal);
  ASSERT_TRUE(reader.ok()) << reader.status();

  std::vector<std::shared_ptr<Writer<Imu>>> writers;
  for (int w = 0; w < kWriters; ++w) {
    auto writer = node.TryCreateWriter<Imu>("/imu");
    ASSERT_TRUE(writer.ok()) << writer.status();
    writers.push_back(*writer);
  }
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      for (int i = 0; i < kPerWriter; ++i) {
        auto m = std::make_shared<Imu>();
        m->writer = w;
        m->seq = i;
        if (!writers[w]->Write(std::move(m))) return;
      }
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_TRUE(Eventually(
      [&] { return count.load(std::memory_order_acquire) >= kTotal; }));

  EXPECT_EQ(overlaps.load(), 0);
  for (int w = 0; w < kWriters; ++w) {
    EXPECT_EQ(seen[w], Range(0, kPerWriter)) << "writer " << w;
    EXPECT_EQ(writers[w]->stats().written, static_cast<uint64_t>(kPerWriter));
  }
  const ReaderStats s = (*reader)->stats();
  EXPECT_EQ(s.received, static_cast<uint64_t>(kTotal));
  EXPECT_EQ(s.delivered, static_cast<uint64_t>(kTotal));
  EXPECT_EQ(s.dropped_overflow, 0u);
  EXPECT_EQ(s.pending, 0u);
}

TEST(TransportTest, RefusedDispatchIsCountedAndRetriedOnTheNextWrite) {
  Scheduler::Options o = Processors(2);
  o.max_routines = 1;
  Scheduler sched(o);
  ChannelBus bus;
  Node node("node", &sched, &bus);
  Recorder seen;
  auto reader = node.TryCreateReader<Imu>(
      "/imu",
      [&](const std::shared_ptr<const Imu>& m) { seen.Add(m->seq, true); },
      /*pending_queue_size=*/4);
  ASSERT_TRUE(reader.ok()) << reader.status();
  auto writer = node.TryCreateWriter<Imu>("/imu");
  ASSERT_TRUE(writer.ok()) << writer.status();

  Gate gate;  // occupies the scheduler's only routine slot
  ASSERT_TRUE(sched.Dispatch([&] { gate.Wait(); }));
  ASSERT_TRUE(gate.AwaitEntered());
  Imu m;
  m.seq = 1;
  EXPECT_TRUE((*writer)->Write(m));  // delivered to the queue; drain refused
  ReaderStats s = (*reader)->stats();
  EXPECT_EQ(s.dispatch_refusals, 1u);
  EXPECT_EQ(s.pending, 1u);
  EXPECT_EQ(s.delivered, 0u);

  gate.Open();
  ASSERT_TRUE(Eventually([&] { return sched.stats().live == 0; }));
  m.seq = 2;
  EXPECT_TRUE((*writer)->Write(m));  // retries: both messages arrive
  ASSERT_TRUE(seen.AwaitCount(2));
  EXPECT_EQ(seen.seqs(), (std::vector<int>{1, 2}));
  s = (*reader)->stats();
  EXPECT_EQ(s.dispatch_refusals, 1u);
}

TEST(TransportTest, DrainDroppedBySchedulerShutdownIsRetriedAndCounted) {
  Scheduler sched(Processors(1));
  ChannelBus bus;
  Node node("node", &sched, &bus);
  std::atomic<int> calls{0};
  auto reader = node.TryCreateReader<Imu>(
      "/imu", [&](const std::shared_ptr<const Imu>&) { calls.fetch_add(1); },
      /*pending_queue_size=*/4);
  ASSERT_TRUE(reader.ok()) << reader.status();
  auto writer = node.TryCreateWriter<Imu>("/imu");
  ASSERT_TRUE(writer.ok()) << writer.status();

  Gate gate;  // holds the only processor, so the drain stays queued
  ASSERT_TRUE(sched.Dispatch([&] { gate.Wait(); }));
  ASSERT_TRUE(gate.AwaitEntered());
  ASSERT_TRUE((*writer)->Write(Imu()));
  std::thread stopper([&] { sched.Shutdown(); });
  ASSERT_TRUE(Eventually([&] { return sched.stopping(); }));
  gate.Open();  // the queued drain is now dropped without running
  stopper.join();

  EXPECT_EQ(calls.load(), 0);
  EXPECT_EQ((*reader)->stats().pending, 1u);
  // The reader noticed the drain never ran, so this write tries again, and
  // the shut-down scheduler's refusal is counted.
  EXPECT_TRUE((*writer)->Write(Imu()));
  const ReaderStats s = (*reader)->stats();
  EXPECT_EQ(s.dispatch_refusals, 1u);
  EXPECT_EQ(s.pending, 2u);
  EXPECT_EQ(s.delivered, 0u);
}

TEST(TransportTest, ThrowingCallbackIsCountedAndDeliveryContinues) {
  Scheduler sched(Processors(2));
  ChannelBus bus;
  Node node("node", &sched, &bus);
  Recorder seen;
  auto reader = node.TryCreateReader<Imu>(
      "/imu",
      [&](const std::shared_ptr<const Imu>& m) {
        seen.Add(m->seq, true);
        if (m->seq == 1) throw std::runtime_error("bad frame");
      },
      /*pending_queue_size=*/8);
  ASSERT_TRUE(reader.ok()) << reader.status();
  auto writer = node.TryCreateWriter<Imu>("/imu");
  ASSERT_TRUE(writer.ok()) << writer.status();
  for (int seq = 0; seq < 3; ++seq) {
    Imu m;
    m.seq = seq;
    ASSERT_TRUE((*writer)->Write(m));
  }
  ASSERT_TRUE(seen.AwaitCount(3));
  EXPECT_EQ(seen.seqs(), (std::vector<int>{0, 1, 2}));
  ASSERT_TRUE(Eventually([&] {
    const ReaderStats s = (*reader)->stats();
    return s.delivered == 3 && s.callback_exceptions == 1;
  }));
}

TEST(TransportTest, NodesWithoutABusShareTheProcessRuntimes) {
  Scheduler sched(Processors(2));
  Node a("a", &sched);
  Node b("b", &sched);
  EXPECT_EQ(a.bus(), ProcessRuntime()->bus());
  EXPECT_EQ(b.bus(), ProcessRuntime()->bus());
  ASSERT_TRUE(a.TryCreateWriter<Imu>("/transport_test/default_bus").ok());
  EXPECT_FALSE(b.TryCreateWriter<Pose>("/transport_test/default_bus").ok());
  // An explicit bus is separate.
  ChannelBus bus;
  Node c("c", &sched, &bus);
  EXPECT_TRUE(c.TryCreateWriter<Pose>("/transport_test/default_bus").ok());
}

}  // namespace transport_test
}  // namespace cyber
