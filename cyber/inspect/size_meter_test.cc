#include "cyber/inspect/size_meter.h"

#include "gtest/gtest.h"

namespace cyber {
namespace inspect {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1000);

TEST(SizeMeterTest, NoReportBeforeTwoMessages) {
  SizeMeter meter(10);
  EXPECT_FALSE(meter.Report().has_value());
  meter.Add(kStart, 100);
  EXPECT_FALSE(meter.Report().has_value());
}

// 125-byte messages at 100 Hz: 12.5 KB/s.
TEST(SizeMeterTest, SteadyStream) {
  SizeMeter meter(100);
  for (int i = 0; i < 100; ++i) meter.Add(kStart + i * absl::Milliseconds(10), 125);
  const SizeReport r = *meter.Report();
  EXPECT_NEAR(r.bytes_per_second, 12500.0, 1e-6);
  EXPECT_DOUBLE_EQ(r.mean_bytes, 125.0);
  EXPECT_EQ(r.min_bytes, 125u);
  EXPECT_EQ(r.max_bytes, 125u);
  EXPECT_EQ(r.window, 100u);
}

TEST(SizeMeterTest, MixedSizesAndWindow) {
  SizeMeter meter(3);
  meter.Add(kStart, 1000);  // falls out of the window
  meter.Add(kStart + absl::Seconds(1), 10);
  meter.Add(kStart + absl::Seconds(2), 20);
  meter.Add(kStart + absl::Seconds(3), 30);
  const SizeReport r = *meter.Report();
  EXPECT_EQ(r.window, 3u);
  EXPECT_EQ(r.min_bytes, 10u);
  EXPECT_EQ(r.max_bytes, 30u);
  EXPECT_DOUBLE_EQ(r.mean_bytes, 20.0);
  // 20 + 30 bytes in the 2 s after the first message of the window.
  EXPECT_DOUBLE_EQ(r.bytes_per_second, 25.0);
  EXPECT_EQ(meter.total(), 4u);
}

TEST(SizeMeterTest, FormatsBytesAndReport) {
  EXPECT_EQ(FormatBytes(512), "512 B");
  EXPECT_EQ(FormatBytes(12500), "12.50 KB");
  EXPECT_EQ(FormatBytes(3.5e6), "3.50 MB");
  SizeReport r;
  r.bytes_per_second = 12500;
  r.mean_bytes = 125;
  r.min_bytes = 120;
  r.max_bytes = 130;
  r.window = 100;
  EXPECT_EQ(FormatSize(r), "average: 12.50 KB/s\n\tmean: 125 B min: 120 B max: 130 B window: 100\n");
}

}  // namespace
}  // namespace inspect
}  // namespace cyber
