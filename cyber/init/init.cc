#include "cyber/init/init.h"

#include <errno.h>
#include <semaphore.h>
#include <signal.h>
#include <string.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <memory>
#include <string>
#include <utility>

#include "cyber/common/log.h"
#include "gflags/gflags.h"
#include "cyber/runtime/process_runtime.h"

namespace cyber {

namespace {

// Signal-handler-visible state: a lock-free atomic and a POSIX semaphore
// (sem_post is async-signal-safe); nothing else is touched in the handler.
std::atomic<int> g_state{static_cast<int>(State::kUninitialized)};
static_assert(std::atomic<int>::is_always_lock_free,
              "the signal handler needs a lock-free state");
sem_t g_shutdown_requested;

// Serializes Init()/Shutdown() themselves (never taken in a handler).
std::mutex g_init_mu;

// The graph announcer Init() starts, and what it announces besides the
// bus (mainboard's statistics); their own lock, so that stopping the
// announcer (which waits for a status being built) holds no other.
std::mutex g_announce_mu;
std::unique_ptr<graph::GraphAnnouncer> g_announcer;  // guarded by g_announce_mu
graph::RuntimeAnnounceOptions g_announce_options = [] {  // guarded by g_announce_mu
  graph::RuntimeAnnounceOptions o;
  o.announcer.wait_until_linked = true;
  return o;
}();

void StartAnnouncing() {
  Runtime* runtime = ProcessRuntime();
  if (runtime == nullptr || runtime->remote() == nullptr) return;  // in-process only
  std::unique_ptr<graph::GraphAnnouncer> replaced;
  std::lock_guard<std::mutex> lock(g_announce_mu);
  absl::StatusOr<std::unique_ptr<graph::GraphAnnouncer>> started =
      graph::AnnounceRuntime(*runtime, g_announce_options);
  if (!started.ok()) {
    AINFO << "cyber::Init: the tools cannot see this process: " << started.status().message();
    return;
  }
  replaced = std::exchange(g_announcer, *std::move(started));
}
bool g_semaphore_ready = false;       // guarded by g_init_mu
bool g_handlers_installed = false;    // guarded by g_init_mu
struct sigaction g_old_sigint;        // guarded by g_init_mu
struct sigaction g_old_sigterm;       // guarded by g_init_mu

constexpr int kHandledSignals[] = {SIGINT, SIGTERM};

void OnStopSignal(int signo) {
  int expected = static_cast<int>(State::kInitialized);
  if (g_state.compare_exchange_strong(
          expected, static_cast<int>(State::kShuttingDown))) {
    sem_post(&g_shutdown_requested);
    return;
  }
  // Already stopping (or stopped): the user insists, so die the default way.
  signal(signo, SIG_DFL);
  raise(signo);
}

void InstallHandlers() {
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = OnStopSignal;
  sigemptyset(&sa.sa_mask);
  for (int signo : kHandledSignals) sigaddset(&sa.sa_mask, signo);
  sa.sa_flags = SA_RESTART;
  ACHECK(sigaction(SIGINT, &sa, &g_old_sigint) == 0);
  ACHECK(sigaction(SIGTERM, &sa, &g_old_sigterm) == 0);
  g_handlers_installed = true;
  // cyber_launch starts its processes with SIGINT and SIGTERM blocked
  // (cyber/launch/child_process.cc), so a stop that comes during start-up
  // waits here instead of killing a process that could not yet say what
  // it did; it is taken now, by the handler. Threads made before this
  // keep them blocked, so the handler runs on this thread.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  for (int signo : kHandledSignals) sigaddset(&stop_signals, signo);
  ACHECK(pthread_sigmask(SIG_UNBLOCK, &stop_signals, nullptr) == 0);
}

// Whether the user chose where glog writes (see InitLogging in init.h).
bool LogDestinationChosen() {
  for (const char* flag :
       {"logtostderr", "alsologtostderr", "log_dir", "stderrthreshold"}) {
    // glog takes a flag's default from its GLOG_ variable, so a value set
    // that way looks like a default to gflags: ask the environment too.
    if (std::getenv((std::string("GLOG_") + flag).c_str()) != nullptr) return true;
    gflags::CommandLineFlagInfo info;
    if (gflags::GetCommandLineFlagInfo(flag, &info) && !info.is_default) return true;
  }
  return false;
}

bool BadBinaryName(const char* function, const char* binary_name) {
  if (binary_name != nullptr && binary_name[0] != '\0') return false;
  AERROR << function << ": binary_name is "
         << (binary_name == nullptr ? "null" : "empty") << "; pass argv[0]";
  return true;
}

// REQUIRES: g_init_mu held; binary_name non-empty.
void InitLoggingLocked(const char* binary_name) {
  // Written only when it differs: glog's threads read the flag without a
  // lock, and an Init after Shutdown finds it set already.
  if (!LogDestinationChosen() && !FLAGS_logtostderr) {
    // As a new default, not a setting: the flag still reads as not chosen,
    // so the next call (Init after Shutdown) decides the same way.
    if (gflags::SetCommandLineOptionWithMode("logtostderr", "true",
                                             gflags::SET_FLAGS_DEFAULT)
            .empty()) {
      FLAGS_logtostderr = true;  // glog built without gflags
    }
  }
  if (!google::IsGoogleLoggingInitialized()) {
    google::InitGoogleLogging(binary_name);
  }
}

void RestoreHandlers() {
  if (!g_handlers_installed) return;
  ACHECK(sigaction(SIGINT, &g_old_sigint, nullptr) == 0);
  ACHECK(sigaction(SIGTERM, &g_old_sigterm, nullptr) == 0);
  g_handlers_installed = false;
}

}  // namespace

std::ostream& operator<<(std::ostream& os, State state) {
  switch (state) {
    case State::kUninitialized:
      return os << "uninitialized";
    case State::kInitialized:
      return os << "initialized";
    case State::kShuttingDown:
      return os << "shutting down";
    case State::kShutDown:
      return os << "shut down";
  }
  return os << "unknown state " << static_cast<int>(state);
}

bool InitLogging(const char* binary_name) {
  if (BadBinaryName("cyber::InitLogging", binary_name)) return false;
  std::lock_guard<std::mutex> lock(g_init_mu);
  InitLoggingLocked(binary_name);
  return true;
}

bool Init(const char* binary_name) {
  if (BadBinaryName("cyber::Init", binary_name)) return false;
  std::lock_guard<std::mutex> lock(g_init_mu);
  if (GetState() == State::kInitialized) return true;
  InitLoggingLocked(binary_name);
  if (!g_semaphore_ready) {
    ACHECK(sem_init(&g_shutdown_requested, 0, 0) == 0);
    g_semaphore_ready = true;
  } else {
    // A new run after an earlier Shutdown(): forget its wake-ups.
    while (sem_trywait(&g_shutdown_requested) == 0) {
    }
  }
  // The process runtime (made here, or kept if an Async or a Node
  // made it before Init): timer callbacks run as its scheduler's coroutines
  // and SleepFor arms its wheel. A Timer binds to the process timer system
  // when it starts, so every timer started from now on runs there, however
  // early it was constructed.
  StartProcessRuntime();
  StartAnnouncing();
  g_state.store(static_cast<int>(State::kInitialized));
  InstallHandlers();
  AINFO << "cyber::Init: " << binary_name << " initialized";
  return true;
}

void SetAnnounceOptions(graph::RuntimeAnnounceOptions options) {
  std::lock_guard<std::mutex> lock(g_announce_mu);
  g_announce_options = std::move(options);
}

void StopAnnouncing() {
  std::unique_ptr<graph::GraphAnnouncer> stopped;
  {
    std::lock_guard<std::mutex> lock(g_announce_mu);
    stopped = std::move(g_announcer);
  }
  // Destroyed here, outside the lock: it waits for a status being built.
}

void Shutdown() {
  StopAnnouncing();
  std::lock_guard<std::mutex> lock(g_init_mu);
  const State state = GetState();
  if (state == State::kUninitialized || state == State::kShutDown) return;
  g_state.store(static_cast<int>(State::kShuttingDown));
  // Ordered: timers first (no new callbacks), then the scheduler that runs
  // them (cancels and drains its routines, joins its processors).
  ShutdownProcessRuntime();
  RestoreHandlers();
  g_state.store(static_cast<int>(State::kShutDown));
  sem_post(&g_shutdown_requested);  // release WaitForShutdown()
  AINFO << "cyber::Shutdown: done";
}

void AsyncShutdown() {
  int expected = static_cast<int>(State::kInitialized);
  if (g_state.compare_exchange_strong(
          expected, static_cast<int>(State::kShuttingDown))) {
    sem_post(&g_shutdown_requested);
  }
}

bool OK() { return GetState() == State::kInitialized; }

bool IsShutdown() {
  const State state = GetState();
  return state == State::kShuttingDown || state == State::kShutDown;
}

State GetState() { return static_cast<State>(g_state.load()); }

void WaitForShutdown() {
  {
    std::lock_guard<std::mutex> lock(g_init_mu);
    if (!g_semaphore_ready) return;  // never initialized
  }
  while (OK()) {
    if (sem_wait(&g_shutdown_requested) != 0) {
      ACHECK(errno == EINTR) << "sem_wait: " << strerror(errno);
      continue;
    }
    if (!OK()) {
      // Pass the wake-up on, so that every other waiter returns as well.
      sem_post(&g_shutdown_requested);
      return;
    }
    // A stale wake-up from an earlier run: keep waiting.
  }
}

}  // namespace cyber
