// DriverChatterFusion: a two-channel (fusion) component as Cyber RT writes
// one: Proc(chatter, driver) runs for each Chatter message with the latest
// Driver message, once both channels have delivered.
#ifndef EXAMPLES_CYBER_COMPAT_DRIVER_CHATTER_FUSION_H_
#define EXAMPLES_CYBER_COMPAT_DRIVER_CHATTER_FUSION_H_

#include <memory>

#include "cyber/component/component.h"
#include "examples/cyber_compat/proto/compat_messages.pb.h"

namespace cyber {
namespace examples {
namespace compat {

class DriverChatterFusion : public cyber::Component<Chatter, Driver> {
 public:
  bool Init() override;
  bool Proc(const std::shared_ptr<Chatter>& chatter,
            const std::shared_ptr<Driver>& driver) override;

 private:
  CompatConfig config_;
  std::shared_ptr<cyber::Writer<FusedStatus>> fused_writer_ = nullptr;
};

}  // namespace compat
}  // namespace examples
}  // namespace cyber

#endif  // EXAMPLES_CYBER_COMPAT_DRIVER_CHATTER_FUSION_H_
