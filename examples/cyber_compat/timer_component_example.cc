// A timer component written the way Cyber RT's timer component example is
// (class TimerComponentSample, Init() and Proc()), built as a shared library
// that the plain mainboard loads through the graph's module_library. Only
// the include paths and namespace differ from code written for Cyber RT.

#include <atomic>

#include "cyber/common/log.h"
#include "cyber/component/component_registry.h"
#include "cyber/component/timer_component.h"

using cyber::TimerComponent;

class TimerComponentSample : public TimerComponent {
 public:
  bool Init() override {
    AINFO << "TimerComponentSample init, interval " << GetInterval() << " ms";
    return true;
  }
  bool Proc() override {
    if (++count_ % 100 == 1) AINFO << "TimerComponentSample proc " << count_;
    return true;
  }

 private:
  std::atomic<int> count_{0};
};

CYBER_REGISTER_COMPONENT(TimerComponentSample)
