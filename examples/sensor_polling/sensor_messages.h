// Messages of the sensor-polling example: synthetic IMU and lidar readings,
// stamped with the time the poller produced them.

#ifndef EXAMPLES_SENSOR_POLLING_SENSOR_MESSAGES_H_
#define EXAMPLES_SENSOR_POLLING_SENSOR_MESSAGES_H_

#include <array>
#include <cstdint>
#include <vector>

#include "cyber/time/instant.h"

namespace sensor_polling {

inline constexpr char kImuChannel[] = "/sensor/imu";
inline constexpr char kLidarChannel[] = "/sensor/lidar";

struct ImuReading {
  uint64_t seq = 0;
  cyber::Instant stamp;
  std::array<double, 3> accel{};  // m/s^2
  std::array<double, 3> gyro{};   // rad/s
};

struct LidarScan {
  uint64_t seq = 0;
  cyber::Instant stamp;
  std::vector<float> ranges;  // m, one per beam
};

}  // namespace sensor_polling

#endif  // EXAMPLES_SENSOR_POLLING_SENSOR_MESSAGES_H_
