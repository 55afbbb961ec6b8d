#include "cyber/launch/child_process.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace cyber {
namespace launch {
namespace {

int PidfdOpen(pid_t pid) {
#ifdef SYS_pidfd_open
  const long fd = syscall(SYS_pidfd_open, pid, 0);
  return fd < 0 ? -1 : static_cast<int>(fd);
#else
  (void)pid;
  return -1;
#endif
}

// In the child, before exec: async-signal-safe calls only. On failure
// writes errno to `report` and exits 127.
[[noreturn]] void ExecChild(char* const* argv, int log_fd, int null_fd, int report,
                            pid_t launcher, bool block_stop_signals) {
  // Tied to the launcher: killed when the forking thread ends; if it
  // already ended before the prctl, go now.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != launcher) _exit(127);
  setpgid(0, 0);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int s = 1; s < NSIG; ++s) {
    if (s != SIGKILL && s != SIGSTOP) sigaction(s, &dfl, nullptr);
  }
  sigset_t blocked;
  sigemptyset(&blocked);
  if (block_stop_signals) {
    sigaddset(&blocked, SIGINT);
    sigaddset(&blocked, SIGTERM);
  }
  sigprocmask(SIG_SETMASK, &blocked, nullptr);
  dup2(null_fd, STDIN_FILENO);
  dup2(log_fd, STDOUT_FILENO);
  dup2(log_fd, STDERR_FILENO);
  // Nothing else of the launcher's crosses exec (its DDS sockets and
  // shared-memory files are not all close-on-exec): every descriptor above
  // stderr is marked close-on-exec — not closed, so `report` still tells
  // the launcher if exec fails.
#ifdef SYS_close_range
  if (syscall(SYS_close_range, 3u, ~0u, 4u /* CLOSE_RANGE_CLOEXEC */) != 0)
#endif
  {
    for (int fd = 3; fd < 4096; ++fd) fcntl(fd, F_SETFD, FD_CLOEXEC);
  }
  if (strchr(argv[0], '/') != nullptr) {
    execv(argv[0], argv);
  } else {
    execvp(argv[0], argv);
  }
  const int e = errno;
  ssize_t ignored = write(report, &e, sizeof(e));
  (void)ignored;
  _exit(127);
}

}  // namespace

absl::StatusOr<SpawnedChild> SpawnChild(const std::vector<std::string>& argv,
                                        const std::string& log_path,
                                        bool stop_signals_wait_for_init) {
  if (argv.empty()) return absl::InvalidArgumentError("no program to start (empty command)");
  const int log_fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("log file \"", log_path, "\" for ", argv[0], ": ", strerror(errno)));
  }
  const int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  int report[2];
  if (null_fd < 0 || pipe2(report, O_CLOEXEC) != 0) {
    const int e = errno;
    close(log_fd);
    if (null_fd >= 0) close(null_fd);
    return absl::InternalError(absl::StrCat("starting ", argv[0], ": ", strerror(e)));
  }
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t launcher = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    close(report[0]);
    ExecChild(args.data(), log_fd, null_fd, report[1], launcher, stop_signals_wait_for_init);
  }
  const int fork_errno = errno;
  // Also here, so the group exists before anyone could signal it (both
  // sides call it; whichever runs first wins, the other is a no-op).
  if (pid > 0) setpgid(pid, pid);
  close(report[1]);
  close(log_fd);
  close(null_fd);
  if (pid < 0) {
    close(report[0]);
    return absl::InternalError(absl::StrCat("fork for ", argv[0], ": ", strerror(fork_errno)));
  }
  // The exec's outcome: EOF (the pipe closed by exec) or the child's errno.
  int child_errno = 0;
  ssize_t n;
  do {
    n = read(report[0], &child_errno, sizeof(child_errno));
  } while (n < 0 && errno == EINTR);
  close(report[0]);
  if (n == static_cast<ssize_t>(sizeof(child_errno))) {
    int status = 0;
    waitpid(pid, &status, 0);
    return absl::FailedPreconditionError(
        absl::StrCat("cannot run \"", argv[0], "\": ", strerror(child_errno)));
  }
  SpawnedChild child;
  child.pid = pid;
  child.pidfd = PidfdOpen(pid);
  return child;
}

std::string DescribeWaitStatus(int wait_status) {
  if (WIFEXITED(wait_status)) return absl::StrCat("exit ", WEXITSTATUS(wait_status));
  if (WIFSIGNALED(wait_status)) {
    const int s = WTERMSIG(wait_status);
    const char* abbrev = sigabbrev_np(s);
    return absl::StrCat("signal ", s, abbrev != nullptr ? absl::StrCat(" (", abbrev, ")") : "",
                        WCOREDUMP(wait_status) ? ", core dumped" : "");
  }
  return absl::StrCat("wait status ", wait_status);
}

bool CleanExit(int wait_status) {
  return WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0;
}

}  // namespace launch
}  // namespace cyber
