#include "examples/cyber_compat/driver_chatter_fusion.h"

#include "cyber/common/log.h"
#include "cyber/time/time.h"

namespace cyber {
namespace examples {
namespace compat {

using cyber::Duration;
using cyber::Time;

bool DriverChatterFusion::Init() {
  if (!GetProtoConfig(&config_)) return false;
  fused_writer_ = node_->CreateWriter<FusedStatus>(config_.fused_channel());
  return fused_writer_ != nullptr;
}

bool DriverChatterFusion::Proc(const std::shared_ptr<Chatter>& chatter,
                               const std::shared_ptr<Driver>& driver) {
  const Duration age = Time(chatter->timestamp()) - Time(driver->timestamp());
  auto out = std::make_shared<FusedStatus>();
  out->set_chatter_seq(chatter->seq());
  out->set_driver_msg_id(driver->msg_id());
  out->set_driver_age_ns(age.ToNanosecond());
  if (age > Duration(1.0)) AWARN << "driver message is " << age << " s old";
  return fused_writer_->Write(out);
}

CYBER_REGISTER_COMPONENT(DriverChatterFusion)

}  // namespace compat
}  // namespace examples
}  // namespace cyber
