// Writes a recording like one cyber_recorder makes of pollers.dag (the IMU
// at 100 Hz, the lidar at 10 Hz), deterministically, for
// fusion_replay_test: a genrule runs it, so no binary file is committed.
// A recording of the real pollers can take its place (the test's BUILD
// rule names the file).
//
//   write_pollers_recording <out.mcap> [seconds]
//
// Reading k of a sensor is polled at k periods after the recording's
// epoch, stamped with that instant (stamp_ns, as the pollers do) and
// received by the recorder a fixed latency later (log_time): 200 us for an
// IMU reading, 1 ms for a lidar scan. Values as ImuPoller and LidarPoller
// compute them.

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "absl/time/time.h"
#include "cyber/simulation/testing/recording_file.h"
#include "examples/sensor_polling/sensor_components.h"
#include "examples/sensor_polling/sensor_messages.pb.h"

namespace sensor_polling {
namespace {

constexpr absl::Duration kImuPeriod = absl::Milliseconds(10);
constexpr absl::Duration kLidarPeriod = absl::Milliseconds(100);
constexpr absl::Duration kImuLatency = absl::Microseconds(200);
constexpr absl::Duration kLidarLatency = absl::Milliseconds(1);
// The pollers' clock at the recording's epoch (a steady clock's reading).
constexpr absl::Duration kEpoch = absl::Hours(100);
constexpr int kBeams = 360;
constexpr char kProcess[] = "pollers@robot:4242";

uint64_t Ns(absl::Duration d) { return static_cast<uint64_t>(absl::ToInt64Nanoseconds(d)); }

int Write(const std::string& path, absl::Duration length) {
  auto file = cyber::testing::RecordingFile::Create(path);
  if (!file.ok()) {
    std::fprintf(stderr, "%s\n", std::string(file.status().message()).c_str());
    return 1;
  }
  // By the instant the recorder receives them (since the epoch); the file
  // has them in that order, as the recorder writes them.
  std::map<absl::Duration, ImuReading> imu;
  std::map<absl::Duration, LidarScan> lidar;
  for (int64_t k = 1; kImuPeriod * k <= length; ++k) {
    ImuReading r;
    r.set_seq(static_cast<uint64_t>(k));
    r.set_stamp_ns(absl::ToInt64Nanoseconds(kEpoch + kImuPeriod * k));
    const double t = static_cast<double>(k) * 0.01;
    r.mutable_accel()->set_x(0.1 * std::sin(t));
    r.mutable_accel()->set_y(0.1 * std::cos(t));
    r.mutable_accel()->set_z(9.81);
    r.mutable_gyro()->set_z(0.05 * std::sin(0.5 * t));
    imu[kImuPeriod * k + kImuLatency] = r;
  }
  for (int64_t k = 1; kLidarPeriod * k <= length; ++k) {
    LidarScan s;
    s.set_seq(static_cast<uint64_t>(k));
    s.set_stamp_ns(absl::ToInt64Nanoseconds(kEpoch + kLidarPeriod * k));
    for (int i = 0; i < kBeams; ++i) {
      s.add_ranges(5.0f + 0.5f * static_cast<float>(std::sin(0.1 * i + static_cast<double>(k))));
    }
    lidar[kLidarPeriod * k + kLidarLatency] = s;
  }
  auto i = imu.begin();
  auto l = lidar.begin();
  absl::Status status;
  while (status.ok() && (i != imu.end() || l != lidar.end())) {
    const bool take_imu = l == lidar.end() || (i != imu.end() && i->first <= l->first);
    if (take_imu) {
      status = (*file)->Add(kImuChannel, i->second, Ns(kEpoch + i->first), kProcess);
      ++i;
    } else {
      status = (*file)->Add(kLidarChannel, l->second, Ns(kEpoch + l->first), kProcess);
      ++l;
    }
  }
  if (status.ok()) status = (*file)->Close();
  if (!status.ok()) {
    std::fprintf(stderr, "%s: %s\n", path.c_str(), std::string(status.message()).c_str());
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace sensor_polling

int main(int argc, char** argv) {
  if (argc != 2 && argc != 3) {
    std::fprintf(stderr, "usage: %s <out.mcap> [seconds, default 10]\n", argv[0]);
    return 2;
  }
  const int seconds = argc == 3 ? std::atoi(argv[2]) : 10;
  if (seconds <= 0) {
    std::fprintf(stderr, "%s: seconds \"%s\" is not a positive number\n", argv[0], argv[2]);
    return 2;
  }
  return sensor_polling::Write(argv[1], absl::Seconds(seconds));
}
