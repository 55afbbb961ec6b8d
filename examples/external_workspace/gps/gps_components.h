// A robot team's components, built against cyber_timer from another
// workspace: a GPS poller at 20 Hz and a watchdog that raises an alarm when
// no fix arrived for 150 ms.

#ifndef GPS_GPS_COMPONENTS_H_
#define GPS_GPS_COMPONENTS_H_

#include <cstdint>
#include <memory>

#include "cyber/component/component.h"
#include "cyber/component/timer_component.h"
#include "timer/timer.h"

namespace gps {

struct Fix {
  uint64_t seq = 0;
  double latitude = 0;
  double longitude = 0;
};

struct FixTimeout {
  uint64_t last_seq = 0;
};

class GpsPoller : public cyber::TimerComponent {
 public:
  bool Init() override;
  bool Proc() override;

 private:
  std::shared_ptr<cyber::Writer<Fix>> writer_;
  uint64_t seq_ = 0;
};

class GpsWatchdog : public cyber::Component<Fix> {
 public:
  bool Init() override;
  bool Proc(const std::shared_ptr<Fix>& fix) override;
  void Clear() override;

 private:
  std::unique_ptr<cyber::Timer> timeout_;
  std::shared_ptr<cyber::Writer<FixTimeout>> alarm_;
  uint64_t last_seq_ = 0;
};

}  // namespace gps

#endif  // GPS_GPS_COMPONENTS_H_
