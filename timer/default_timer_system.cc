#include "timer/default_timer_system.h"

#include <memory>
#include <mutex>
#include <vector>

#include "cyber/time/steady_clock.h"
#include "timer/callback_executor.h"

namespace cyber {
namespace timer {

namespace {

struct DefaultSystem {
  // `dispatcher` null: run callbacks on an executor of our own.
  explicit DefaultSystem(Dispatcher* dispatcher)
      : executor(dispatcher == nullptr
                     ? std::make_unique<CallbackExecutor>(CallbackExecutor::Options{})
                     : nullptr),
        driver(SteadyClock::Get(),
               dispatcher == nullptr ? executor.get() : dispatcher) {}
  std::unique_ptr<CallbackExecutor> executor;
  TickDriver driver;
};

std::mutex g_mu;
// The current system and those retired by a shutdown, guarded by g_mu. They
// are never deleted: Timers made on a retired system keep a pointer to its
// driver (which refuses new arms) and must stay safe to stop and destroy.
DefaultSystem* g_system = nullptr;
std::vector<DefaultSystem*>* g_retired = new std::vector<DefaultSystem*>();
Dispatcher* g_dispatcher = nullptr;

}  // namespace

TickDriver* DefaultTickDriver() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_system == nullptr || g_system->driver.is_shut_down()) {
    if (g_system != nullptr) g_retired->push_back(g_system);
    g_system = new DefaultSystem(g_dispatcher);
  }
  return &g_system->driver;
}

void ShutdownDefaultTimerSystem() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_system == nullptr) return;
  // Tick thread first (no new expiries), then the callbacks already queued.
  g_system->driver.Shutdown();
  if (g_system->executor) g_system->executor->Shutdown();
}

void SetDefaultDispatcher(Dispatcher* dispatcher) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_dispatcher = dispatcher;
}

}  // namespace timer
}  // namespace cyber
