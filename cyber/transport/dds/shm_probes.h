// Internal to this repository: not part of the API (docs/api.md lists the
// API headers); its Bazel target is visible only inside this repository.
//
// Questions to the kernel about a Fast-DDS file in /dev/shm, answered
// without PIDs (a PID means nothing across the PID namespaces of Bazel's
// sandboxes and containers, and is reused):
//
//  * Does a live process hold its lock? TryLockExclusive. Fast-DDS 2.9's
//    lock files (_el, _sl) carry flock(2) locks, not POSIX fcntl locks. A
//    flock belongs to an open file description, so the kernel drops it when
//    the holder's last descriptor closes, however the holder died (exit,
//    SIGTERM, SIGKILL); and two open() calls conflict even inside one
//    process. A probe through our own open() therefore sees a participant of
//    this very process as alive; with fcntl locks it would not.
//
//  * Does any other process have the file open or mapped?
//    ProbeOtherOpeners. The kernel grants a write lease (fcntl F_SETLEASE,
//    F_WRLCK) only while no other open file description of the file exists,
//    and a mapping keeps its file open: a segment or port that a live
//    process has mapped refuses the lease. Two limits: the caller must own
//    the file (or have CAP_LEASE), else the answer is an error; and a lease
//    holder is sent SIGIO (default action: terminate) when someone opens the
//    file meanwhile. So the lease is taken in a forked child that ignores
//    SIGIO and exits at once; the caller never holds one.
//
//  * PortMutex: the mutex Fast-DDS holds while it opens, creates or removes
//    a port (a glibc named semaphore, boost's named_mutex). Holding it keeps
//    every Fast-DDS process away from that port while we judge and remove it.
//
// All functions are thread-safe; none blocks longer than PortMutex's wait.

#ifndef CYBER_TRANSPORT_DDS_SHM_PROBES_H_
#define CYBER_TRANSPORT_DDS_SHM_PROBES_H_

#include <semaphore.h>

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace cyber {
namespace dds {

// A file descriptor, closed on destruction (which drops a flock it holds).
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd();

  int get() const { return fd_; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_ = -1;
};

enum class LockProbe {
  kAcquired,       // nobody held it; the caller now holds it exclusively
  kHeldElsewhere,  // a live process (this one included) holds it, or the
                   // name was just recreated: someone is using it
  kGone,           // the file does not exist (any more)
};

// Tries, without waiting, to take an exclusive flock on the lock file at
// `path`. On kAcquired, `held` keeps the lock until it is destroyed.
absl::StatusOr<LockProbe> TryLockExclusive(const std::string& path,
                                           UniqueFd* held);

enum class OpenersProbe {
  kNone,  // no other open file description (nor mapping) exists
  kSome,  // some process has the file open or mapped
  kGone,  // the file does not exist (any more)
};

// Asks whether any process other than the caller's probe has the file at
// `path` open or mapped (see the header comment). Forks once.
absl::StatusOr<OpenersProbe> ProbeOtherOpeners(const std::string& path);

// Holds Fast-DDS's mutex of one port, released on destruction.
class PortMutex {
 public:
  // Opens the mutex of `port`, creating it as Fast-DDS does (value 1, mode
  // 0644) if it does not exist, and waits up to `wait` for it.
  // DeadlineExceeded if it stayed taken: a process is opening or closing
  // the port, or one died holding it (Fast-DDS resets such a mutex after
  // its own 2 s wait, the next time it opens the port).
  static absl::StatusOr<std::unique_ptr<PortMutex>> Acquire(
      uint32_t port, absl::Duration wait);
  ~PortMutex();  // releases and closes the semaphore (sem_post, sem_close)
  PortMutex(const PortMutex&) = delete;
  PortMutex& operator=(const PortMutex&) = delete;

  // Whether Acquire created the semaphore (it did not exist before).
  bool created() const { return created_; }

  // Removes the semaphore's name while holding it, as Fast-DDS does when it
  // removes a port. A process already waiting on it still gets it after us;
  // a later one creates a new semaphore. That leaves one window, the same
  // Fast-DDS's own removal has: a waiter and a newcomer can both pass.
  absl::Status Unlink();

 private:
  PortMutex(uint32_t port, sem_t* sem, bool created)
      : port_(port), sem_(sem), created_(created) {}

  const uint32_t port_;
  sem_t* const sem_;
  const bool created_;
};

}  // namespace dds
}  // namespace cyber

#endif  // CYBER_TRANSPORT_DDS_SHM_PROBES_H_
