// ChatterTalker: a message component (Proc per Driver message) that also
// runs a long-lived task, the way Cyber RT modules do: created with
// scheduler::Instance()->CreateTask, paced by cyber::Rate, using
// cyber::Yield/USleep/SleepFor, removed with RemoveTask in Clear().
#ifndef EXAMPLES_CYBER_COMPAT_CHATTER_TALKER_H_
#define EXAMPLES_CYBER_COMPAT_CHATTER_TALKER_H_

#include <atomic>
#include <cstdint>
#include <future>
#include <memory>
#include <string>

#include "cyber/component/component.h"
#include "examples/cyber_compat/proto/compat_messages.pb.h"

namespace cyber {
namespace examples {
namespace compat {

class ChatterTalker : public cyber::Component<Driver> {
 public:
  bool Init() override;
  bool Proc(const std::shared_ptr<Driver>& driver) override;
  void Clear() override;

 private:
  void TalkLoop();

  CompatConfig config_;
  std::string task_name_;
  std::shared_ptr<cyber::Writer<Chatter>> chatter_writer_ = nullptr;
  std::future<void> loop_ended_;
  std::atomic<uint64_t> last_driver_id_{0};
  std::atomic<uint64_t> chatter_seq_{0};
};

}  // namespace compat
}  // namespace examples
}  // namespace cyber

#endif  // EXAMPLES_CYBER_COMPAT_CHATTER_TALKER_H_
