// Removing the shared-memory files of Fast-DDS participants that died.
//
// Why. Fast-DDS 2.9's shared-memory transport (libfastrtps 2.9.1 from
// Debian) keeps its state in /dev/shm (fastdds_shm_names.h lists the
// files). A participant deleted normally removes its files; a process that
// dies without running destructors (kill -9, and equally SIGTERM, since
// Fast-DDS installs no handler) leaves all of them: a 537 KB segment (the
// default 512 KB plus overhead) with its lock file, and for each of its
// ports (three for a lone participant) a 51 KB ring, a lock file and a
// semaphore. Fast-DDS repairs only part of that by itself: a participant
// that opens a port of a dead one (same domain and participant id, or the
// domain's discovery port) resets that port; a dead participant's segment
// it never removes, nor the ports of domains nobody uses again. Left alone,
// /dev/shm fills (about 700 KB per killed participant; Docker gives a
// container 64 MB by default) and the next start fails. Fast-DDS's own
// tool, `fastdds shm clean` (Python; Debian's fastdds-tools, which
// tools/setup.sh does not install), removes every segment and port whose
// lock file nobody holds, without taking the port's mutex, and never looks
// at files without a lock file.
//
// What counts as dead. Never a PID: tests share one /dev/shm across Bazel
// sandboxes with their own PID namespaces. A group of files is removed only
// when both hold:
//   1. nobody holds its Fast-DDS lock (the flock on the segment's _el, on the
//      port's _el or _sl), the test Fast-DDS itself makes to call a port a
//      zombie, and `fastdds shm clean` to call anything a zombie;
//   2. no process has its memory file open or mapped (a write lease is
//      refused otherwise; see shm_probes.h). This keeps a dead writer's
//      segment while a live reader still maps it, a dead reader's port while
//      a live writer maps it, and decides the files that have no lock at
//      all: ports that only writers opened (they appear when a live process
//      keeps sending to a killed peer), segments whose lock file is gone, and
//      data-sharing pools.
// A port is judged and removed while holding its Fast-DDS mutex, so no
// Fast-DDS process opens or creates it meanwhile. A segment's owner takes its
// lock before it creates the segment, and we remove a segment only while
// holding that lock.
//
// Safe while other processes run Fast-DDS, and while this process has live
// participants: Fast-DDS locks with flock(2), whose locks conflict between
// two open() calls of one process (POSIX fcntl locks would not), and a
// mapping of this process refuses the lease like any other. The caller needs
// no ordering with its own participants.
//
// REQUIRES: the caller owns the files it should judge (or has CAP_LEASE):
// the lease test fails with EACCES otherwise, and the file is reported as an
// error and kept. Files of other users are thus kept, unless the caller
// has CAP_LEASE (root does).
//
// Cost: a directory listing, one open+flock per lock file and one fork per
// memory file (milliseconds for a few participants' worth of files). A port
// whose mutex stays taken delays the call by kPortMutexWait and is left.
//
// Thread-safe; concurrent calls (threads or processes) are safe, each file
// being reported as removed by at most one of them.
//
//   cyber::dds::ShmCleanupReport report = cyber::dds::RemoveDeadPeerSegments();
//   for (const std::string& name : report.removed) AINFO << "removed " << name;

#ifndef CYBER_TRANSPORT_DDS_SHM_CLEANUP_H_
#define CYBER_TRANSPORT_DDS_SHM_CLEANUP_H_

#include <string>
#include <vector>

#include "absl/time/time.h"

namespace cyber {
namespace dds {

// How long a port's mutex is waited for: what Fast-DDS itself waits for it
// (2 x BOOST_INTERPROCESS_TIMEOUT_WHEN_LOCKING_DURATION_MS, 1000 ms) before
// it treats the holder as dead.
inline constexpr absl::Duration kPortMutexWait = absl::Seconds(2);

// File names (not paths), each listed once, sorted.
struct ShmCleanupReport {
  // Files this call removed.
  std::vector<std::string> removed;
  // Files kept because a live process holds their lock or has their group's
  // memory file open or mapped.
  std::vector<std::string> kept_in_use;
  // "<file>: <what failed>" for files left because something failed (an
  // untaken mutex, a permission, a name this code does not know).
  std::vector<std::string> errors;
};

// Removes the Fast-DDS shared-memory files in /dev/shm whose owners are all
// dead (see the header comment). Fast-DDS 2.9 keeps all of its files there
// (boost's shm_open and glibc's sem_open resolve nowhere else), so the
// directory is not a parameter.
ShmCleanupReport RemoveDeadPeerSegments();

// The Fast-DDS files (fastrtps_*, sem.fastrtps_*, fast_datasharing_*) in
// `dir` now, sorted names; empty if `dir` cannot be read. For tests and CI
// checks ("nothing of ours left").
std::vector<std::string> FastDdsShmFiles(const std::string& dir = "/dev/shm");

}  // namespace dds
}  // namespace cyber

#endif  // CYBER_TRANSPORT_DDS_SHM_CLEANUP_H_
