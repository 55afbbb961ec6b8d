#include "cyber/transport/dds/shm_probes.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "absl/strings/str_cat.h"
#include "cyber/transport/dds/fastdds_shm_names.h"

namespace cyber {
namespace dds {
namespace {

std::string ErrnoText(int err) { return std::strerror(err); }

absl::Status ErrnoStatus(const std::string& what, const std::string& path,
                         int err) {
  return absl::InternalError(
      absl::StrCat(path, ": ", what, ": ", ErrnoText(err)));
}

// Exit codes of the lease probe's child (ProbeOtherOpeners).
constexpr int kChildNoOpeners = 0;
constexpr int kChildOpeners = 1;
constexpr int kChildGone = 2;
constexpr int kChildErrnoBase = 100;  // + errno (Linux errno values < 134)

// The child's whole life: async-signal-safe calls only, as it is forked from
// a process that may run other threads (Fast-DDS's, for one).
[[noreturn]] void RunLeaseProbeChild(const char* path) {
  struct sigaction ignore;
  std::memset(&ignore, 0, sizeof(ignore));
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGIO, &ignore, nullptr);
  // O_NONBLOCK: if another prober holds a lease, fail instead of waiting.
  const int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT) _exit(kChildGone);
    if (errno == EWOULDBLOCK) _exit(kChildOpeners);
    _exit(kChildErrnoBase + errno);
  }
  if (fcntl(fd, F_SETLEASE, F_WRLCK) != 0) {
    if (errno == EAGAIN) _exit(kChildOpeners);
    _exit(kChildErrnoBase + errno);
  }
  _exit(kChildNoOpeners);  // closing the descriptor releases the lease
}

timespec MonotonicDeadline(absl::Duration wait) {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return absl::ToTimespec(absl::DurationFromTimespec(now) + wait);
}

}  // namespace

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = other.release();
  }
  return *this;
}

UniqueFd::~UniqueFd() {
  if (fd_ >= 0) close(fd_);
}

absl::StatusOr<LockProbe> TryLockExclusive(const std::string& path,
                                           UniqueFd* held) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (fd.get() < 0) {
    if (errno == ENOENT) return LockProbe::kGone;
    return ErrnoStatus("open", path, errno);
  }
  if (flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) return LockProbe::kHeldElsewhere;
    return ErrnoStatus("flock", path, errno);
  }
  // The lock is on the file we opened; make sure the name still means it.
  // Removed meanwhile: gone. Replaced: a live process just made a new one.
  struct stat locked;
  struct stat named;
  if (fstat(fd.get(), &locked) != 0) return ErrnoStatus("fstat", path, errno);
  if (stat(path.c_str(), &named) != 0) {
    if (errno == ENOENT) return LockProbe::kGone;
    return ErrnoStatus("stat", path, errno);
  }
  if (locked.st_dev != named.st_dev || locked.st_ino != named.st_ino) {
    return LockProbe::kHeldElsewhere;
  }
  *held = std::move(fd);
  return LockProbe::kAcquired;
}

absl::StatusOr<OpenersProbe> ProbeOtherOpeners(const std::string& path) {
  const pid_t pid = fork();
  if (pid < 0) return ErrnoStatus("fork (lease probe)", path, errno);
  if (pid == 0) RunLeaseProbeChild(path.c_str());
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR)
      return ErrnoStatus("waitpid (lease probe)", path, errno);
  }
  if (!WIFEXITED(status)) {
    return absl::InternalError(
        absl::StrCat(path, ": lease probe child ended with status ", status));
  }
  const int code = WEXITSTATUS(status);
  switch (code) {
    case kChildNoOpeners:
      return OpenersProbe::kNone;
    case kChildOpeners:
      return OpenersProbe::kSome;
    case kChildGone:
      return OpenersProbe::kGone;
    default:
      if (code >= kChildErrnoBase) {
        return ErrnoStatus("write lease (F_SETLEASE)", path,
                           code - kChildErrnoBase);
      }
      return absl::InternalError(
          absl::StrCat(path, ": lease probe child exited with ", code));
  }
}

absl::StatusOr<std::unique_ptr<PortMutex>> PortMutex::Acquire(
    uint32_t port, absl::Duration wait) {
  const std::string name = PortMutexSemaphoreName(port);
  const std::string file = PortMutexFileName(port);
  bool created = true;
  sem_t* sem = sem_open(name.c_str(), O_CREAT | O_EXCL, 0644, 1);
  if (sem == SEM_FAILED && errno == EEXIST) {
    created = false;
    sem = sem_open(name.c_str(), 0);
  }
  if (sem == SEM_FAILED) return ErrnoStatus("sem_open", file, errno);
  const timespec deadline = MonotonicDeadline(wait);
  while (sem_clockwait(sem, CLOCK_MONOTONIC, &deadline) != 0) {
    if (errno == EINTR) continue;
    const int err = errno;
    sem_close(sem);
    if (err == ETIMEDOUT) {
      return absl::DeadlineExceededError(absl::StrCat(
          file, ": port ", port, "'s mutex stayed taken for ",
          absl::FormatDuration(wait),
          " (a process is opening or closing the port, or died holding it; "
          "Fast-DDS resets it when it next opens the port); port left alone"));
    }
    return ErrnoStatus("sem_clockwait", file, err);
  }
  return std::unique_ptr<PortMutex>(new PortMutex(port, sem, created));
}

PortMutex::~PortMutex() {
  sem_post(sem_);
  sem_close(sem_);
}

absl::Status PortMutex::Unlink() {
  if (sem_unlink(PortMutexSemaphoreName(port_).c_str()) != 0 &&
      errno != ENOENT) {
    return ErrnoStatus("sem_unlink", PortMutexFileName(port_), errno);
  }
  return absl::OkStatus();
}

}  // namespace dds
}  // namespace cyber
