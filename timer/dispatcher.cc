#include "timer/dispatcher.h"

namespace cyber {
namespace timer {

int Dispatcher::PriorityFor(const std::string& /*name*/) const { return 0; }

}  // namespace timer
}  // namespace cyber
