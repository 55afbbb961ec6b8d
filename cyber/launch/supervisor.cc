#include "cyber/launch/supervisor.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cyber/launch/child_process.h"

namespace cyber {
namespace launch {

struct Supervisor::Process {
  const ProcessPlan* plan = nullptr;
  ProcessRecord record;
  int pidfd = -1;
  SteadyTime respawn_at;
  bool stop_sent = false;  // our stop signal(s) went to the current pid
};

namespace {

std::chrono::steady_clock::duration ToChrono(absl::Duration d) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      absl::ToChronoNanoseconds(d));
}

const char* SignalName(int s) {
  switch (s) {
    case SIGINT: return "INT";
    case SIGTERM: return "TERM";
    case SIGKILL: return "KILL";
    default: return "?";
  }
}

}  // namespace

Supervisor::Supervisor(LaunchPlan plan, Options options)
    : plan_(std::move(plan)), options_(std::move(options)) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) == 0) {
    wake_read_ = fds[0];
    wake_write_ = fds[1];
  }
  for (const ProcessPlan& p : plan_.processes) {
    Process process;
    process.plan = &p;
    process.record.name = p.name;
    process.record.respawn_limit = p.respawn_limit;
    process.record.log_path = absl::StrCat(options_.log_dir, "/", p.name, ".log");
    processes_.push_back(std::move(process));
  }
  MutexLock lock(&mu_);
  for (const Process& p : processes_) published_.push_back(p.record);
}

Supervisor::~Supervisor() {
  if (wake_read_ >= 0) close(wake_read_);
  if (wake_write_ >= 0) close(wake_write_);
  for (Process& p : processes_) {
    if (p.pidfd >= 0) close(p.pidfd);
  }
}

void Supervisor::RequestStop() {
  stop_requested_.store(true);
  if (wake_write_ >= 0) {
    const char c = 's';
    ssize_t ignored = write(wake_write_, &c, 1);
    (void)ignored;
  }
}

std::vector<ProcessRecord> Supervisor::Snapshot() const {
  MutexLock lock(&mu_);
  return published_;
}

void Supervisor::Publish(const Process& p) {
  MutexLock lock(&mu_);
  for (ProcessRecord& r : published_) {
    if (r.name == p.record.name) r = p.record;
  }
}

void Supervisor::Report(const std::string& line) {
  if (options_.report) {
    options_.report(line);
  } else {
    std::fprintf(stderr, "%s\n", line.c_str());
    std::fflush(stderr);
  }
}

absl::Duration Supervisor::SinceStart() const {
  return absl::FromChrono(std::chrono::steady_clock::now() - run_start_);
}

bool Supervisor::ConditionsHold(const Process& p) {
  if (p.plan->start_after.empty() && p.plan->wait_for_writer.empty()) return true;
  if (options_.readiness == nullptr) return false;  // Run() refuses such a plan
  for (const std::string& name : p.plan->start_after) {
    for (const Process& q : processes_) {
      if (q.record.name != name) continue;
      if (q.record.pid == 0 || !options_.readiness->ProcessUp(name, q.record.pid)) return false;
    }
  }
  for (const std::string& channel : p.plan->wait_for_writer) {
    if (!options_.readiness->ChannelHasWriter(channel)) return false;
  }
  return true;
}

// The start_after process of `p` that is down for good (exited, no
// respawn pending), or "".
std::string Supervisor::DownForGood(const Process& p) const {
  for (const std::string& name : p.plan->start_after) {
    for (const Process& q : processes_) {
      if (q.record.name == name && q.record.state == ProcessRecord::State::kDown) return name;
    }
  }
  return "";
}

// What `p` still waits for, for the ready_timeout message.
std::string Supervisor::Pending(const Process& p) {
  std::vector<std::string> missing;
  for (const std::string& name : p.plan->start_after) {
    for (const Process& q : processes_) {
      if (q.record.name != name) continue;
      if (q.record.pid == 0) {
        missing.push_back(absl::StrCat("process \"", name, "\" is not running"));
      } else if (options_.readiness == nullptr ||
                 !options_.readiness->ProcessUp(name, q.record.pid)) {
        missing.push_back(absl::StrCat("process \"", name, "\" (pid ", q.record.pid,
                                       ") has not announced its components"));
      }
    }
  }
  for (const std::string& channel : p.plan->wait_for_writer) {
    if (options_.readiness == nullptr || !options_.readiness->ChannelHasWriter(channel)) {
      missing.push_back(absl::StrCat("channel ", channel, " has no writer"));
    }
  }
  return absl::StrJoin(missing, "; ");
}

void Supervisor::Start(Process& p) {
  const std::vector<std::string> argv = options_.command(*p.plan);
  const int n = p.record.starts + 1;
  {
    std::ofstream log(p.record.log_path, std::ios::app);
    log << "cyber_launch: start " << n << " of " << p.record.name << " at "
        << absl::FormatTime(absl::Now(), absl::LocalTimeZone()) << ": "
        << absl::StrJoin(argv, " ") << "\n";
  }
  absl::StatusOr<SpawnedChild> child = SpawnChild(argv, p.record.log_path, options_.stop_signals_wait_for_init);
  p.record.starts = n;
  if (!child.ok()) {
    p.record.state = ProcessRecord::State::kDown;
    p.record.failure = std::string(child.status().message());
    Publish(p);
    Report(absl::StrCat("cyber_launch: ", p.record.name, " could not start: ", p.record.failure));
    BeginStop(absl::StrCat("process \"", p.record.name, "\" could not start: ", p.record.failure), 1);
    return;
  }
  p.record.pid = child->pid;
  p.pidfd = child->pidfd;
  p.stop_sent = false;
  p.record.state = ProcessRecord::State::kRunning;
  p.record.last_start = SinceStart();
  if (n == 1) start_order_.push_back(static_cast<size_t>(&p - processes_.data()));
  Publish(p);
  Report(absl::StrCat("cyber_launch: started ", p.record.name, " (pid ", child->pid,
                      n > 1 ? absl::StrCat(", respawn ", p.record.respawns, "/",
                                           p.record.respawn_limit)
                            : std::string(),
                      "): ", absl::StrJoin(argv, " ")));
}

void Supervisor::Reap() {
  for (Process& p : processes_) {
    if (p.record.pid == 0) continue;
    int status = 0;
    pid_t r;
    do {
      r = waitpid(p.record.pid, &status, WNOHANG);
    } while (r < 0 && errno == EINTR);
    if (r == p.record.pid) OnExit(p, status);
  }
}

void Supervisor::OnExit(Process& p, int wait_status) {
  const pid_t pid = p.record.pid;
  if (p.pidfd >= 0) close(p.pidfd);
  p.pidfd = -1;
  p.record.pid = 0;
  p.record.last_wait_status = wait_status;
  p.record.last_exit = SinceStart();
  p.record.state = ProcessRecord::State::kDown;
  const std::string how = DescribeWaitStatus(wait_status);
  if (stopping_ || p.stop_sent) {
    Publish(p);
    Report(absl::StrCat("cyber_launch: ", p.record.name, " (pid ", pid, ") stopped: ", how));
    return;
  }
  const bool clean = CleanExit(wait_status);
  const ProcessPlan& plan = *p.plan;
  std::string what = absl::StrCat("cyber_launch: ", p.record.name, " (pid ", pid, ") exited: ", how);
  if (plan.exception_handler == ExceptionHandler::kRespawn &&
      (!clean || plan.respawn_on == RespawnOn::kAlways)) {
    if (p.record.respawns < plan.respawn_limit) {
      ++p.record.respawns;
      p.record.state = ProcessRecord::State::kRespawnPending;
      p.respawn_at = std::chrono::steady_clock::now() + ToChrono(plan.respawn_delay);
      Publish(p);
      Report(absl::StrCat(what, "; respawn ", p.record.respawns, "/", plan.respawn_limit, " in ",
                          absl::FormatDuration(plan.respawn_delay)));
      return;
    }
    p.record.respawn_limit_reached = true;
    absl::StrAppend(&what, "; respawn limit ", plan.respawn_limit, " reached, it stays down");
  } else if (plan.exception_handler == ExceptionHandler::kRespawn) {
    absl::StrAppend(&what, "; a clean exit is not respawned (respawn_on failure)");
  }
  Publish(p);
  Report(what);
  if (plan.required) {
    BeginStop(absl::StrCat("required process \"", p.record.name, "\" exited (", how, ")",
                           p.record.respawn_limit_reached ? " after its respawn limit" : ""),
              clean && !p.record.respawn_limit_reached ? 0 : 1);
  } else if (plan.exception_handler == ExceptionHandler::kExit && !clean) {
    BeginStop(absl::StrCat("process \"", p.record.name, "\" failed (", how,
                           ") and its exception_handler is exit"),
              1);
  }
}

void Supervisor::BeginStop(const std::string& reason, int exit_code) {
  if (stopping_) return;
  stopping_ = true;
  end_reason_ = reason;
  exit_code_ = exit_code;
  stop_began_ = std::chrono::steady_clock::now();
  stop_stage_ = 1;
  Report(absl::StrCat("cyber_launch: stopping (", reason, "): SIGINT to each process, ",
                      "SIGTERM after ", absl::FormatDuration(options_.sigint_timeout),
                      ", SIGKILL ", absl::FormatDuration(options_.sigterm_timeout), " later"));
  for (Process& p : processes_) {
    if (p.record.state != ProcessRecord::State::kRunning) {
      p.record.state = ProcessRecord::State::kDown;
      Publish(p);
    }
  }
  for (auto it = start_order_.rbegin(); it != start_order_.rend(); ++it) {
    Process& p = processes_[*it];
    if (p.record.pid == 0) continue;
    Report(absl::StrCat("cyber_launch: SIGINT to ", p.record.name, " (pid ", p.record.pid, ")"));
    kill(p.record.pid, SIGINT);
    p.stop_sent = true;
    p.record.stop_signals = "INT";
    Publish(p);
  }
}

void Supervisor::Escalate() {
  const auto now = std::chrono::steady_clock::now();
  int signal = 0;
  if (stop_stage_ == 1 && now >= stop_began_ + ToChrono(options_.sigint_timeout)) {
    signal = SIGTERM;
    stop_stage_ = 2;
  } else if (stop_stage_ == 2 && now >= stop_began_ + ToChrono(options_.sigint_timeout) +
                                            ToChrono(options_.sigterm_timeout)) {
    signal = SIGKILL;
    stop_stage_ = 3;
  }
  if (signal == 0) return;
  for (auto it = start_order_.rbegin(); it != start_order_.rend(); ++it) {
    Process& p = processes_[*it];
    if (p.record.pid == 0) continue;
    Report(absl::StrCat("cyber_launch: ", p.record.name, " (pid ", p.record.pid,
                        ") still running: SIG", SignalName(signal)));
    kill(p.record.pid, signal);
    absl::StrAppend(&p.record.stop_signals, ", ", SignalName(signal));
    Publish(p);
  }
}

void Supervisor::WaitForEvent(SteadyTime next_deadline, bool poll_readiness) {
  std::vector<pollfd> fds;
  bool every_child_polled = true;
  if (wake_read_ >= 0) fds.push_back({wake_read_, POLLIN, 0});
  for (const Process& p : processes_) {
    if (p.record.pid == 0) continue;
    if (p.pidfd >= 0) {
      fds.push_back({p.pidfd, POLLIN, 0});
    } else {
      every_child_polled = false;
    }
  }
  auto wait = next_deadline - std::chrono::steady_clock::now();
  // Without a pidfd, a child's exit is looked for every 20 ms.
  const auto cap = poll_readiness ? ToChrono(kReadinessPoll)
                                  : every_child_polled && wake_read_ >= 0
                                        ? ToChrono(absl::Seconds(1))
                                        : ToChrono(absl::Milliseconds(20));
  wait = std::min(wait, cap);
  const int ms = static_cast<int>(
      std::max<int64_t>(0, std::chrono::duration_cast<std::chrono::milliseconds>(wait).count() + 1));
  const int r = poll(fds.data(), fds.size(), ms);
  if (r > 0 && wake_read_ >= 0 && (fds[0].revents & POLLIN)) {
    char buf[64];
    while (read(wake_read_, buf, sizeof(buf)) > 0) {
    }
  }
}

LaunchOutcome Supervisor::Run() {
  run_start_ = std::chrono::steady_clock::now();
  for (const Process& p : processes_) {
    if (options_.readiness == nullptr &&
        (!p.plan->start_after.empty() || !p.plan->wait_for_writer.empty())) {
      BeginStop(absl::StrCat("process \"", p.record.name, "\" (", p.plan->where,
                             ") waits for readiness, but the launcher has no way to look "
                             "(no Readiness given)"),
                1);
    }
  }
  for (;;) {
    if (stop_requested_.load() && !stopping_) BeginStop("stop requested", 0);
    Reap();
    const auto now = std::chrono::steady_clock::now();
    auto next = now + ToChrono(absl::Hours(1));
    bool waiting_for_readiness = false;
    if (!stopping_) {
      for (Process& p : processes_) {
        if (stopping_) break;
        if (p.record.state == ProcessRecord::State::kWaiting) {
          const std::string gone = DownForGood(p);
          if (!gone.empty()) {
            p.record.state = ProcessRecord::State::kDown;
            p.record.failure = absl::StrCat("waits for process \"", gone,
                                            "\", which is down and will not be respawned");
            Publish(p);
            BeginStop(absl::StrCat("process \"", p.record.name, "\" was never started: ",
                                   p.record.failure),
                      1);
          } else if (ConditionsHold(p)) {
            Start(p);
          } else if (now >= run_start_ + ToChrono(p.plan->ready_timeout)) {
            const std::string pending = Pending(p);
            p.record.state = ProcessRecord::State::kDown;
            p.record.failure = absl::StrCat("not ready within ready_timeout ",
                                            absl::FormatDuration(p.plan->ready_timeout), ": ",
                                            pending);
            Publish(p);
            BeginStop(absl::StrCat("process \"", p.record.name, "\" was never started: ",
                                   p.record.failure, " (looked in ",
                                   options_.readiness->Where(), ")"),
                      1);
          } else {
            waiting_for_readiness = true;
            next = std::min(next, run_start_ + ToChrono(p.plan->ready_timeout));
          }
        } else if (p.record.state == ProcessRecord::State::kRespawnPending) {
          if (now >= p.respawn_at) {
            Start(p);
          } else {
            next = std::min(next, p.respawn_at);
          }
        }
      }
      if (!readiness_done_ && options_.readiness != nullptr && !waiting_for_readiness) {
        bool any_waiting = false;
        for (const Process& p : processes_) {
          any_waiting = any_waiting || p.record.state == ProcessRecord::State::kWaiting;
        }
        if (!any_waiting) {
          readiness_done_ = true;
          options_.readiness->Done();
        }
      }
      if (!stopping_) {
        bool any_alive = false;
        bool all_clean = true;
        for (const Process& p : processes_) {
          any_alive = any_alive || p.record.state != ProcessRecord::State::kDown;
          all_clean = all_clean && p.record.last_wait_status.has_value() &&
                      CleanExit(*p.record.last_wait_status);
        }
        if (!any_alive) {
          end_reason_ = "every process has exited";
          exit_code_ = all_clean ? 0 : 1;
          break;
        }
      }
    }
    if (stopping_) {
      bool any_running = false;
      for (const Process& p : processes_) any_running = any_running || p.record.pid != 0;
      if (!any_running) break;
      Escalate();
      next = stop_stage_ == 1 ? stop_began_ + ToChrono(options_.sigint_timeout)
             : stop_stage_ == 2
                 ? stop_began_ + ToChrono(options_.sigint_timeout) + ToChrono(options_.sigterm_timeout)
                 : std::chrono::steady_clock::now() + ToChrono(absl::Milliseconds(100));
    }
    WaitForEvent(next, waiting_for_readiness);
  }
  LaunchOutcome outcome;
  outcome.exit_code = exit_code_;
  outcome.reason = end_reason_;
  for (const Process& p : processes_) outcome.processes.push_back(p.record);
  return outcome;
}

}  // namespace launch
}  // namespace cyber
