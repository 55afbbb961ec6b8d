#include "timer/default_timer_system.h"

#include <mutex>
#include <vector>

#include "cyber/time/steady_clock.h"
#include "timer/callback_executor.h"

namespace cyber {
namespace timer {

namespace {

struct DefaultSystem {
  CallbackExecutor executor{CallbackExecutor::Options{}};
  TickDriver driver{SteadyClock::Get(), &executor};
};

std::mutex g_mu;
// The current system and those retired by a shutdown, guarded by g_mu. They
// are never deleted: Timers made on a retired system keep a pointer to its
// driver (which refuses new arms) and must stay safe to stop and destroy.
DefaultSystem* g_system = nullptr;
std::vector<DefaultSystem*>* g_retired = new std::vector<DefaultSystem*>();

}  // namespace

TickDriver* DefaultTickDriver() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_system == nullptr || g_system->driver.is_shut_down()) {
    if (g_system != nullptr) g_retired->push_back(g_system);
    g_system = new DefaultSystem();
  }
  return &g_system->driver;
}

void ShutdownDefaultTimerSystem() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_system == nullptr) return;
  // Tick thread first (no new expiries), then the callbacks already queued.
  g_system->driver.Shutdown();
  g_system->executor.Shutdown();
}

}  // namespace timer
}  // namespace cyber
