#include "timer/default_timer_system.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <utility>

#include "cyber/common/log.h"
#include "cyber/time/steady_clock.h"
#include "timer/ambient_timer_system.h"
#include "timer/callback_executor.h"

namespace cyber {
namespace timer {

namespace {

// The fallback: a system of our own on the steady clock whose callbacks run
// on an executor of our own, for timers started before any process runtime
// exists.
struct FallbackSystem {
  FallbackSystem()
      : executor(CallbackExecutor::Options{}),
        driver(SteadyClock::Get(), &executor, DriverOptions()) {}
  ~FallbackSystem() {
    // Tick thread first (no new expiries), then the callbacks queued.
    driver.Shutdown();
    executor.Shutdown();
  }
  static TickDriver::Options DriverOptions() {
    TickDriver::Options o;
    o.name = "timer-fallback";
    return o;
  }
  CallbackExecutor executor;
  TickDriver driver;
};

enum class Stage { kNeverInstalled, kInstalled, kShutDown };

std::mutex g_mu;
Stage g_stage = Stage::kNeverInstalled;  // guarded by g_mu
// The driver new timers bind to (null when shut down): the installed one
// (the process runtime's), or the fallback's before any install.
TickDriver* g_current = nullptr;  // guarded by g_mu
// The installed system, held so that a shutdown can close it whatever
// happens to its driver's owner. Null when none is installed.
std::shared_ptr<TimerSystem>& g_installed =  // guarded by g_mu
    *new std::shared_ptr<TimerSystem>();
// The fallback, made at most once and kept (serving the timers started on
// it) until the next shutdown. The holders are never destroyed: no tick
// thread is torn down by static destruction at exit.
std::unique_ptr<FallbackSystem>& g_fallback =  // guarded by g_mu
    *new std::unique_ptr<FallbackSystem>();
// g_current's front end, written under g_mu, read without it (the hint).
std::atomic<const TimerSystem*> g_current_front{nullptr};
// The fallback's front end once made (never made again: the stage never
// returns to kNeverInstalled), and whether a timer on it was reported.
std::atomic<const TimerSystem*> g_fallback_front{nullptr};
std::atomic<bool> g_fallback_reported{false};

void SetCurrentLocked(TickDriver* driver) {
  g_current = driver;
  g_current_front.store(driver != nullptr ? driver->system().get() : nullptr,
                        std::memory_order_release);
}

TickDriver* CurrentLocked() {
  if (g_current == nullptr && g_stage == Stage::kNeverInstalled) {
    g_fallback = std::make_unique<FallbackSystem>();
    SetCurrentLocked(&g_fallback->driver);
    g_fallback_front.store(g_current->system().get(),
                           std::memory_order_release);
  }
  return g_current;
}

}  // namespace

std::shared_ptr<TimerSystem> DefaultTimerFrontEnd() {
  if (std::shared_ptr<TimerSystem> ambient = AmbientTimerFrontEnd()) {
    return ambient;
  }
  std::lock_guard<std::mutex> lock(g_mu);
  TickDriver* driver = CurrentLocked();
  return driver != nullptr ? driver->system() : nullptr;
}

const TimerSystem* DefaultTimerFrontEndHint() {
  if (const TimerSystem* ambient = AmbientTimerFrontEndPointer()) {
    return ambient;
  }
  return g_current_front.load(std::memory_order_acquire);
}

void NoteDefaultTimerStart(const TimerSystem* front,
                           absl::FunctionRef<std::string()> timer_name) {
  if (front == nullptr || g_fallback_reported.load(std::memory_order_relaxed) ||
      front != g_fallback_front.load(std::memory_order_acquire)) {
    return;
  }
  if (g_fallback_reported.exchange(true)) return;  // another thread said it
  AWARN << "timer \"" << timer_name()
        << "\": no scheduler is wired (cyber::Init was not called), so timer "
           "callbacks run on the fallback thread pool ("
        << CallbackExecutor::Options{}.threads
        << " threads, in FIFO order): scheduler conf priorities, groups and CPU "
           "affinity do not apply. Call cyber::Init(argv[0]) before starting "
           "timers to run them on the scheduler (said once per process)";
}

TickDriver* DefaultTickDriver() {
  std::lock_guard<std::mutex> lock(g_mu);
  return CurrentLocked();
}

void InstallDefaultTimerSystem(TickDriver* driver) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_installed = driver->system();
  SetCurrentLocked(driver);
  g_stage = Stage::kInstalled;
}

void ShutdownDefaultTimerSystem() {
  std::shared_ptr<TimerSystem> installed;
  std::unique_ptr<FallbackSystem> fallback;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    g_stage = Stage::kShutDown;
    SetCurrentLocked(nullptr);
    installed = std::move(g_installed);
    fallback = std::move(g_fallback);
  }
  // Outside g_mu: joins threads, may wait for callbacks.
  if (installed != nullptr) installed->Shutdown();
  fallback.reset();
}

}  // namespace timer
}  // namespace cyber
