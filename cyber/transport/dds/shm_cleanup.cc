#include "cyber/transport/dds/shm_cleanup.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "cyber/transport/dds/fastdds_shm_names.h"
#include "cyber/transport/dds/shm_probes.h"

namespace cyber {
namespace dds {
namespace {

std::string PathOf(const std::string& name) {
  return absl::StrCat(kFastDdsShmDir, "/", name);
}

// The names of a directory, or nullopt if it cannot be read.
std::optional<std::vector<std::string>> ListDirectory(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return std::nullopt;
  std::vector<std::string> names;
  while (const dirent* entry = readdir(d)) {
    const std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  closedir(d);
  return names;
}

// The Fast-DDS files of /dev/shm at one instant, grouped by the object they
// belong to (a group is judged as one: its files live and die together).
struct Listing {
  // Segment id (16 hex digits) -> the names of its files present.
  std::map<std::string, std::vector<std::string>> segments;
  // Port number -> the names of its files present.
  std::map<uint32_t, std::vector<std::string>> ports;
  std::vector<std::string> pools;
  std::vector<std::string> unknown;
};

Listing ListFastDdsFiles(std::vector<std::string>* errors) {
  Listing listing;
  auto names = ListDirectory(kFastDdsShmDir);
  if (!names) {
    errors->push_back(
        absl::StrCat(kFastDdsShmDir, ": opendir: ", std::strerror(errno)));
    return listing;
  }
  for (const std::string& name : *names) {
    if (!HasFastDdsShmPrefix(name)) continue;
    const std::optional<FastDdsShmName> parsed = ParseFastDdsShmName(name);
    if (!parsed) {
      listing.unknown.push_back(name);
      continue;
    }
    switch (parsed->kind) {
      case FastDdsShmName::Kind::kSegment:
      case FastDdsShmName::Kind::kSegmentLock:
        listing.segments[parsed->id].push_back(name);
        break;
      case FastDdsShmName::Kind::kPort:
      case FastDdsShmName::Kind::kPortReaderLock:
      case FastDdsShmName::Kind::kPortReadersLock:
      case FastDdsShmName::Kind::kPortMutex:
        listing.ports[parsed->port].push_back(name);
        break;
      case FastDdsShmName::Kind::kDataSharingPool:
        listing.pools.push_back(name);
        break;
    }
  }
  return listing;
}

// Judges one group at a time and writes down what it did.
class Cleaner {
 public:
  // A participant's segment and its lock file. The owner takes the lock
  // before it creates the segment and removes the segment before it drops
  // the lock, so a free lock means the owner is gone (or has not got as far
  // as the segment). The files are removed while we hold the lock. An owner
  // between creating a lock file of that (random) name and locking it fails
  // to lock it while we hold it, and picks another name; if it locks after
  // we let go, it holds a lock on a removed file, and its segment, having no
  // lock file, is judged by whether anyone maps it (which the owner does).
  void Segment(const std::string& id, const std::vector<std::string>& present) {
    const std::string segment = SegmentFileName(id);
    const std::string lock_file = SegmentLockFileName(id);
    UniqueFd lock;
    const absl::StatusOr<LockProbe> locked =
        TryLockExclusive(PathOf(lock_file), &lock);
    if (!locked.ok()) return Fail(locked.status());
    if (*locked == LockProbe::kHeldElsewhere) return Keep(present);
    const absl::StatusOr<OpenersProbe> openers =
        ProbeOtherOpeners(PathOf(segment));
    if (!openers.ok()) return Fail(openers.status());
    if (*openers == OpenersProbe::kSome) return Keep(present);
    if (*openers == OpenersProbe::kNone) Remove(segment);
    if (*locked == LockProbe::kAcquired) Remove(lock_file);
  }

  // A port: its ring, its readers' lock files and its mutex. Everything
  // happens under the port's mutex, which every Fast-DDS process takes to
  // open, create, probe or remove the port.
  void Port(uint32_t port, const std::vector<std::string>& present) {
    absl::StatusOr<std::unique_ptr<PortMutex>> mutex =
        PortMutex::Acquire(port, kPortMutexWait);
    if (!mutex.ok()) return Fail(mutex.status());
    const bool dead = RemovePortIfDead(port, present);
    // A mutex that existed belongs to the port: it goes with a dead port.
    // One we created only for this visit goes in any case, so the directory
    // is left as found except for what was removed.
    if (dead || (*mutex)->created()) {
      const absl::Status unlinked = (*mutex)->Unlink();
      if (!unlinked.ok()) {
        Fail(unlinked);
      } else if (!(*mutex)->created()) {
        report_.removed.push_back(PortMutexFileName(port));
      }
    }
  }

  // A DataWriter's data-sharing pool: no lock file; its writer maps it while
  // alive (readers of a dead writer only read what is left).
  void Pool(const std::string& name) {
    const absl::StatusOr<OpenersProbe> openers =
        ProbeOtherOpeners(PathOf(name));
    if (!openers.ok()) return Fail(openers.status());
    if (*openers == OpenersProbe::kSome) return Keep({name});
    if (*openers == OpenersProbe::kNone) Remove(name);
  }

  void Unknown(const std::string& name) {
    report_.errors.push_back(absl::StrCat(
        name, ": not a Fast-DDS 2.9 shared-memory file name; left alone"));
  }

  void Fail(const absl::Status& status) {
    report_.errors.push_back(std::string(status.message()));
  }

  ShmCleanupReport Take() && {
    for (auto* names :
         {&report_.removed, &report_.kept_in_use, &report_.errors}) {
      std::sort(names->begin(), names->end());
      names->erase(std::unique(names->begin(), names->end()), names->end());
    }
    return std::move(report_);
  }

 private:
  // REQUIRES: the port's mutex is held. Returns whether the port was dead;
  // its files, all but the mutex, are then removed.
  bool RemovePortIfDead(uint32_t port,
                        const std::vector<std::string>& present) {
    const std::string ring = PortFileName(port);
    const std::string reader_lock = PortReaderLockFileName(port);
    const std::string readers_lock = PortReadersLockFileName(port);
    UniqueFd reader_held;
    const absl::StatusOr<LockProbe> reader =
        TryLockExclusive(PathOf(reader_lock), &reader_held);
    if (!reader.ok()) {
      Fail(reader.status());
      return false;
    }
    if (*reader == LockProbe::kHeldElsewhere) {
      Keep(present);
      return false;
    }
    UniqueFd readers_held;
    const absl::StatusOr<LockProbe> readers =
        TryLockExclusive(PathOf(readers_lock), &readers_held);
    if (!readers.ok()) {
      Fail(readers.status());
      return false;
    }
    if (*readers == LockProbe::kHeldElsewhere) {
      Keep(present);
      return false;
    }
    const absl::StatusOr<OpenersProbe> openers =
        ProbeOtherOpeners(PathOf(ring));
    if (!openers.ok()) {
      Fail(openers.status());
      return false;
    }
    if (*openers == OpenersProbe::kSome) {
      Keep(present);
      return false;
    }
    if (*openers == OpenersProbe::kNone) Remove(ring);
    if (*reader == LockProbe::kAcquired) Remove(reader_lock);
    if (*readers == LockProbe::kAcquired) Remove(readers_lock);
    return true;
  }

  void Keep(const std::vector<std::string>& names) {
    report_.kept_in_use.insert(report_.kept_in_use.end(), names.begin(),
                               names.end());
  }

  // A name another cleaner removed first is not reported by this one.
  void Remove(const std::string& name) {
    if (unlink(PathOf(name).c_str()) == 0) {
      report_.removed.push_back(name);
    } else if (errno != ENOENT) {
      report_.errors.push_back(
          absl::StrCat(name, ": unlink: ", std::strerror(errno)));
    }
  }

  ShmCleanupReport report_;
};

}  // namespace

ShmCleanupReport RemoveDeadPeerSegments() {
  Cleaner cleaner;
  std::vector<std::string> listing_errors;
  const Listing listing = ListFastDdsFiles(&listing_errors);
  for (const std::string& error : listing_errors) {
    cleaner.Fail(absl::InternalError(error));
  }
  for (const auto& [id, present] : listing.segments)
    cleaner.Segment(id, present);
  for (const auto& [port, present] : listing.ports) cleaner.Port(port, present);
  for (const std::string& name : listing.pools) cleaner.Pool(name);
  for (const std::string& name : listing.unknown) cleaner.Unknown(name);
  return std::move(cleaner).Take();
}

std::vector<std::string> FastDdsShmFiles(const std::string& dir) {
  std::vector<std::string> files;
  if (auto names = ListDirectory(dir)) {
    for (std::string& name : *names) {
      if (HasFastDdsShmPrefix(name)) files.push_back(std::move(name));
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace dds
}  // namespace cyber
