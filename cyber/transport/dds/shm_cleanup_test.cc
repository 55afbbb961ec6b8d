// RemoveDeadPeerSegments against real Fast-DDS 2.9 participants:
//  * a child process killed with SIGKILL or SIGTERM leaves its files, and
//    the cleanup removes every one of them;
//  * live participants, in a child and in this very process, keep theirs
//    through a cleanup (flock probes conflict inside one process);
//  * a lock file locked by this very process is seen as held, and a memory
//    file without a lock file is kept while mapped; both are removed once
//    released.
//
// Isolation. Other tests may use /dev/shm meanwhile, cleanups included.
// Each test takes a random DDS domain in [1, 200] that has no port files,
// and looks only at its own participants' files: the lock files they hold
// (a child reports its own from /proc/self/fd), the memory file each lock
// guards and each port's mutex, identified by inode, so a file another
// process makes again under the same name is not taken for ours. Between a
// kill and the check that the files were left, the test keeps the memory
// files open read-write, which makes every cleanup (a concurrent test's
// too) keep them. Which cleanup then removes them is not asserted: a
// concurrent one may come first.
//
// Real time. Waiting for a child to come up is bounded by kTestWaitLimit
// and ends when the child says it is ready; nothing sleeps.
//
// Children. This binary run with --shm_cleanup_peer (posix_spawn): a
// participant that writes one sample and waits to be killed. PeerProcess
// kills and reaps it on every path out of a test, and PR_SET_PDEATHSIG
// kills it if this process dies first.

#include "cyber/transport/dds/shm_cleanup.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cyber/common/test_waits.h"
#include "cyber/transport/dds/fastdds_shm_names.h"
#include "cyber/transport/dds/testing/shm_test_participant.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

extern char** environ;

namespace cyber {
namespace dds {
namespace {

#if defined(__SANITIZE_THREAD__)
#define SHM_CLEANUP_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SHM_CLEANUP_TEST_TSAN 1
#endif
#endif

// libfastrtps is not built with ThreadSanitizer, which then sees only the
// part of its locking that goes through intercepted calls (pthread, and
// libstdc++'s) and reports mutexes "unlocked while not locked" inside it,
// in this process and in a child of this binary alike. Under TSan the tests
// that run a participant are skipped; the ones on hand-made files (which
// run the same cleanup code) still run.
#ifdef SHM_CLEANUP_TEST_TSAN
#define SKIP_IF_FASTDDS_UNDER_TSAN() \
  GTEST_SKIP()                       \
      << "runs libfastrtps, which TSan cannot follow (not instrumented)"
#else
#define SKIP_IF_FASTDDS_UNDER_TSAN() static_cast<void>(0)
#endif

using ::testing::Contains;
using ::testing::IsEmpty;

constexpr char kPeerFlag[] = "--shm_cleanup_peer";

// RTPS port numbering: domain d owns [7400 + 250 d, 7400 + 250 (d + 1)).
constexpr uint32_t kPortBase = 7400;
constexpr uint32_t kDomainGain = 250;

std::string ShmPath(const std::string& name) {
  return absl::StrCat(kFastDdsShmDir, "/", name);
}

bool Exists(const std::string& name) {
  struct stat st;
  return lstat(ShmPath(name).c_str(), &st) == 0;
}

// The /dev/shm files this process has open (a participant's lock files;
// its memory files are mapped, not open).
std::vector<std::string> HeldShmFiles() {
  std::vector<std::string> names;
  const std::string shm_prefix = absl::StrCat(kFastDdsShmDir, "/");
  DIR* fds = opendir("/proc/self/fd");
  if (fds == nullptr) return names;
  while (const dirent* entry = readdir(fds)) {
    char target[4096];
    const std::string link = absl::StrCat("/proc/self/fd/", entry->d_name);
    const ssize_t len = readlink(link.c_str(), target, sizeof(target));
    if (len <= 0) continue;
    const std::string path(target, static_cast<size_t>(len));
    if (absl::StartsWith(path, shm_prefix)) {
      names.push_back(path.substr(shm_prefix.size()));
    }
  }
  closedir(fds);
  return names;
}

bool PortInDomain(uint32_t port, int domain) {
  const uint32_t first =
      kPortBase + kDomainGain * static_cast<uint32_t>(domain);
  return port >= first && port < first + kDomainGain;
}

// A file as the kernel knows it (a name can be removed and made again).
struct FileIdentity {
  dev_t dev;
  ino_t ino;
};
using FileSet = std::map<std::string, FileIdentity>;

std::optional<FileIdentity> Identity(const std::string& name) {
  struct stat st;
  if (lstat(ShmPath(name).c_str(), &st) != 0) return std::nullopt;
  return FileIdentity{st.st_dev, st.st_ino};
}

bool IsMemoryFile(const std::string& name) {
  const auto parsed = ParseFastDdsShmName(name);
  return parsed && (parsed->kind == FastDdsShmName::Kind::kSegment ||
                    parsed->kind == FastDdsShmName::Kind::kPort);
}

// The files of a participant that holds the locks `held`: the locks, the
// memory file each guards and, for a port, its mutex. `expected` gets every
// name, `files` those that exist with their identity.
void ParticipantFiles(const std::vector<std::string>& held,
                      std::set<std::string>* expected, FileSet* files) {
  for (const std::string& name : held) {
    const auto parsed = ParseFastDdsShmName(name);
    if (!parsed) continue;
    expected->insert(name);
    switch (parsed->kind) {
      case FastDdsShmName::Kind::kSegmentLock:
        expected->insert(SegmentFileName(parsed->id));
        break;
      case FastDdsShmName::Kind::kPortReaderLock:
      case FastDdsShmName::Kind::kPortReadersLock:
        expected->insert(PortFileName(parsed->port));
        expected->insert(PortMutexFileName(parsed->port));
        break;
      default:
        break;
    }
  }
  for (const std::string& name : *expected) {
    if (auto identity = Identity(name)) (*files)[name] = *identity;
  }
}

// The names of `files` that still exist as the same file.
std::vector<std::string> StillThere(const FileSet& files) {
  std::vector<std::string> there;
  for (const auto& [name, identity] : files) {
    const auto now = Identity(name);
    if (now && now->dev == identity.dev && now->ino == identity.ino) {
      there.push_back(name);
    }
  }
  return there;
}

std::vector<std::string> Gone(const FileSet& files) {
  const std::vector<std::string> there = StillThere(files);
  std::vector<std::string> gone;
  for (const auto& entry : files) {
    if (std::find(there.begin(), there.end(), entry.first) == there.end()) {
      gone.push_back(entry.first);
    }
  }
  return gone;
}

// The memory files among `files`, open read-write until Release(): while
// they are, every cleanup keeps their groups (shm_cleanup.h, rule 2).
class PinnedFiles {
 public:
  explicit PinnedFiles(const FileSet& files) {
    for (const auto& entry : files) {
      if (!IsMemoryFile(entry.first)) continue;
      const int fd = open(ShmPath(entry.first).c_str(), O_RDWR | O_CLOEXEC);
      if (fd >= 0) fds_.push_back(fd);
    }
  }
  ~PinnedFiles() { Release(); }
  void Release() {
    for (int fd : fds_) close(fd);
    fds_.clear();
  }
  size_t size() const { return fds_.size(); }

 private:
  std::vector<int> fds_;
};

// A random domain in [1, 200] with no port file in /dev/shm, other than
// `not_this`.
int PickFreeDomain(int not_this = 0) {
  std::random_device seed;
  std::uniform_int_distribution<int> domains(1, 200);
  int domain = domains(seed);
  for (int attempt = 0; attempt < 50; ++attempt, domain = domains(seed)) {
    if (domain == not_this) continue;
    bool used = false;
    for (const std::string& name : FastDdsShmFiles()) {
      const auto parsed = ParseFastDdsShmName(name);
      used = used || (parsed && parsed->port != 0 &&
                      PortInDomain(parsed->port, domain));
    }
    if (!used) break;
  }
  return domain;
}

// Counts of what a lone Fast-DDS 2.9 participant holds, for the docs'
// claims: one segment lock, the _el of its unicast ports, the _sl of its
// domain's discovery port.
struct HeldKinds {
  int segment_locks = 0;
  int reader_locks = 0;
  int readers_locks = 0;
};

HeldKinds CountHeld(const std::vector<std::string>& held) {
  HeldKinds kinds;
  for (const std::string& name : held) {
    const auto parsed = ParseFastDdsShmName(name);
    if (!parsed) continue;
    kinds.segment_locks += parsed->kind == FastDdsShmName::Kind::kSegmentLock;
    kinds.reader_locks += parsed->kind == FastDdsShmName::Kind::kPortReaderLock;
    kinds.readers_locks +=
        parsed->kind == FastDdsShmName::Kind::kPortReadersLock;
  }
  return kinds;
}

// --- The child ---------------------------------------------------------------

// Creates a participant, writes a sample, reports the lock files it holds
// ("held <name>" lines, then "ready") and waits to be killed.
int RunPeer(int domain, pid_t parent) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) return 1;  // the parent died before prctl
  auto participant = ShmTestParticipant::Create(domain);
  if (!participant.ok()) {
    std::printf("error %s\n", participant.status().ToString().c_str());
    return 1;
  }
  const absl::Status published = (*participant)->Publish("hello");
  if (!published.ok()) {
    std::printf("error %s\n", published.ToString().c_str());
    return 1;
  }
  for (const std::string& name : HeldShmFiles()) {
    std::printf("held %s\n", name.c_str());
  }
  std::printf("ready\n");
  std::fflush(stdout);
  for (;;) pause();
}

// --- The parent's handle on a child ------------------------------------------

class PeerProcess {
 public:
  // Starts a child with a participant in `domain` and waits, up to
  // kTestWaitLimit, until it reports ready.
  static absl::StatusOr<std::unique_ptr<PeerProcess>> Start(int domain) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
      return absl::InternalError(absl::StrCat("pipe2: ", std::strerror(errno)));
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    // Fast-DDS opens its lock files without O_CLOEXEC: a child must not
    // inherit (and so keep alive) the flocks of this process's participants.
    posix_spawn_file_actions_addclosefrom_np(&actions, STDERR_FILENO + 1);
    std::string name = "shm_cleanup_test";
    std::string flag = kPeerFlag;
    std::string domain_arg = std::to_string(domain);
    std::string parent_arg = std::to_string(getpid());
    char* argv[] = {name.data(), flag.data(), domain_arg.data(),
                    parent_arg.data(), nullptr};
    pid_t pid = 0;
    const int spawned =
        posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    close(fds[1]);
    if (spawned != 0) {
      close(fds[0]);
      return absl::InternalError(
          absl::StrCat("posix_spawn: ", std::strerror(spawned)));
    }
    std::unique_ptr<PeerProcess> peer(new PeerProcess(pid, fds[0]));
    const absl::Status ready = peer->AwaitReady();
    if (!ready.ok()) return ready;
    return peer;
  }

  ~PeerProcess() {
    if (running_) KillWith(SIGKILL);
    close(out_);
  }

  // Sends `signal` and reaps the child. True if it died of that signal.
  ::testing::AssertionResult KillWith(int signal) {
    kill(pid_, signal);
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    running_ = false;
    if (WIFSIGNALED(status) && WTERMSIG(status) == signal) {
      return ::testing::AssertionSuccess();
    }
    return ::testing::AssertionFailure()
           << "peer " << pid_ << " ended with status " << status
           << ", not by signal " << signal;
  }

  // The /dev/shm files the child had open when it became ready.
  const std::vector<std::string>& held() const { return held_; }

 private:
  PeerProcess(pid_t pid, int out) : pid_(pid), out_(out) {}

  absl::Status AwaitReady() {
    const auto limit = std::chrono::steady_clock::now() + test::kTestWaitLimit;
    std::string pending;
    for (;;) {
      size_t end;
      while ((end = pending.find('\n')) != std::string::npos) {
        const std::string line = pending.substr(0, end);
        pending.erase(0, end + 1);
        if (line == "ready") return absl::OkStatus();
        if (absl::StartsWith(line, "held ")) held_.push_back(line.substr(5));
        if (absl::StartsWith(line, "error ")) {
          return absl::InternalError(absl::StrCat("peer: ", line.substr(6)));
        }
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          limit - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        return absl::DeadlineExceededError(
            absl::StrCat("peer ", pid_, " not ready within ",
                         test::kTestWaitLimit.count(), " s"));
      }
      pollfd poll_fd{out_, POLLIN, 0};
      const int polled = poll(&poll_fd, 1, static_cast<int>(left.count()));
      if (polled < 0 && errno != EINTR) {
        return absl::InternalError(
            absl::StrCat("poll: ", std::strerror(errno)));
      }
      if (polled <= 0) continue;
      char buffer[4096];
      const ssize_t len = read(out_, buffer, sizeof(buffer));
      if (len == 0) {
        return absl::InternalError(
            absl::StrCat("peer ", pid_, " closed its output before ready"));
      }
      if (len > 0) pending.append(buffer, static_cast<size_t>(len));
    }
  }

  const pid_t pid_;
  const int out_;
  bool running_ = true;
  std::vector<std::string> held_;
};

// --- The tests ---------------------------------------------------------------

class ShmCleanupTest : public ::testing::Test {
 protected:
  // Sweeps what a failed test's dead children left (their files are dead).
  void TearDown() override { RemoveDeadPeerSegments(); }
};

class KilledPeerTest : public ShmCleanupTest,
                       public ::testing::WithParamInterface<int> {};

TEST_P(KilledPeerTest, LeavesItsFilesAndTheCleanupRemovesThem) {
  SKIP_IF_FASTDDS_UNDER_TSAN();
  const int domain = PickFreeDomain();
  absl::StatusOr<std::unique_ptr<PeerProcess>> peer =
      PeerProcess::Start(domain);
  ASSERT_TRUE(peer.ok()) << peer.status();
  const HeldKinds held = CountHeld((*peer)->held());
  EXPECT_EQ(held.segment_locks, 1);
  EXPECT_GE(held.reader_locks, 1);
  EXPECT_GE(held.readers_locks, 1);
  std::set<std::string> expected;
  FileSet files;
  ParticipantFiles((*peer)->held(), &expected, &files);
  ASSERT_EQ(files.size(), expected.size())
      << "a file of the live peer is missing";
  PinnedFiles pinned(files);
  ASSERT_EQ(pinned.size(),
            static_cast<size_t>(1 + held.reader_locks + held.readers_locks));

  ASSERT_TRUE((*peer)->KillWith(GetParam()));
  EXPECT_THAT(Gone(files), IsEmpty())
      << "Fast-DDS removed files of a participant killed by signal "
      << GetParam() << "; this cleanup would not be needed";

  pinned.Release();
  RemoveDeadPeerSegments();
  EXPECT_THAT(StillThere(files), IsEmpty());
}

INSTANTIATE_TEST_SUITE_P(Signals, KilledPeerTest,
                         ::testing::Values(SIGKILL, SIGTERM),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::string(sigabbrev_np(info.param));
                         });

TEST_F(ShmCleanupTest, LiveParticipantsKeepTheirFilesThroughACleanup) {
  SKIP_IF_FASTDDS_UNDER_TSAN();
  const int peer_domain = PickFreeDomain();
  const int own_domain = PickFreeDomain(peer_domain);
  absl::StatusOr<std::unique_ptr<PeerProcess>> peer =
      PeerProcess::Start(peer_domain);
  ASSERT_TRUE(peer.ok()) << peer.status();
  // A participant of this process: its locks are flocks taken through this
  // process's own descriptors, which the cleanup's probes must still see.
  absl::StatusOr<std::unique_ptr<ShmTestParticipant>> own =
      ShmTestParticipant::Create(own_domain);
  ASSERT_TRUE(own.ok()) << own.status();
  ASSERT_TRUE((*own)->Publish("hello").ok());

  std::set<std::string> expected;
  FileSet files;
  ParticipantFiles((*peer)->held(), &expected, &files);
  const std::vector<std::string> own_held = HeldShmFiles();
  EXPECT_EQ(CountHeld(own_held).segment_locks, 1);
  ParticipantFiles(own_held, &expected, &files);
  ASSERT_EQ(files.size(), expected.size())
      << "a file of a live participant is missing";

  const ShmCleanupReport report = RemoveDeadPeerSegments();
  EXPECT_THAT(Gone(files), IsEmpty());
  for (const auto& entry : files) {
    EXPECT_THAT(report.kept_in_use, Contains(entry.first));
  }

  // Both go: the child killed, ours deleted (Fast-DDS removes its files).
  EXPECT_TRUE((*peer)->KillWith(SIGKILL));
  own->reset();
  RemoveDeadPeerSegments();
  EXPECT_THAT(StillThere(files), IsEmpty());
}

// A segment id no participant uses.
std::string RandomSegmentId() {
  std::random_device seed;
  return absl::StrFormat("%08x%08x", static_cast<uint32_t>(seed()),
                         static_cast<uint32_t>(seed()));
}

// A lock file whose memory file does not exist yet (its owner is between
// the two steps of creating a segment), locked by this very process: the
// cleanup's probe, through its own open(), must see the lock. A probe with
// POSIX fcntl locks would not (they never conflict within a process, nor
// with flock).
TEST_F(ShmCleanupTest, LockHeldInThisProcessIsSeen) {
  const std::string name = SegmentLockFileName(RandomSegmentId());
  const std::string path = ShmPath(name);
  const int fd =
      open(path.c_str(), O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0) << path << ": " << std::strerror(errno);
  struct Close {
    int fd;
    std::string path;
    ~Close() {
      if (fd >= 0) close(fd);
      unlink(path.c_str());
    }
  } guard{fd, path};
  ASSERT_EQ(flock(fd, LOCK_EX | LOCK_NB), 0) << std::strerror(errno);

  const ShmCleanupReport while_locked = RemoveDeadPeerSegments();
  EXPECT_TRUE(Exists(name));
  EXPECT_THAT(while_locked.kept_in_use, Contains(name));

  close(guard.fd);  // drops the lock, as the death of its owner would
  guard.fd = -1;
  RemoveDeadPeerSegments();
  EXPECT_FALSE(Exists(name));
}

// A memory file whose lock file is gone (or that never had one: a port only
// writers opened, a data-sharing pool) is judged by whether anyone maps it.
TEST_F(ShmCleanupTest, SegmentWithoutLockIsKeptWhileMappedAndRemovedAfter) {
  const std::string name = SegmentFileName(RandomSegmentId());
  const std::string path = ShmPath(name);
  const int fd =
      open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0) << path << ": " << std::strerror(errno);
  constexpr size_t kSize = 4096;
  const bool sized = ftruncate(fd, kSize) == 0;
  void* mapping =
      sized ? mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
            : MAP_FAILED;
  close(fd);  // the mapping keeps the file open, as in Fast-DDS
  struct Unmap {
    void* mapping;
    std::string path;
    ~Unmap() {
      if (mapping != MAP_FAILED) munmap(mapping, kSize);
      unlink(path.c_str());
    }
  } guard{mapping, path};
  ASSERT_NE(mapping, MAP_FAILED) << path << ": " << std::strerror(errno);

  const ShmCleanupReport while_mapped = RemoveDeadPeerSegments();
  EXPECT_TRUE(Exists(name));
  EXPECT_THAT(while_mapped.kept_in_use, Contains(name));

  munmap(guard.mapping, kSize);
  guard.mapping = MAP_FAILED;
  RemoveDeadPeerSegments();
  EXPECT_FALSE(Exists(name));
}

}  // namespace
}  // namespace dds
}  // namespace cyber

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], cyber::dds::kPeerFlag) == 0) {
    return cyber::dds::RunPeer(std::atoi(argv[2]),
                               static_cast<pid_t>(std::atoi(argv[3])));
  }
  ::testing::InitGoogleMock(&argc, argv);
  return RUN_ALL_TESTS();
}
