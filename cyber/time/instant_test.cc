#include "cyber/time/instant.h"

#include <cstdint>
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

// The inline conversions agree with absl's everywhere: on their own fast
// path (quarter nanoseconds truncated toward zero, either order) and on
// absl's (negative, far from the epoch, infinite).
TEST(InstantTest, InlineNanosecondsAgreeWithAbsl) {
  const absl::Duration quarter = absl::Nanoseconds(1) / 4;
  const absl::Duration durations[] = {
      absl::ZeroDuration(),
      quarter,
      3 * quarter,
      absl::Nanoseconds(1),
      absl::Seconds(1) - quarter,
      absl::Seconds(1) + 5 * quarter,
      absl::Hours(24 * 365) + absl::Nanoseconds(123456789) + quarter,
      absl::Seconds(int64_t{1} << 31) - quarter,  // the last on the fast path
      absl::Seconds(int64_t{1} << 31),
      absl::Seconds(int64_t{1} << 33) - quarter,
      absl::Seconds(int64_t{1} << 33),
      absl::Hours(1e7),
      -quarter,
      -absl::Seconds(3) - 3 * quarter,
      absl::InfiniteDuration(),
      -absl::InfiniteDuration(),
  };
  for (absl::Duration d : durations) {
    EXPECT_EQ(ToInt64NanosecondsInline(d), absl::ToInt64Nanoseconds(d)) << d;
  }
  for (absl::Duration a : durations) {
    for (absl::Duration b : durations) {
      if (a == absl::InfiniteDuration() || b == absl::InfiniteDuration() ||
          a == -absl::InfiniteDuration() || b == -absl::InfiniteDuration()) {
        continue;
      }
      const Instant from = Instant::FromEpoch(a);
      const Instant to = Instant::FromEpoch(b);
      EXPECT_EQ(NanosecondsBetween(from, to), absl::ToInt64Nanoseconds(to - from))
          << "from " << from << " to " << to;
    }
  }
  const Instant t = Instant::FromEpoch(absl::Seconds(5));
  EXPECT_EQ(NanosecondsBetween(t, Instant::InfiniteFuture()),
            absl::ToInt64Nanoseconds(Instant::InfiniteFuture() - t));
  EXPECT_EQ(NanosecondsBetween(Instant::InfiniteFuture(), t),
            absl::ToInt64Nanoseconds(t - Instant::InfiniteFuture()));
}

TEST(InstantTest, PrintsDurationSinceEpoch) {
  std::ostringstream os;
  os << Instant::FromEpoch(absl::Milliseconds(1500));
  EXPECT_EQ(os.str(), "epoch+1.5s");
}

}  // namespace
}  // namespace cyber
