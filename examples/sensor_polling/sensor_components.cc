#include "examples/sensor_polling/sensor_components.h"

#include <algorithm>
#include <cmath>

#include "absl/time/time.h"
#include "cyber/common/log.h"
#include "cyber/component/component_registry.h"
#include "cyber/time/current_clock.h"
#include "cyber/time/steady_clock.h"

namespace sensor_polling {

namespace {

// The graph's clock: the steady clock, or the simulated clock of a graph run
// on simulated time (cyber/time/current_clock.h).
cyber::Instant Now() { return cyber::CurrentClock()->Now(); }

void Set(Vector3* v, double x, double y, double z) {
  v->set_x(x);
  v->set_y(y);
  v->set_z(z);
}

}  // namespace

int64_t ToStampNs(cyber::Instant t) { return absl::ToInt64Nanoseconds(t.SinceEpoch()); }

cyber::Instant FromStampNs(int64_t stamp_ns) {
  return cyber::Instant::FromEpoch(absl::Nanoseconds(stamp_ns));
}

bool ImuPoller::Init() {
  auto writer = node()->TryCreateWriter<ImuReading>(kImuChannel);
  if (!writer.ok()) {
    AERROR << writer.status().message();
    return false;
  }
  writer_ = *writer;
  AINFO << "imu poller \"" << name() << "\": every " << GetInterval() << " ms";
  return true;
}

bool ImuPoller::Proc() {
  auto reading = std::make_shared<ImuReading>();
  reading->set_seq(++seq_);
  reading->set_stamp_ns(ToStampNs(Now()));
  const double t = static_cast<double>(seq_) * 0.01;
  Set(reading->mutable_accel(), 0.1 * std::sin(t), 0.1 * std::cos(t), 9.81);
  Set(reading->mutable_gyro(), 0.0, 0.0, 0.05 * std::sin(0.5 * t));
  return writer_->Write(std::move(reading));
}

bool LidarPoller::Init() {
  auto writer = node()->TryCreateWriter<LidarScan>(kLidarChannel);
  if (!writer.ok()) {
    AERROR << writer.status().message();
    return false;
  }
  writer_ = *writer;
  AINFO << "lidar poller \"" << name() << "\": every " << GetInterval() << " ms";
  return true;
}

bool LidarPoller::Proc() {
  auto scan = std::make_shared<LidarScan>();
  scan->set_seq(++seq_);
  scan->set_stamp_ns(ToStampNs(Now()));
  constexpr int kBeams = 360;
  scan->mutable_ranges()->Reserve(kBeams);
  for (int i = 0; i < kBeams; ++i) {
    scan->add_ranges(5.0f + 0.5f * static_cast<float>(std::sin(0.1 * i + seq_)));
  }
  return writer_->Write(std::move(scan));
}

bool Fusion::Init() {
  auto reader = node()->TryCreateReader<LidarScan>(
      kLidarChannel, [this](const std::shared_ptr<const LidarScan>& scan) {
        cyber::MutexLock lock(&mu_);
        latest_scan_ = scan;
      });
  if (!reader.ok()) {
    AERROR << reader.status().message();
    return false;
  }
  lidar_reader_ = *reader;
  return true;
}

bool Fusion::Proc(const std::shared_ptr<ImuReading>& imu) {
  std::shared_ptr<const LidarScan> scan;
  {
    cyber::MutexLock lock(&mu_);
    scan = latest_scan_;
  }
  ++fused_;
  if (scan != nullptr && scan->ranges_size() > 0) {
    // A toy fusion: the closest obstacle, and how old the scan is.
    float closest = scan->ranges(0);
    for (float r : scan->ranges()) closest = std::min(closest, r);
    const absl::Duration scan_age = FromStampNs(imu->stamp_ns()) - FromStampNs(scan->stamp_ns());
    (void)closest;
    (void)scan_age;
    ++fused_with_lidar_;
  }
  return imu->seq() > 0;
}

bool HealthMonitor::Init() {
  auto imu = node()->TryCreateReader<ImuReading>(
      kImuChannel, [this](const std::shared_ptr<const ImuReading>&) { ++imu_seen_; },
      /*pending_queue_size=*/16);
  auto lidar = node()->TryCreateReader<LidarScan>(
      kLidarChannel, [this](const std::shared_ptr<const LidarScan>&) { ++lidar_seen_; },
      /*pending_queue_size=*/16);
  if (!imu.ok() || !lidar.ok()) {
    AERROR << (imu.ok() ? lidar.status() : imu.status()).message();
    return false;
  }
  imu_reader_ = *imu;
  lidar_reader_ = *lidar;
  return true;
}

bool HealthMonitor::Proc() {
  const uint64_t imu = imu_seen_.exchange(0);
  const uint64_t lidar = lidar_seen_.exchange(0);
  ++reports_;
  AINFO << "health \"" << name() << "\": last " << GetInterval() << " ms: imu "
        << imu << " msgs, lidar " << lidar << " msgs";
  return imu > 0 && lidar > 0;  // a silent sensor is a failed health check
}

CYBER_REGISTER_COMPONENT(ImuPoller)
CYBER_REGISTER_COMPONENT(LidarPoller)
CYBER_REGISTER_COMPONENT(Fusion)
CYBER_REGISTER_COMPONENT(HealthMonitor)

}  // namespace sensor_polling
