#include "examples/cyber_compat/car_status_writer.h"

#include "cyber/common/log.h"
#include "cyber/time/time.h"

namespace cyber {
namespace examples {
namespace compat {

using cyber::Time;

bool CarStatusWriter::Init() {
  if (!GetProtoConfig(&config_)) return false;
  driver_writer_ = node_->CreateWriter<Driver>(config_.driver_channel());
  if (driver_writer_ == nullptr) return false;
  fused_reader_ = node_->CreateReader<FusedStatus>(
      config_.fused_channel(), [this](const std::shared_ptr<FusedStatus>& status) {
        fused_seen_.fetch_add(1);
        ADEBUG << "fused chatter " << status->chatter_seq() << " with driver "
               << status->driver_msg_id();
      });
  if (fused_reader_ == nullptr) return false;
  AINFO << "CarStatusWriter init: every " << GetInterval() << " ms on "
        << config_.driver_channel();
  return true;
}

bool CarStatusWriter::Proc() {
  auto out = std::make_shared<Driver>();
  out->set_content(config_.content());
  out->set_msg_id(++msg_id_);
  out->set_timestamp(Time::Now().ToNanosecond());
  return driver_writer_->Write(out);
}

void CarStatusWriter::Clear() {
  AINFO << "CarStatusWriter: " << msg_id_ << " driver messages written, "
        << fused_seen_.load() << " fused statuses received";
}

CYBER_REGISTER_COMPONENT(CarStatusWriter)

}  // namespace compat
}  // namespace examples
}  // namespace cyber
