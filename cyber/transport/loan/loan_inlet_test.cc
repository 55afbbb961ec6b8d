// LoanInlet over a real segment in this process (the writer's side is the
// segment itself): the first reference through Resolve, the rest at the
// doorbell, in publish order, each once.

#include "cyber/transport/loan/loan_inlet.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "cyber/common/mutex.h"
#include "gtest/gtest.h"

namespace cyber {
namespace loan {
namespace {

bool Eventually(const std::function<bool()>& done) {
  const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!done()) {
    if (std::chrono::steady_clock::now() > limit) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

class Writer {
 public:
  explicit Writer(uint32_t slots) {
    auto segment = LoanSegment::Create("/cam", slots, 64);
    EXPECT_TRUE(segment.ok()) << segment.status();
    segment_ = *segment;
  }
  // Publishes one message whose first byte is `value`; returns its wire.
  std::string Publish(uint8_t value) {
    absl::StatusOr<SlotClaim> c = segment_->Claim();
    EXPECT_TRUE(c.ok()) << c.status();
    if (!c.ok()) return "";
    c->data[0] = value;
    const Published p = segment_->Publish(*c, 1, false);
    LoanReference r;
    r.segment = segment_->name();
    r.slot = p.slot;
    r.generation = p.generation;
    r.size = 1;
    r.sequence = p.sequence;
    r.host = ThisHostBootId();
    return EncodeLoan(r);
  }
  LoanSegment& segment() { return *segment_; }

 private:
  std::shared_ptr<LoanSegment> segment_;
};

struct Got {
  Mutex mu;
  std::vector<int> values ABSL_GUARDED_BY(mu);
  std::vector<uint64_t> sequences ABSL_GUARDED_BY(mu);
  size_t size() {
    MutexLock l(&mu);
    return values.size();
  }
};

TEST(LoanInletTest, WithoutADoorbellEveryMessageComesThroughResolve) {
  Writer writer(4);
  LoanInlet inlet("/cam");
  for (int i = 0; i < 10; ++i) {
    absl::StatusOr<std::shared_ptr<const SharedBytes>> m = inlet.Resolve(writer.Publish(i));
    ASSERT_TRUE(m.ok()) << m.status();
    ASSERT_NE(*m, nullptr);
    EXPECT_EQ((*m)->data()[0], i);
  }
  EXPECT_EQ(inlet.stats().loaned, 10u);
  EXPECT_EQ(inlet.stats().doorbell, 0u);
}

TEST(LoanInletTest, AfterTheFirstReferenceTheDoorbellHandsOverInOrderOnce) {
  Writer writer(8);
  Got got;
  LoanInlet inlet("/cam", [&](std::shared_ptr<const SharedBytes> m) {
    MutexLock l(&got.mu);
    got.values.push_back(m->data()[0]);
    got.sequences.push_back(m->loan()->sequence);
  });
  // The first reference is handed over by Resolve itself.
  absl::StatusOr<std::shared_ptr<const SharedBytes>> first = inlet.Resolve(writer.Publish(0));
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(*first, nullptr);
  ASSERT_EQ(got.size(), 1u);
  // The next ones arrive at the doorbell, with no Resolve at all; slowly
  // enough for this reader to keep up (it lets each go at once).
  std::vector<std::string> wires;
  for (int i = 1; i <= 20; ++i) {
    wires.push_back(writer.Publish(static_cast<uint8_t>(i)));
    ASSERT_TRUE(Eventually([&] { return got.size() == static_cast<size_t>(i + 1); })) << i;
  }
  // Their DDS samples, arriving late, only confirm.
  for (const std::string& w : wires) {
    absl::StatusOr<std::shared_ptr<const SharedBytes>> m = inlet.Resolve(w);
    ASSERT_TRUE(m.ok());
    EXPECT_EQ(*m, nullptr);
  }
  MutexLock l(&got.mu);
  for (int i = 0; i <= 20; ++i) {
    EXPECT_EQ(got.values[i], i);
    EXPECT_EQ(got.sequences[i], static_cast<uint64_t>(i + 1));
  }
  const LoanInletStats s = inlet.stats();
  EXPECT_EQ(s.loaned, 1u);
  EXPECT_EQ(s.doorbell, 20u);
  EXPECT_EQ(s.confirmed, 20u);
  EXPECT_EQ(s.overwritten, 0u);
}

TEST(LoanInletTest, AReaderFarBehindCountsWhatWasWrittenOverAndNeverReadsItTorn) {
  Writer writer(4);
  Got got;
  std::atomic<bool> open{false};
  std::atomic<int> inside{0};
  LoanInlet inlet("/cam", [&](std::shared_ptr<const SharedBytes> m) {
    // The first doorbell message holds the thread (and its slot) until
    // the writer has published far past the ring.
    if (m->loan()->sequence == 2) {
      inside.store(1);
      while (!open.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    MutexLock l(&got.mu);
    got.values.push_back(m->data()[0]);
    got.sequences.push_back(m->loan()->sequence);
  });
  ASSERT_TRUE(inlet.Resolve(writer.Publish(0)).ok());
  writer.Publish(1);
  ASSERT_TRUE(Eventually([&] { return inside.load() == 1; }));
  constexpr int kMore = 100;
  for (int i = 0; i < kMore; ++i) writer.Publish(static_cast<uint8_t>(2 + i));
  open.store(true);
  const uint64_t newest = 2 + kMore;
  ASSERT_TRUE(Eventually([&] {
    const LoanInletStats s = inlet.stats();
    return s.doorbell + s.overwritten == newest - 1;
  })) << inlet.stats().doorbell << " + " << inlet.stats().overwritten;
  const LoanInletStats s = inlet.stats();
  EXPECT_GE(s.overwritten, static_cast<uint64_t>(kMore - kRingEntries));
  MutexLock l(&got.mu);
  ASSERT_GE(got.values.size(), 3u);  // the first, the held one, the newest
  for (size_t i = 1; i < got.sequences.size(); ++i) {
    EXPECT_LT(got.sequences[i - 1], got.sequences[i]);
    // Each byte is the one published with its sequence (value = seq - 1).
    EXPECT_EQ(got.values[i], static_cast<int>((got.sequences[i] - 1) & 0xff));
  }
  EXPECT_EQ(got.sequences.back(), newest);
}

TEST(LoanInletTest, StopEndsTheDoorbellAndResolveHandsOverAgain) {
  Writer writer(4);
  Got got;
  LoanInlet inlet("/cam", [&](std::shared_ptr<const SharedBytes> m) {
    MutexLock l(&got.mu);
    got.values.push_back(m->data()[0]);
  });
  ASSERT_TRUE(inlet.Resolve(writer.Publish(0)).ok());
  inlet.Stop();
  const std::string wire = writer.Publish(1);
  absl::StatusOr<std::shared_ptr<const SharedBytes>> m = inlet.Resolve(wire);
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_NE(*m, nullptr);
  EXPECT_EQ((*m)->data()[0], 1);
  EXPECT_EQ(got.size(), 1u);  // only the first, before Stop()
}

}  // namespace
}  // namespace loan
}  // namespace cyber
