// The sensor-polling graph (sensor_polling.dag):
//
//   ImuPoller     (timer, 10 ms = 100 Hz)  -> /sensor/imu
//   LidarPoller   (timer, 100 ms = 10 Hz)  -> /sensor/lidar
//   Fusion        (component, reads /sensor/imu; keeps the latest lidar scan)
//   HealthMonitor (timer, 1000 ms = 1 Hz)  counts what arrived on both
//                                          channels and logs the rates
//
// The pollers stand in for drivers: each Proc() reads a (synthetic) sensor
// and publishes it. Counters are exposed for the example's tests, which
// reach a running component by name (cyber::Launcher::Find,
// cyber::GraphTest::component).
//
// One process or two: the messages are protobuf messages
// (sensor_messages.proto), so the channels also reach the other processes
// of the DDS domain. The same components run in one mainboard
// (sensor_polling.dag) or in two, the pollers in one (pollers.dag) and
// fusion and monitor in the other (fusion.dag); none of them knows which.
//
// In the fusion process nothing writes the sensor channels; fusion.dag says
// so with remote_inputs on the readers' entries, so the launcher's start-up
// check (one process) does not warn that they are written by no one.

#ifndef EXAMPLES_SENSOR_POLLING_SENSOR_COMPONENTS_H_
#define EXAMPLES_SENSOR_POLLING_SENSOR_COMPONENTS_H_

#include <atomic>
#include <cstdint>
#include <memory>

#include "cyber/common/mutex.h"
#include "cyber/component/component.h"
#include "cyber/component/timer_component.h"
#include "cyber/time/instant.h"
#include "examples/sensor_polling/sensor_messages.pb.h"

namespace sensor_polling {

inline constexpr char kImuChannel[] = "/sensor/imu";
inline constexpr char kLidarChannel[] = "/sensor/lidar";

// A message's stamp_ns from an instant of the graph's clock, and back.
int64_t ToStampNs(cyber::Instant t);
cyber::Instant FromStampNs(int64_t stamp_ns);

class ImuPoller : public cyber::TimerComponent {
 public:
  bool Init() override;
  bool Proc() override;

 private:
  std::shared_ptr<cyber::Writer<ImuReading>> writer_;
  uint64_t seq_ = 0;
};

class LidarPoller : public cyber::TimerComponent {
 public:
  bool Init() override;
  bool Proc() override;

 private:
  std::shared_ptr<cyber::Writer<LidarScan>> writer_;
  uint64_t seq_ = 0;
};

class Fusion : public cyber::Component<ImuReading> {
 public:
  bool Init() override;
  bool Proc(const std::shared_ptr<ImuReading>& imu) override;

  // For the tests: IMU readings fused, and how many had a lidar scan.
  uint64_t fused() const { return fused_.load(); }
  uint64_t fused_with_lidar() const { return fused_with_lidar_.load(); }

 private:
  std::atomic<uint64_t> fused_{0};
  std::atomic<uint64_t> fused_with_lidar_{0};
  std::shared_ptr<cyber::Reader<LidarScan>> lidar_reader_;
  cyber::Mutex mu_;
  std::shared_ptr<const LidarScan> latest_scan_ ABSL_GUARDED_BY(mu_);
};

class HealthMonitor : public cyber::TimerComponent {
 public:
  bool Init() override;
  bool Proc() override;

  // For the tests: health checks run.
  uint64_t reports() const { return reports_.load(); }

 private:
  std::atomic<uint64_t> reports_{0};
  std::shared_ptr<cyber::Reader<ImuReading>> imu_reader_;
  std::shared_ptr<cyber::Reader<LidarScan>> lidar_reader_;
  std::atomic<uint64_t> imu_seen_{0};
  std::atomic<uint64_t> lidar_seen_{0};
};

}  // namespace sensor_polling

#endif  // EXAMPLES_SENSOR_POLLING_SENSOR_COMPONENTS_H_
