#include "gps/gps_components.h"

#include "cyber/component/component_registry.h"

namespace gps {

bool GpsPoller::Init() {
  writer_ = node_->CreateWriter<Fix>("/gps/fix");
  return writer_ != nullptr;
}

bool GpsPoller::Proc() {
  auto fix = std::make_shared<Fix>();
  fix->set_seq(++seq_);
  fix->set_latitude(48.137);
  fix->set_longitude(11.575);
  return writer_->Write(std::move(fix));
}

bool GpsWatchdog::Init() {
  alarm_ = node_->CreateWriter<FixTimeout>("/gps/timeout");
  if (alarm_ == nullptr) return false;
  // Cyber RT's constructor: 150 ms, oneshot. Made here without a timer
  // system: it runs on the graph's (a simulated clock in the test).
  timeout_ = std::make_unique<cyber::Timer>(
      150,
      [this] {
        auto alarm = std::make_shared<FixTimeout>();
        alarm->set_last_seq(last_seq_);
        alarm_->Write(std::move(alarm));
      },
      true);
  timeout_->Start();
  return timeout_->IsRunning();
}

bool GpsWatchdog::Proc(const std::shared_ptr<Fix>& fix) {
  last_seq_ = fix->seq();
  return timeout_->Reset().ok();  // the 150 ms count from this fix
}

void GpsWatchdog::Clear() { timeout_->Stop(); }

CYBER_REGISTER_COMPONENT(GpsPoller)
CYBER_REGISTER_COMPONENT(GpsWatchdog)

}  // namespace gps
