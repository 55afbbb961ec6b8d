#include "cyber/transport/loan/loan_segment.h"

#include <fcntl.h>
#include <signal.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cerrno>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace cyber {
namespace loan {
namespace {

// A reader process: a child that pins `slot` at `generation` in `segment`
// and waits to be killed. Its pid once it holds the pin; -1 if it could not.
pid_t ReaderHoldingAPin(const std::string& segment, uint32_t slot, uint32_t generation,
                        uint64_t size) {
  int ready[2];
  if (pipe(ready) != 0) return -1;
  const pid_t child = fork();
  if (child == 0) {
    auto mapping = LoanMapping::Open(segment);
    const bool pinned = mapping.ok() && (*mapping)->Pin(slot, generation, size).ok();
    const char answer = pinned ? 'p' : 'x';
    if (write(ready[1], &answer, 1) != 1) _exit(2);
    pause();
    _exit(0);
  }
  char answer = 0;
  const bool read_it = child > 0 && read(ready[0], &answer, 1) == 1;
  close(ready[0]);
  close(ready[1]);
  if (child > 0 && (!read_it || answer != 'p')) {
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
    return -1;
  }
  return child;
}

bool Exists(const std::string& name) {
  return access(absl::StrCat("/dev/shm/", name).c_str(), F_OK) == 0;
}

std::string Message(const absl::Status& s) { return std::string(s.message()); }

TEST(LoanSegmentTest, AReaderSeesTheWritersBytesInPlace) {
  auto segment = LoanSegment::Create("/camera", 4, 4096);
  ASSERT_TRUE(segment.ok()) << segment.status();
  EXPECT_TRUE(Exists((*segment)->name()));
  absl::StatusOr<SlotClaim> claim = (*segment)->Claim();
  ASSERT_TRUE(claim.ok()) << claim.status();
  EXPECT_EQ(claim->generation % 2, 1u);
  std::memset(claim->data, 0x5a, 4096);
  const uint32_t generation = (*segment)->Publish(*claim, 1, /*local_pin=*/false).generation;

  auto mapping = LoanMapping::Open((*segment)->name());
  ASSERT_TRUE(mapping.ok()) << mapping.status();
  EXPECT_EQ((*mapping)->channel(), "/camera");
  EXPECT_EQ((*mapping)->slots(), 4u);
  absl::StatusOr<const uint8_t*> data = (*mapping)->Pin(claim->slot, generation, 4096);
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ((*data)[0], 0x5a);
  EXPECT_EQ((*data)[4095], 0x5a);
  // The same memory, not a copy: a write on the writer's side shows.
  claim->data[100] = 0x11;
  EXPECT_EQ((*data)[100], 0x11);
  EXPECT_EQ((*segment)->PinnedSlots(), 1);
  (*mapping)->Unpin(claim->slot);
  EXPECT_EQ((*segment)->PinnedSlots(), 0);
}

TEST(LoanSegmentTest, APinnedSlotIsNeverClaimedAndAReusedOneIsRefused) {
  auto segment = LoanSegment::Create("/lidar", 3, 64);
  ASSERT_TRUE(segment.ok());
  auto mapping = LoanMapping::Open((*segment)->name());
  ASSERT_TRUE(mapping.ok());
  absl::StatusOr<SlotClaim> first = (*segment)->Claim();
  ASSERT_TRUE(first.ok());
  const uint32_t first_generation = (*segment)->Publish(*first, 1, false).generation;
  ASSERT_TRUE((*mapping)->Pin(first->slot, first_generation, 64).ok());
  absl::StatusOr<SlotClaim> second = (*segment)->Claim();
  ASSERT_TRUE(second.ok());
  const uint32_t second_generation = (*segment)->Publish(*second, 1, false).generation;
  for (int i = 0; i < 20; ++i) {
    absl::StatusOr<SlotClaim> c = (*segment)->Claim();
    ASSERT_TRUE(c.ok()) << c.status();
    EXPECT_NE(c->slot, first->slot) << "a pinned slot was claimed";
    (*segment)->Publish(*c, 1, false);
  }
  // The second message's slot was written over since: refused, not torn.
  absl::StatusOr<const uint8_t*> stale = (*mapping)->Pin(second->slot, second_generation, 64);
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(Message(stale.status()).find(absl::StrCat("not ", second_generation)),
            std::string::npos)
      << stale.status();
  EXPECT_NE(Message(stale.status()).find("\"/lidar\""), std::string::npos);
  (*mapping)->Unpin(first->slot);
}

TEST(LoanSegmentTest, WhenEverySlotIsHeldTheWriterIsToldWhy) {
  auto segment = LoanSegment::Create("/points", 2, 64);
  ASSERT_TRUE(segment.ok());
  auto mapping = LoanMapping::Open((*segment)->name());
  ASSERT_TRUE(mapping.ok());
  absl::StatusOr<SlotClaim> a = (*segment)->Claim();
  ASSERT_TRUE(a.ok());
  const uint32_t ga = (*segment)->Publish(*a, 1, false).generation;
  ASSERT_TRUE((*mapping)->Pin(a->slot, ga, 1).ok());
  absl::StatusOr<SlotClaim> b = (*segment)->Claim();  // loaned, not published
  ASSERT_TRUE(b.ok());
  absl::StatusOr<SlotClaim> none = (*segment)->Claim();
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(Message(none.status()).find("\"/points\": all 2 slots are in use (1 held by "
                                        "readers, 1 loaned and not yet published)"),
            std::string::npos)
      << none.status();
  EXPECT_NE(Message(none.status()).find((*segment)->name()), std::string::npos);
  // A live reader in this very process is not taken for a dead one.
  EXPECT_EQ((*segment)->ReclaimDeadReaders(), 0);
  (*segment)->Abandon(*b);
  EXPECT_TRUE((*segment)->Claim().ok());
  (*mapping)->Unpin(a->slot);
}

TEST(LoanSegmentTest, TheWritersOwnReadersHoldTheSlotUntilReleased) {
  auto segment = LoanSegment::Create("/c", 1, 64);
  ASSERT_TRUE(segment.ok());
  absl::StatusOr<SlotClaim> a = (*segment)->Claim();
  ASSERT_TRUE(a.ok());
  (*segment)->Publish(*a, 1, /*local_pin=*/true);
  EXPECT_FALSE((*segment)->Claim().ok());
  (*segment)->ReleaseLocalPin(a->slot);
  EXPECT_TRUE((*segment)->Claim().ok());
}

TEST(LoanSegmentTest, PinsTakenTwiceInOneProcessHoldUntilTheLastUnpin) {
  auto segment = LoanSegment::Create("/c", 1, 64);
  ASSERT_TRUE(segment.ok());
  auto mapping = LoanMapping::Open((*segment)->name());
  ASSERT_TRUE(mapping.ok());
  absl::StatusOr<SlotClaim> a = (*segment)->Claim();
  ASSERT_TRUE(a.ok());
  const uint32_t g = (*segment)->Publish(*a, 1, false).generation;
  ASSERT_TRUE((*mapping)->Pin(0, g, 64).ok());
  ASSERT_TRUE((*mapping)->Pin(0, g, 64).ok());
  (*mapping)->Unpin(0);
  EXPECT_FALSE((*segment)->Claim().ok());
  (*mapping)->Unpin(0);
  EXPECT_TRUE((*segment)->Claim().ok());
}

TEST(LoanSegmentTest, AReaderKilledWithNineHoldingAPinLosesIt) {
  auto segment = LoanSegment::Create("/camera", 1, 4096);
  ASSERT_TRUE(segment.ok());
  absl::StatusOr<SlotClaim> a = (*segment)->Claim();
  ASSERT_TRUE(a.ok());
  const uint32_t g = (*segment)->Publish(*a, 1, false).generation;
  const pid_t child = ReaderHoldingAPin((*segment)->name(), 0, g, 4096);
  ASSERT_GT(child, 0) << "the child could not pin";
  EXPECT_EQ((*segment)->ReclaimDeadReaders(), 0) << "the child is alive";
  EXPECT_EQ((*segment)->PinnedSlots(), 1);
  kill(child, SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  // Claim finds the slot pinned, clears the dead reader's pin, and takes it
  // (once the kernel has dropped the child's lock: that can come a moment
  // after waitpid, when another process held the child's memory map, e.g.
  // reading its /proc/<pid>/cmdline, and so the mapped file).
  absl::StatusOr<SlotClaim> b = (*segment)->Claim();
  for (int i = 0; i < 10000 && !b.ok(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    b = (*segment)->Claim();
  }
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->slot, 0u);
}

// A dead reader's pins come off while other slots are still free: its
// slot is back in the writer's rotation within 64 claims (a writer that
// waited until every slot was pinned would rotate over fewer slots, giving
// live readers less time).
TEST(LoanSegmentTest, ADeadReadersSlotComesBackBeforeEverySlotIsHeld) {
  auto segment = LoanSegment::Create("/camera", 4, 64);
  ASSERT_TRUE(segment.ok());
  absl::StatusOr<SlotClaim> a = (*segment)->Claim();
  ASSERT_TRUE(a.ok());
  const uint32_t slot = a->slot;
  const uint32_t g = (*segment)->Publish(*a, 1, false).generation;
  const pid_t child = ReaderHoldingAPin((*segment)->name(), slot, g, 1);
  ASSERT_GT(child, 0) << "the child could not pin";
  kill(child, SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  // Within 64 claims of the kernel dropping the child's lock (a moment
  // after waitpid at worst: see AReaderKilledWithNineHoldingAPinLosesIt).
  bool back = false;
  for (int i = 0; i < 10000 && !back; ++i) {
    absl::StatusOr<SlotClaim> c = (*segment)->Claim();
    ASSERT_TRUE(c.ok()) << c.status();
    back = c->slot == slot;
    (*segment)->Publish(*c, 1, false);
    if (i > 70) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_TRUE(back) << "slot " << slot << " stayed pinned by the dead reader";
  EXPECT_EQ((*segment)->PinnedSlots(), 0);
}

// A /dev/shm too small for the segment (a container's 64 MB; 1 MiB here,
// in a mount namespace of a child process): ResourceExhausted at Create,
// naming the size, never SIGBUS at the first write.
TEST(LoanSegmentTest, ADevShmTooSmallIsAnErrorAtCreateNotASigbusLater) {
  int result[2];
  ASSERT_EQ(pipe(result), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::string answer;
    if (unshare(CLONE_NEWNS) != 0 ||
        mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        mount("tmpfs", "/dev/shm", "tmpfs", 0, "size=1m") != 0) {
      answer = absl::StrCat("m", std::strerror(errno));
    } else {
      auto segment = LoanSegment::Create("/camera", 4, 1 << 20);
      if (segment.ok()) {
        // Had Create left the file sparse, this write would raise SIGBUS.
        absl::StatusOr<SlotClaim> c = (*segment)->Claim();
        if (c.ok()) std::memset(c->data, 1, 1 << 20);
        answer = "o";
      } else {
        answer = absl::StrCat(segment.status().code() == absl::StatusCode::kResourceExhausted
                                  ? "r"
                                  : "e",
                              segment.status().message());
      }
    }
    if (write(result[1], answer.data(), answer.size()) < 0) _exit(2);
    _exit(0);
  }
  close(result[1]);
  std::string answer;
  char buf[512];
  ssize_t n;
  while ((n = read(result[0], buf, sizeof(buf))) > 0) answer.append(buf, n);
  close(result[0]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died of signal " << WTERMSIG(status);
  ASSERT_FALSE(answer.empty());
  if (answer[0] == 'm') {
    // Not root, or a sandbox without mount namespaces (CI runs as root).
    GTEST_SKIP() << "cannot mount a small /dev/shm here: " << answer.substr(1);
  }
  ASSERT_EQ(answer[0], 'r') << answer;
  EXPECT_NE(answer.find("cannot reserve"), std::string::npos) << answer;
  EXPECT_NE(answer.find("\"/camera\""), std::string::npos) << answer;
}

TEST(LoanSegmentTest, ANewReaderOnADeadReadersEntryClearsItsPins) {
  auto segment = LoanSegment::Create("/c", 1, 64);
  ASSERT_TRUE(segment.ok());
  absl::StatusOr<SlotClaim> a = (*segment)->Claim();
  ASSERT_TRUE(a.ok());
  const uint32_t g = (*segment)->Publish(*a, 1, false).generation;
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto mapping = LoanMapping::Open((*segment)->name());
    if (!mapping.ok() || !(*mapping)->Pin(0, g, 1).ok()) _exit(1);
    _exit(0);  // dies holding the pin (no destructors run)
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ((*segment)->PinnedSlots(), 1);
  // Entry 0 is free once the kernel has dropped the child's lock (a moment
  // after waitpid at worst: see AReaderKilledWithNineHoldingAPinLosesIt).
  auto mapping = LoanMapping::Open((*segment)->name());
  for (int i = 0; i < 10000 && mapping.ok() && (*mapping)->entry() != 0; ++i) {
    mapping = absl::UnknownError("");  // let go of entry 1 first
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    mapping = LoanMapping::Open((*segment)->name());
  }
  ASSERT_TRUE(mapping.ok());
  EXPECT_EQ((*mapping)->entry(), 0);
  EXPECT_EQ((*segment)->PinnedSlots(), 0);
}

TEST(LoanSegmentTest, AWriterLeavesNothingInDevShm) {
  std::string name;
  {
    auto segment = LoanSegment::Create("/c", 2, 1 << 20);
    ASSERT_TRUE(segment.ok());
    name = (*segment)->name();
    EXPECT_TRUE(Exists(name));
  }
  EXPECT_FALSE(Exists(name));
  absl::StatusOr<std::shared_ptr<LoanMapping>> gone = LoanMapping::Open(name);
  EXPECT_EQ(gone.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(Message(gone.status()).find("its writer is gone"), std::string::npos);
}

TEST(LoanSegmentTest, AWriterKilledWithNineIsSweptAndALiveOneIsNot) {
  auto live = LoanSegment::Create("/live", 1, 64);
  ASSERT_TRUE(live.ok());
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto segment = LoanSegment::Create("/dead", 1, 64);
    if (!segment.ok()) _exit(1);
    const std::string& n = (*segment)->name();
    const uint8_t len = static_cast<uint8_t>(n.size());
    if (write(ready[1], &len, 1) != 1 || write(ready[1], n.data(), n.size()) < 0) _exit(2);
    pause();
    _exit(0);
  }
  uint8_t len = 0;
  ASSERT_EQ(read(ready[0], &len, 1), 1);
  std::string dead(len, '\0');
  ASSERT_EQ(read(ready[0], dead.data(), len), len);
  close(ready[0]);
  close(ready[1]);
  SweepAbandonedSegments();
  EXPECT_TRUE(Exists(dead)) << "swept while its writer lived";
  kill(child, SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  // (Another test process's sweep may remove it first: only "gone after a
  // sweep" is asserted; the kernel may drop the child's lock a moment after
  // waitpid, see AReaderKilledWithNineHoldingAPinLosesIt.)
  SweepAbandonedSegments();
  for (int i = 0; i < 10000 && Exists(dead); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    SweepAbandonedSegments();
  }
  EXPECT_FALSE(Exists(dead));
  EXPECT_TRUE(Exists((*live)->name()));
}

TEST(LoanSegmentTest, BadGeometryIsRefusedNamingTheFieldAndValue) {
  auto zero = LoanSegment::Create("/cam", 0, 64);
  EXPECT_EQ(zero.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(Message(zero.status()).find("channel \"/cam\": slots 0 is outside 1..256"),
            std::string::npos)
      << zero.status();
  EXPECT_NE(Message(LoanSegment::Create("/cam", 300, 64).status()).find("slots 300"),
            std::string::npos);
  EXPECT_NE(Message(LoanSegment::Create("/cam", 1, 0).status()).find("slot_bytes 0"),
            std::string::npos);
  EXPECT_NE(Message(LoanSegment::Create("/cam", 1, (uint64_t{1} << 30) + 1).status())
                .find("slot_bytes 1073741825"),
            std::string::npos);
  EXPECT_NE(Message(LoanSegment::Create("/cam", 256, uint64_t{1} << 30).status())
                .find("over the 16 GiB"),
            std::string::npos);
}

TEST(LoanSegmentTest, ABadReferenceOrFileIsRefusedNamingIt) {
  auto segment = LoanSegment::Create("/c", 2, 64);
  ASSERT_TRUE(segment.ok());
  auto mapping = LoanMapping::Open((*segment)->name());
  ASSERT_TRUE(mapping.ok());
  auto past = (*mapping)->Pin(2, 2, 1);
  EXPECT_EQ(past.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_NE(Message(past.status()).find("slot 2 is past its 2 slots"), std::string::npos);
  auto big = (*mapping)->Pin(0, 0, 65);
  EXPECT_NE(Message(big.status()).find("size 65 is over its slot_bytes 64"), std::string::npos);
  auto odd = (*mapping)->Pin(0, 3, 1);
  EXPECT_EQ(odd.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(Message(odd.status()).find("generation 3 is not a published one"),
            std::string::npos)
      << odd.status();
  EXPECT_EQ(LoanMapping::Open("../etc/passwd").status().code(),
            absl::StatusCode::kInvalidArgument);
  // A file under our prefix that is not a segment.
  // Named at random: test processes in other sandboxes share /dev/shm, and
  // each may be pid 12 in its own.
  const std::string fake =
      absl::StrCat(kSegmentPrefix, "fake.", std::random_device()(), ".", getpid());
  int fd = -1;
  // Held as a live writer holds its segment, so no sweep removes it; a
  // sweep of another test process may remove the file before the lock is
  // taken (it sees an empty file with no owner): then again.
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    fd = shm_open(("/" + fake).c_str(), O_CREAT | O_RDWR, 0600);
    ASSERT_GE(fd, 0);
    struct flock owner;
    std::memset(&owner, 0, sizeof(owner));
    owner.l_type = F_WRLCK;
    owner.l_whence = SEEK_SET;
    owner.l_start = 64;
    owner.l_len = 1;
    ASSERT_EQ(fcntl(fd, F_OFD_SETLK, &owner), 0);
    struct stat by_fd;
    struct stat by_name;
    if (fstat(fd, &by_fd) != 0 || stat(("/dev/shm/" + fake).c_str(), &by_name) != 0 ||
        by_fd.st_ino != by_name.st_ino) {
      close(fd);
      fd = -1;
    }
  }
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, 8192), 0);
  auto bad = LoanMapping::Open(fake);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(Message(bad.status()).find("magic"), std::string::npos) << bad.status();
  close(fd);
  shm_unlink(("/" + fake).c_str());
}

// A writer publishing flat out and a reader pinning what it last saw: the
// reader reads a slot only while pinned, and then every byte is the one of
// the generation it pinned (never a half-written slot).
TEST(LoanSegmentTest, UnderRacesAPinnedSlotIsNeverTorn) {
  constexpr uint64_t kBytes = 16384;
  auto segment = LoanSegment::Create("/race", 4, kBytes);
  ASSERT_TRUE(segment.ok());
  auto mapping = LoanMapping::Open((*segment)->name());
  ASSERT_TRUE(mapping.ok());
  std::atomic<uint64_t> latest{0};  // slot << 32 | generation
  std::atomic<bool> done{false};
  std::atomic<uint64_t> pins_so_far{0};
  std::thread writer([&] {
    // Until the reader has pinned often (bounded, for a stalled reader).
    for (int i = 0; i < 2000000 && (i < 20000 || pins_so_far.load() < 200); ++i) {
      absl::StatusOr<SlotClaim> c = (*segment)->Claim();
      if (!c.ok()) continue;  // every slot pinned for a moment
      std::memset(c->data, static_cast<uint8_t>(c->generation + 1), kBytes);
      const uint32_t g = (*segment)->Publish(*c, 1, false).generation;
      latest.store((uint64_t{c->slot} << 32) | g, std::memory_order_release);
    }
    done.store(true);
  });
  uint64_t pinned = 0;
  uint64_t refused = 0;
  while (!done.load()) {
    const uint64_t l = latest.load(std::memory_order_acquire);
    if (l == 0) continue;
    const uint32_t slot = static_cast<uint32_t>(l >> 32);
    const uint32_t g = static_cast<uint32_t>(l);
    absl::StatusOr<const uint8_t*> data = (*mapping)->Pin(slot, g, kBytes);
    if (!data.ok()) {
      ASSERT_EQ(data.status().code(), absl::StatusCode::kDataLoss);
      ++refused;
      continue;
    }
    for (uint64_t k = 0; k < kBytes; k += 512) {
      ASSERT_EQ((*data)[k], static_cast<uint8_t>(g)) << "torn at byte " << k;
    }
    ASSERT_EQ((*data)[kBytes - 1], static_cast<uint8_t>(g));
    (*mapping)->Unpin(slot);
    ++pinned;
    pins_so_far.store(pinned);
  }
  writer.join();
  EXPECT_GT(pinned, 0u);
  RecordProperty("pinned", static_cast<int>(pinned));
  RecordProperty("refused", static_cast<int>(refused));
}


TEST(LoanSegmentTest, TheDoorbellRingHoldsTheLastPublishesInOrder) {
  auto segment = LoanSegment::Create("/ring", 4, 64);
  ASSERT_TRUE(segment.ok());
  auto mapping = LoanMapping::Open((*segment)->name());
  ASSERT_TRUE(mapping.ok());
  EXPECT_EQ((*mapping)->LastSequence(), 0u);
  Published none;
  EXPECT_FALSE((*mapping)->ReadRing(1, &none));
  const uint32_t bell = (*mapping)->Doorbell();
  std::vector<Published> sent;
  for (uint64_t i = 0; i < kRingEntries + 10; ++i) {
    absl::StatusOr<SlotClaim> c = (*segment)->Claim();
    ASSERT_TRUE(c.ok());
    sent.push_back((*segment)->Publish(*c, 10 + i, false));
    EXPECT_EQ(sent.back().sequence, i + 1);
  }
  EXPECT_EQ((*mapping)->Doorbell(), bell + kRingEntries + 10);
  EXPECT_EQ((*mapping)->LastSequence(), kRingEntries + 10);
  // The oldest ten are overwritten; the last 64 are there as published.
  for (uint64_t seq = 1; seq <= 10; ++seq) {
    Published p;
    EXPECT_FALSE((*mapping)->ReadRing(seq, &p)) << seq;
  }
  for (uint64_t seq = 11; seq <= kRingEntries + 10; ++seq) {
    Published p;
    ASSERT_TRUE((*mapping)->ReadRing(seq, &p)) << seq;
    EXPECT_EQ(p.slot, sent[seq - 1].slot);
    EXPECT_EQ(p.generation, sent[seq - 1].generation);
    EXPECT_EQ(p.size, sent[seq - 1].size);
  }
  EXPECT_FALSE((*mapping)->ReadRing(kRingEntries + 11, &none));
  EXPECT_TRUE((*mapping)->WriterAlive());
}

TEST(LoanSegmentTest, AWaiterOnTheDoorbellWakesAtAPublish) {
  auto segment = LoanSegment::Create("/bell", 2, 64);
  ASSERT_TRUE(segment.ok());
  auto mapping = LoanMapping::Open((*segment)->name());
  ASSERT_TRUE(mapping.ok());
  std::atomic<bool> woke{false};
  const uint32_t seen = (*mapping)->Doorbell();
  std::thread waiter([&] {
    // Waits (in slices: a wait may return early) until the bell changes.
    while ((*mapping)->Doorbell() == seen) (*mapping)->WaitDoorbell(seen, 1000);
    woke.store(true);
  });
  absl::StatusOr<SlotClaim> c = (*segment)->Claim();
  ASSERT_TRUE(c.ok());
  (*segment)->Publish(*c, 1, false);
  waiter.join();
  EXPECT_TRUE(woke.load());
}

TEST(LoanSegmentTest, AMappingSeesItsWriterGo) {
  auto segment = LoanSegment::Create("/c", 1, 64);
  ASSERT_TRUE(segment.ok());
  auto mapping = LoanMapping::Open((*segment)->name());
  ASSERT_TRUE(mapping.ok());
  EXPECT_TRUE((*mapping)->WriterAlive());
  segment->reset();
  EXPECT_FALSE((*mapping)->WriterAlive());
}

}  // namespace
}  // namespace loan
}  // namespace cyber
