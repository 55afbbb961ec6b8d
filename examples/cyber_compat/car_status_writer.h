// CarStatusWriter: a timer component written as Cyber RT code is (node_,
// CreateWriter/CreateReader returning shared_ptr, GetProtoConfig,
// cyber::Time). It publishes a Driver message every `interval` and counts
// the fused status it gets back.
#ifndef EXAMPLES_CYBER_COMPAT_CAR_STATUS_WRITER_H_
#define EXAMPLES_CYBER_COMPAT_CAR_STATUS_WRITER_H_

#include <atomic>
#include <cstdint>
#include <memory>

#include "cyber/component/component.h"
#include "cyber/component/timer_component.h"
#include "examples/cyber_compat/proto/compat_messages.pb.h"

namespace cyber {
namespace examples {
namespace compat {

class CarStatusWriter : public cyber::TimerComponent {
 public:
  bool Init() override;
  bool Proc() override;
  void Clear() override;

 private:
  CompatConfig config_;
  std::shared_ptr<cyber::Writer<Driver>> driver_writer_ = nullptr;
  std::shared_ptr<cyber::Reader<FusedStatus>> fused_reader_ = nullptr;
  uint64_t msg_id_ = 0;
  std::atomic<uint64_t> fused_seen_{0};
};

}  // namespace compat
}  // namespace examples
}  // namespace cyber

#endif  // EXAMPLES_CYBER_COMPAT_CAR_STATUS_WRITER_H_
