// Internal to this repository: not part of the API (docs/api.md lists the
// API headers); its Bazel target is visible only inside this repository.
//
// The names Fast-DDS 2.9's shared-memory transport gives its files, and the
// object each file belongs to. The naming rules live here only, so the
// cleanup (shm_cleanup.cc) reads them the way Fast-DDS writes them. Seen on
// Debian's libfastrtps 2.9.1 (strace and /proc/locks), matching its sources
// (SharedMemManager.hpp, SharedMemGlobal.hpp, RobustExclusiveLock.hpp,
// RobustSharedLock.hpp); every file is in /dev/shm:
//
//   name                        what                     held while alive
//   fastrtps_<16 hex>           a participant's segment  -
//                               (its data buffers)
//   fastrtps_<16 hex>_el        the segment's lock file  by its owner:
//                                                        exclusive flock
//   fastrtps_port<N>            port N: a ring of        -
//                               buffer descriptors
//   fastrtps_port<N>_el         lock file of its reader  by the reader:
//                               (unicast ports)          exclusive flock
//   fastrtps_port<N>_sl         lock file of its readers by each reader:
//                               (multicast ports)        shared flock
//   sem.fastrtps_port<N>_mutex  the port's mutex (glibc  by a process while
//                               named semaphore)         it opens, creates
//                                                        or removes port N
//   fast_datasharing_<writer>   a DataWriter's data-     - (no lock file)
//                               sharing pool
//
// Port numbers follow the RTPS rule: for domain d, 7400 + 250 d is the
// discovery multicast port and 7410 + 250 d + 2 p, 7411 + 250 d + 2 p are
// the unicast ports of participant p.

#ifndef CYBER_TRANSPORT_DDS_FASTDDS_SHM_NAMES_H_
#define CYBER_TRANSPORT_DDS_FASTDDS_SHM_NAMES_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace cyber {
namespace dds {

// Where Fast-DDS 2.9 keeps all of the files above on Linux: boost's
// shm_open, glibc's sem_open and Fast-DDS's SharedDir all resolve there.
inline constexpr char kFastDdsShmDir[] = "/dev/shm";

// One file name, parsed.
struct FastDdsShmName {
  enum class Kind {
    kSegment,          // fastrtps_<hex>
    kSegmentLock,      // fastrtps_<hex>_el
    kPort,             // fastrtps_port<N>
    kPortReaderLock,   // fastrtps_port<N>_el
    kPortReadersLock,  // fastrtps_port<N>_sl
    kPortMutex,        // sem.fastrtps_port<N>_mutex
    kDataSharingPool,  // fast_datasharing_<writer>
  };
  Kind kind;
  // The segment's 16 hex digits (segments and their locks), or the whole
  // name (data-sharing pools); empty for ports.
  std::string id;
  // N, for the port kinds.
  uint32_t port = 0;
};

// True for every name with a Fast-DDS prefix (fastrtps_, sem.fastrtps_,
// fast_datasharing_), including ones ParseFastDdsShmName does not know.
bool HasFastDdsShmPrefix(absl::string_view name);

// The kind of a file name, or nullopt if it is not one of the table above.
std::optional<FastDdsShmName> ParseFastDdsShmName(absl::string_view name);

// File names (not paths) of the objects above.
std::string SegmentFileName(absl::string_view hex);
std::string SegmentLockFileName(absl::string_view hex);
std::string PortFileName(uint32_t port);
std::string PortReaderLockFileName(uint32_t port);
std::string PortReadersLockFileName(uint32_t port);
std::string PortMutexFileName(uint32_t port);
// The name sem_open(3) takes for the port's mutex ("/fastrtps_port<N>_mutex").
std::string PortMutexSemaphoreName(uint32_t port);

}  // namespace dds
}  // namespace cyber

#endif  // CYBER_TRANSPORT_DDS_FASTDDS_SHM_NAMES_H_
