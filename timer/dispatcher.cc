#include "timer/dispatcher.h"

namespace cyber {
namespace timer {

namespace {
// One per thread: its address names the thread.
thread_local char t_thread_token;
}  // namespace

const void* Dispatcher::CurrentExecution() const { return &t_thread_token; }

}  // namespace timer
}  // namespace cyber
