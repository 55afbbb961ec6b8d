#include "cyber/launch/pid_file.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"

namespace cyber {
namespace launch {
namespace {

// FNV-1a: stable across runs and builds (std::hash is not promised to be).
uint64_t Fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

pid_t ReadPid(const std::string& path) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text)) return 0;
  int pid = 0;
  return absl::SimpleAtoi(text, &pid) && pid > 0 ? pid : 0;
}

// Sends SIGINT to `pid` and waits for it to be gone.
absl::Status StopPid(pid_t pid, const std::string& what, absl::Duration wait) {
  if (kill(pid, SIGINT) != 0) {
    return absl::NotFoundError(absl::StrCat(what, ": pid ", pid, " is gone"));
  }
  const absl::Time deadline = absl::Now() + wait;
  while (IsCyberLaunch(pid)) {
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          what, ": cyber_launch pid ", pid, " still runs ", absl::FormatDuration(wait),
          " after SIGINT (it may still be stopping its processes)"));
    }
    absl::SleepFor(absl::Milliseconds(20));  // another process's exit; bounded by `wait`
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> PidFileDirectory() {
  const char* runtime = getenv("XDG_RUNTIME_DIR");
  const std::string dir = runtime != nullptr && runtime[0] != '\0'
                              ? absl::StrCat(runtime, "/cyber_launch")
                              : absl::StrCat("/tmp/cyber_launch-", getuid());
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return absl::FailedPreconditionError(
        absl::StrCat("pid file directory \"", dir, "\": ", strerror(errno)));
  }
  return dir;
}

absl::StatusOr<std::string> PidFileFor(const std::string& launch_file) {
  char real[PATH_MAX];
  if (realpath(launch_file.c_str(), real) == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("launch file \"", launch_file, "\": ", strerror(errno)));
  }
  absl::StatusOr<std::string> dir = PidFileDirectory();
  if (!dir.ok()) return dir.status();
  std::string base(real);
  base = base.substr(base.rfind('/') + 1);
  return absl::StrFormat("%s/%s-%016x.pid", *dir, base, Fnv1a(real));
}

bool IsCyberLaunch(pid_t pid) {
  if (pid <= 0 || (kill(pid, 0) != 0 && errno == ESRCH)) return false;
  std::ifstream in(absl::StrCat("/proc/", pid, "/cmdline"));
  std::string argv0;
  if (!std::getline(in, argv0, '\0')) return false;  // gone, or a zombie
  return absl::EndsWith(argv0, "cyber_launch");
}

absl::StatusOr<std::string> ClaimPidFile(const std::string& launch_file) {
  absl::StatusOr<std::string> path = PidFileFor(launch_file);
  if (!path.ok()) return path.status();
  const pid_t holder = ReadPid(*path);
  if (holder != 0 && holder != getpid() && IsCyberLaunch(holder)) {
    return absl::AlreadyExistsError(absl::StrCat(
        "launch file \"", launch_file, "\" is already run by cyber_launch pid ", holder,
        " (pid file ", *path, "); stop it with: cyber_launch stop ", launch_file));
  }
  const std::string temp = absl::StrCat(*path, ".", getpid());
  {
    std::ofstream out(temp, std::ios::trunc);
    char real[PATH_MAX];
    out << getpid() << "\n"
        << (realpath(launch_file.c_str(), real) != nullptr ? real : launch_file.c_str()) << "\n";
    if (!out) return absl::FailedPreconditionError(absl::StrCat("pid file \"", temp, "\": cannot write"));
  }
  if (rename(temp.c_str(), path->c_str()) != 0) {
    const int e = errno;
    unlink(temp.c_str());
    return absl::FailedPreconditionError(absl::StrCat("pid file \"", *path, "\": ", strerror(e)));
  }
  return *path;
}

void ReleasePidFile(const std::string& path) {
  if (ReadPid(path) == getpid()) unlink(path.c_str());
}

absl::Status StopLaunch(const std::string& launch_file, absl::Duration wait) {
  absl::StatusOr<std::string> path = PidFileFor(launch_file);
  if (!path.ok()) return path.status();
  const pid_t pid = ReadPid(*path);
  if (pid == 0 || !IsCyberLaunch(pid)) {
    return absl::NotFoundError(absl::StrCat("no cyber_launch runs \"", launch_file,
                                            "\" (no live pid in ", *path, ")"));
  }
  return StopPid(pid, absl::StrCat("launch file \"", launch_file, "\""), wait);
}

absl::StatusOr<std::vector<std::string>> StopAllLaunches(absl::Duration wait) {
  absl::StatusOr<std::string> dir = PidFileDirectory();
  if (!dir.ok()) return dir.status();
  std::vector<std::string> stopped;
  DIR* d = opendir(dir->c_str());
  if (d == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat("\"", *dir, "\": ", strerror(errno)));
  }
  std::vector<std::string> files;
  while (dirent* e = readdir(d)) {
    if (absl::EndsWith(e->d_name, ".pid")) files.push_back(absl::StrCat(*dir, "/", e->d_name));
  }
  closedir(d);
  absl::Status first = absl::OkStatus();
  for (const std::string& f : files) {
    const pid_t pid = ReadPid(f);
    if (pid == 0 || !IsCyberLaunch(pid)) continue;
    std::ifstream in(f);
    std::string ignored_pid, launch_file;
    std::getline(in, ignored_pid);
    if (!std::getline(in, launch_file) || launch_file.empty()) launch_file = f;
    const absl::Status s = StopPid(pid, absl::StrCat("launch file \"", launch_file, "\""), wait);
    if (s.ok()) {
      stopped.push_back(launch_file);
    } else if (first.ok()) {
      first = s;
    }
  }
  if (!first.ok()) return first;
  if (stopped.empty()) {
    return absl::NotFoundError(absl::StrCat("no cyber_launch is running (no live pid file in ",
                                            *dir, ")"));
  }
  return stopped;
}

}  // namespace launch
}  // namespace cyber
