#include "cyber/transport/dds/testing/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/time/clock.h"

namespace cyber {
namespace dds_test {

Subprocess::Subprocess(const std::vector<std::string>& argv) {
  int in[2];
  int out[2];
  // Close-on-exec: a later child must not inherit an earlier one's stdin
  // (it would never see it close). dup2 clears the flag on the child's
  // own 0 and 1.
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) std::abort();
  pid_ = fork();
  if (pid_ < 0) std::abort();
  if (pid_ == 0) {
    dup2(in[0], STDIN_FILENO);
    dup2(out[1], STDOUT_FILENO);
    close(in[0]);
    close(in[1]);
    close(out[0]);
    close(out[1]);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    std::fprintf(stderr, "exec %s failed\n", args[0]);
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  stdin_fd_ = in[1];
  stdout_fd_ = out[0];
  signal(SIGPIPE, SIG_IGN);
}

Subprocess::~Subprocess() {
  CloseStdin();
  // A clean exit first (it leaves the DDS domain and removes its shared
  // memory), then the hard way.
  if (!reaped_) Wait(absl::Seconds(10));
  if (!reaped_) {
    kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
  if (stdout_fd_ >= 0) close(stdout_fd_);
}

std::optional<std::string> Subprocess::ReadLine(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  for (;;) {
    const size_t nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return line;
    }
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) return std::nullopt;
    pollfd p{stdout_fd_, POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(left)) + 1);
    if (ready <= 0) continue;
    char buf[4096];
    const ssize_t n = read(stdout_fd_, buf, sizeof(buf));
    if (n <= 0) return std::nullopt;
    buffer_.append(buf, static_cast<size_t>(n));
  }
}

std::optional<std::string> Subprocess::WaitForLine(const std::string& prefix,
                                                   absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    std::optional<std::string> line = ReadLine(deadline - absl::Now());
    if (!line.has_value()) return std::nullopt;
    if (absl::StartsWith(*line, prefix)) return line;
  }
  return std::nullopt;
}

bool Subprocess::WriteLine(const std::string& line) {
  if (stdin_fd_ < 0) return false;
  const std::string text = line + "\n";
  size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = write(stdin_fd_, text.data() + written, text.size() - written);
    if (n <= 0) return false;  // SIGPIPE is ignored: a gone child is EPIPE
    written += static_cast<size_t>(n);
  }
  return true;
}

void Subprocess::CloseStdin() {
  if (stdin_fd_ >= 0) close(stdin_fd_);
  stdin_fd_ = -1;
}

void Subprocess::Kill(int signal) {
  if (!reaped_) kill(pid_, signal);
}

std::optional<int> Subprocess::Wait(absl::Duration timeout) {
  if (reaped_) return wait_status_;
  const absl::Time deadline = absl::Now() + timeout;
  for (;;) {
    int status = 0;
    const pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      reaped_ = true;
      wait_status_ = status;
      return status;
    }
    if (absl::Now() >= deadline) return std::nullopt;
    absl::SleepFor(absl::Milliseconds(10));
  }
}

std::string RunfilePath(const std::string& workspace_relative) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  if (srcdir == nullptr || workspace == nullptr) return workspace_relative;
  return absl::StrCat(srcdir, "/", workspace, "/", workspace_relative);
}

}  // namespace dds_test
}  // namespace cyber
