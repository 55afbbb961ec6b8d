#include "cyber/common/runtime_scope.h"

namespace cyber {

namespace {
std::atomic<ProcessRuntimeMaker> g_maker{nullptr};
std::atomic<const timer::TimerSystemCore*> g_process_timers{nullptr};
}  // namespace

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

namespace {

std::shared_ptr<const RuntimeScope> MakeProcessScope() {
  const ProcessRuntimeMaker maker = g_maker.load(std::memory_order_acquire);
  return maker != nullptr ? maker() : nullptr;
}

}  // namespace

const RuntimeScope* RuntimeRef::ProcessScope() const {
  if (process_ == nullptr) process_ = MakeProcessScope();
  return process_.get();
}

RuntimeRef CurrentRuntime() {
  if (const RuntimeScope* installed = CurrentRuntimeScope()) {
    return RuntimeRef(installed, nullptr);
  }
  return ProcessRuntimeScope();
}

RuntimeRef ProcessRuntimeScope() { return RuntimeRef(nullptr, MakeProcessScope()); }

const timer::TimerSystemCore* CurrentTimerSystemHint() {
  if (const RuntimeScope* installed = CurrentRuntimeScope()) {
    return installed->timers.load(std::memory_order_acquire);
  }
  return g_process_timers.load(std::memory_order_acquire);
}

void SetProcessRuntimeMaker(ProcessRuntimeMaker maker) {
  g_maker.store(maker, std::memory_order_release);
}

void PublishProcessTimerSystem(const timer::TimerSystemCore* timers) {
  g_process_timers.store(timers, std::memory_order_release);
}

}  // namespace cyber
