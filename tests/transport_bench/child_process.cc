#include "tests/transport_bench/child_process.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace cyber {
namespace transport_bench {
namespace {

absl::Duration CpuTime(const rusage& u) {
  return absl::DurationFromTimeval(u.ru_utime) + absl::DurationFromTimeval(u.ru_stime);
}

}  // namespace

absl::StatusOr<std::unique_ptr<ChildProcess>> ChildProcess::Start(
    const std::vector<std::string>& argv) {
  int in[2];
  int out[2];
  if (pipe2(in, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  if (pipe2(out, O_CLOEXEC) != 0) {
    const int err = errno;
    close(in[0]);
    close(in[1]);
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(err)));
  }
  // Built before fork: the child only calls async-signal-safe functions.
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    const int err = errno;
    for (int fd : {in[0], in[1], out[0], out[1]}) close(fd);
    return absl::InternalError(absl::StrCat("fork: ", std::strerror(err)));
  }
  if (pid == 0) {
    signal(SIGINT, SIG_IGN);  // the orchestrator decides; see the header
    dup2(in[0], STDIN_FILENO);    // dup2 clears O_CLOEXEC on the copies
    dup2(out[1], STDOUT_FILENO);
    execv(args[0], args.data());
    static const char kExecFailed[] = "transport_bench: exec failed\n";
    (void)!write(STDERR_FILENO, kExecFailed, sizeof(kExecFailed) - 1);
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  // A child that exits early must not kill us with SIGPIPE on WriteLine.
  signal(SIGPIPE, SIG_IGN);
  auto child = std::unique_ptr<ChildProcess>(new ChildProcess(pid, in[1], out[0]));
  child->name_ = absl::StrCat(argv.size() > 1 ? argv[1] : argv[0], " (pid ", pid, ")");
  return child;
}

ChildProcess::ChildProcess(pid_t pid, int stdin_fd, int stdout_fd)
    : pid_(pid), stdin_fd_(stdin_fd), stdout_fd_(stdout_fd), lines_(stdout_fd) {}

ChildProcess::~ChildProcess() {
  Finish(absl::Seconds(10));
  close(stdout_fd_);
}

absl::StatusOr<std::string> ChildProcess::ExpectLine(
    const std::string& prefix, absl::Duration timeout,
    const std::function<void(const std::string&)>& on_other) {
  const absl::Time deadline = absl::Now() + timeout;
  for (;;) {
    std::optional<std::string> line = lines_.ReadLine(deadline - absl::Now());
    if (!line.has_value()) {
      return absl::DeadlineExceededError(absl::StrCat(
          name_, lines_.eof() ? " exited" : " timed out", " before saying \"", prefix, "\""));
    }
    if (absl::StartsWith(*line, "error")) {
      return absl::InternalError(absl::StrCat(name_, ": ", *line));
    }
    if (absl::StartsWith(*line, prefix)) return *line;
    if (on_other) on_other(*line);
  }
}

bool ChildProcess::WriteLine(const std::string& line) {
  if (stdin_fd_ < 0) return false;
  const std::string text = line + "\n";
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(stdin_fd_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

void ChildProcess::CloseStdin() {
  if (stdin_fd_ >= 0) close(stdin_fd_);
  stdin_fd_ = -1;
}

ChildProcess::Exit ChildProcess::Finish(absl::Duration grace) {
  if (exit_.has_value()) return *exit_;
  CloseStdin();
  const absl::Time deadline = absl::Now() + grace;
  int status = 0;
  rusage usage{};
  for (;;) {
    const pid_t r = wait4(pid_, &status, WNOHANG, &usage);
    if (r == pid_) {
      exit_ = Exit{status, WIFEXITED(status) && WEXITSTATUS(status) == 0, CpuTime(usage)};
      return *exit_;
    }
    if (r < 0 && errno != EINTR) {  // not our child any more: nothing to reap
      exit_ = Exit{-1, false, absl::ZeroDuration()};
      return *exit_;
    }
    if (absl::Now() >= deadline) break;
    absl::SleepFor(absl::Milliseconds(10));
  }
  std::fprintf(stderr, "transport_bench: %s did not exit within %s; killing it\n",
               name_.c_str(), absl::FormatDuration(grace).c_str());
  kill(pid_, SIGKILL);
  while (wait4(pid_, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  exit_ = Exit{status, false, CpuTime(usage)};
  return *exit_;
}

std::string SelfPath() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return "/proc/self/exe";
  return std::string(buf, static_cast<size_t>(n));
}

}  // namespace transport_bench
}  // namespace cyber
