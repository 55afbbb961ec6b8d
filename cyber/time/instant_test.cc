#include "cyber/time/instant.h"

#include <sstream>

#include "gtest/gtest.h"

namespace cyber {
namespace {

TEST(InstantTest, ArithmeticAndOrdering) {
  const Instant epoch;
  const Instant t = epoch + absl::Milliseconds(5);
  EXPECT_EQ(t.SinceEpoch(), absl::Milliseconds(5));
  EXPECT_EQ(t - epoch, absl::Milliseconds(5));
  EXPECT_EQ(epoch - t, absl::Milliseconds(-5));
  EXPECT_EQ(t - absl::Milliseconds(5), epoch);
  EXPECT_LT(epoch, t);
  EXPECT_LE(t, t);
  EXPECT_GT(t, epoch);
  EXPECT_NE(t, epoch);
  Instant u = t;
  u += absl::Seconds(1);
  EXPECT_EQ(u - t, absl::Seconds(1));
}

TEST(InstantTest, InfiniteFutureIsLaterThanAnyFiniteInstant) {
  const Instant inf = Instant::InfiniteFuture();
  EXPECT_TRUE(inf.IsInfiniteFuture());
  EXPECT_FALSE(Instant().IsInfiniteFuture());
  EXPECT_GT(inf, Instant::FromEpoch(absl::Hours(1e6)));
  EXPECT_TRUE((inf + absl::Seconds(1)).IsInfiniteFuture());
}

TEST(InstantTest, PrintsDurationSinceEpoch) {
  std::ostringstream os;
  os << Instant::FromEpoch(absl::Milliseconds(1500));
  EXPECT_EQ(os.str(), "epoch+1.5s");
}

}  // namespace
}  // namespace cyber
