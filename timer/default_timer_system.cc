#include "timer/default_timer_system.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "cyber/common/log.h"
#include "cyber/time/steady_clock.h"
#include "timer/ambient_timer_system.h"
#include "timer/callback_executor.h"

namespace cyber {
namespace timer {

namespace {

struct ProcessSystem {
  // `dispatcher` null: run callbacks on an executor of our own.
  explicit ProcessSystem(Dispatcher* dispatcher, const char* name)
      : executor(dispatcher == nullptr ? std::make_unique<CallbackExecutor>(
                                             CallbackExecutor::Options{})
                                       : nullptr),
        driver(SteadyClock::Get(),
               dispatcher == nullptr ? executor.get() : dispatcher,
               Options(name)) {}
  ~ProcessSystem() {
    // Tick thread first (no new expiries), then the callbacks queued.
    driver.Shutdown();
    if (executor) executor->Shutdown();
  }
  static TickDriver::Options Options(const char* name) {
    TickDriver::Options o;
    o.name = name;
    return o;
  }
  std::unique_ptr<CallbackExecutor> executor;
  TickDriver driver;
};

enum class Stage { kNeverInstalled, kInstalled, kShutDown };

std::mutex g_mu;
Stage g_stage = Stage::kNeverInstalled;  // guarded by g_mu
// The system new timers bind to (null when shut down), and every system
// made since the last shutdown (the fallback keeps serving its timers).
ProcessSystem* g_current = nullptr;                                // g_mu
std::vector<std::unique_ptr<ProcessSystem>>* g_systems =           // g_mu
    new std::vector<std::unique_ptr<ProcessSystem>>();
// g_current's front end, written under g_mu, read without it (the hint).
std::atomic<const TimerSystem*> g_current_front{nullptr};
// The fallback's front end once made (never made again: the stage never
// returns to kNeverInstalled), and whether a timer on it was reported.
std::atomic<const TimerSystem*> g_fallback_front{nullptr};
std::atomic<bool> g_fallback_reported{false};

void SetCurrentLocked(ProcessSystem* system) {
  g_current = system;
  g_current_front.store(system != nullptr ? system->driver.system().get()
                                          : nullptr,
                        std::memory_order_release);
}

ProcessSystem* CurrentLocked() {
  if (g_current == nullptr && g_stage == Stage::kNeverInstalled) {
    g_systems->push_back(std::make_unique<ProcessSystem>(nullptr, "timer-fallback"));
    SetCurrentLocked(g_systems->back().get());
    g_fallback_front.store(g_current->driver.system().get(),
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
  ProcessSystem* s = CurrentLocked();
  return s != nullptr ? s->driver.system() : nullptr;
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
  ProcessSystem* s = CurrentLocked();
  return s != nullptr ? &s->driver : nullptr;
}

TickDriver* InstallDefaultTimerSystem(Dispatcher* dispatcher) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_systems->push_back(std::make_unique<ProcessSystem>(dispatcher, "timer-tick"));
  SetCurrentLocked(g_systems->back().get());
  g_stage = Stage::kInstalled;
  return &g_current->driver;
}

void ShutdownDefaultTimerSystem() {
  std::vector<std::unique_ptr<ProcessSystem>> systems;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    g_stage = Stage::kShutDown;
    SetCurrentLocked(nullptr);
    systems.swap(*g_systems);
  }
  systems.clear();  // outside g_mu: joins threads, may wait for callbacks
}

}  // namespace timer
}  // namespace cyber
