#include "cyber/runtime/runtime_scope.h"

namespace cyber {

using runtime_internal::t_scope;

// Not inline: a routine may resume on another thread, and the thread_local
// must be looked up afresh on every call, never cached across a switch.
__attribute__((noinline)) const RuntimeScope* CurrentRuntimeScope() {
  return t_scope;
}

ScopedRuntime::ScopedRuntime(const RuntimeScope* scope) : previous_(t_scope) {
  t_scope = scope;
}

ScopedRuntime::~ScopedRuntime() { t_scope = previous_; }

}  // namespace cyber
