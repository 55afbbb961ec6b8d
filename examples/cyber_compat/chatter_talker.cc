#include "examples/cyber_compat/chatter_talker.h"

#include <chrono>
#include <utility>

#include "cyber/common/log.h"
#include "cyber/task/task.h"
#include "cyber/time/rate.h"
#include "cyber/time/time.h"
#include "scheduler/scheduler_factory.h"

namespace cyber {
namespace examples {
namespace compat {

using cyber::Rate;
using cyber::Time;

bool ChatterTalker::Init() {
  if (!GetProtoConfig(&config_)) return false;
  chatter_writer_ = node_->CreateWriter<Chatter>(config_.chatter_channel());
  if (chatter_writer_ == nullptr) return false;
  task_name_ = node_->name() + "_talk";
  auto ended = std::make_shared<std::promise<void>>();
  loop_ended_ = ended->get_future();
  // The task runs until Clear() removes it: RemoveTask cancels it at its
  // next suspension point (the Rate's Sleep), which unwinds the loop.
  return scheduler::Instance()->CreateTask(
      [this, ended] {
        struct Ended {
          std::shared_ptr<std::promise<void>> promise;
          ~Ended() { promise->set_value(); }
        } signal{ended};
        TalkLoop();
      },
      task_name_);
}

void ChatterTalker::TalkLoop() {
  Rate rate(config_.chatter_hz());
  while (true) {
    auto chatter = std::make_shared<Chatter>();
    chatter->set_timestamp(Time::Now().ToNanosecond());
    chatter->set_seq(++chatter_seq_);
    chatter->set_content("driver " + std::to_string(last_driver_id_.load()));
    chatter_writer_->Write(chatter);
    cyber::Yield();  // let the readers' routines run first
    rate.Sleep();
  }
}

bool ChatterTalker::Proc(const std::shared_ptr<Driver>& driver) {
  last_driver_id_.store(driver->msg_id());
  cyber::USleep(100);  // "work": parks this routine for 100 us
  cyber::SleepFor(std::chrono::microseconds(100));
  return true;
}

void ChatterTalker::Clear() {
  // (No task if Init() failed before creating it.)
  if (loop_ended_.valid() && scheduler::Instance()->RemoveTask(task_name_)) {
    loop_ended_.wait();
  }
  AINFO << "ChatterTalker: " << chatter_seq_.load() << " chatter messages written";
}

CYBER_REGISTER_COMPONENT(ChatterTalker)

}  // namespace compat
}  // namespace examples
}  // namespace cyber
