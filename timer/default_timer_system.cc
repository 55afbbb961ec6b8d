#include "timer/default_timer_system.h"

#include <mutex>

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
DefaultSystem* g_system = nullptr;  // guarded by g_mu; never deleted

}  // namespace

TickDriver* DefaultTickDriver() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_system == nullptr || g_system->driver.is_shut_down()) {
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
