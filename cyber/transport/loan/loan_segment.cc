#include "cyber/transport/loan/loan_segment.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <ctime>
#include <random>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cyber/common/log.h"

namespace cyber {
namespace loan {
namespace {

// Page 0 of a segment: the header, then the slot words; page 1: the
// doorbell's ring; slots from page 2.
constexpr uint64_t kMagic = 0x31304e414f4c5943ull;  // "CYLOAN01"
constexpr uint32_t kVersion = 1;
constexpr size_t kPage = 4096;
constexpr size_t kWordsOffset = 512;
constexpr size_t kRingOffset = kPage;
constexpr size_t kDataOffset = 2 * kPage;
constexpr off_t kOwnerLockByte = 64;
constexpr uint64_t kLocalPinBit = uint64_t{1} << 31;
constexpr uint64_t kPinMask = 0xffffffffull;

struct Header {
  std::atomic<uint64_t> magic;  // written last, with release
  uint32_t version;
  uint32_t slots;
  uint64_t slot_bytes;
  uint64_t slot_stride;
  uint64_t data_offset;
  char channel[256];
  std::atomic<uint32_t> doorbell;       // futex word: bumped by every publish
  std::atomic<uint64_t> last_sequence;  // the last publish's sequence
};
static_assert(sizeof(Header) <= kWordsOffset, "header fits before the words");

// A ring entry; `sequence` is set to 0, the fields written (release), then
// `sequence` (release); a reader loads `sequence`, the fields and `sequence`
// again (acquire): an entry overwritten meanwhile reads as missing (a
// seqlock without fences, which ThreadSanitizer does not model).
struct RingEntry {
  std::atomic<uint64_t> sequence;
  std::atomic<uint64_t> slot_and_generation;
  std::atomic<uint64_t> size;
  uint64_t reserved;
};
static_assert(sizeof(RingEntry) * kRingEntries <= kPage, "the ring fits page 1");
static_assert(std::atomic<uint32_t>::is_always_lock_free, "the doorbell is a futex word");

RingEntry* Ring(uint8_t* base) { return reinterpret_cast<RingEntry*>(base + kRingOffset); }

long Futex(const std::atomic<uint32_t>* word, int op, uint32_t value, const timespec* timeout) {
  // Shared (not FUTEX_PRIVATE_FLAG): waiters are in other processes.
  return syscall(SYS_futex, reinterpret_cast<const uint32_t*>(word), op, value, timeout,
                 nullptr, 0);
}
static_assert(kWordsOffset + kMaxSlots * sizeof(uint64_t) <= kPage,
              "the words of 256 slots fit in page 0");

uint64_t Stride(uint64_t slot_bytes) { return (slot_bytes + kPage - 1) / kPage * kPage; }

uint32_t GenerationOf(uint64_t word) { return static_cast<uint32_t>(word >> 32); }
uint64_t WordOf(uint32_t generation, uint64_t pins) {
  return (static_cast<uint64_t>(generation) << 32) | pins;
}

// An open-file-description lock on one byte: see the header comment.
struct flock ByteLock(off_t byte, short type) {
  struct flock fl;
  std::memset(&fl, 0, sizeof(fl));
  fl.l_type = type;
  fl.l_whence = SEEK_SET;
  fl.l_start = byte;
  fl.l_len = 1;
  return fl;
}

bool TryLockByte(int fd, off_t byte) {
  struct flock fl = ByteLock(byte, F_WRLCK);
  return fcntl(fd, F_OFD_SETLK, &fl) == 0;
}

void UnlockByte(int fd, off_t byte) {
  struct flock fl = ByteLock(byte, F_UNLCK);
  fcntl(fd, F_OFD_SETLK, &fl);
}

std::string ErrnoText(int err) { return std::strerror(err); }

std::string NewSegmentName() {
  static std::atomic<uint32_t> counter{0};
  std::random_device random;
  const uint32_t salt = random();
  char hex[9];
  std::snprintf(hex, sizeof(hex), "%08x", salt);
  return absl::StrCat(kSegmentPrefix, getpid(), ".", counter.fetch_add(1), ".", hex);
}

}  // namespace

absl::StatusOr<std::shared_ptr<LoanSegment>> LoanSegment::Create(
    absl::string_view channel, uint32_t slots, uint64_t slot_bytes) {
  const std::string who = absl::StrCat("loan segment of channel \"", channel, "\"");
  if (slots < 1 || slots > kMaxSlots) {
    return absl::InvalidArgumentError(
        absl::StrCat(who, ": slots ", slots, " is outside 1..", kMaxSlots));
  }
  if (slot_bytes < 1 || slot_bytes > kMaxSlotBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        who, ": slot_bytes ", slot_bytes, " is outside 1..", kMaxSlotBytes, " (1 GiB)"));
  }
  const uint64_t total = kDataOffset + Stride(slot_bytes) * slots;
  if (total > kMaxSegmentBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        who, ": slots ", slots, " x slot_bytes ", slot_bytes, " = ", total,
        " bytes is over the 16 GiB a segment may take"));
  }
  SweepAbandonedSegments();
  for (int attempt = 0; attempt < 8; ++attempt) {
    const std::string name = NewSegmentName();
    const std::string shm_name = "/" + name;
    const int fd = shm_open(shm_name.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) {
      if (errno == EEXIST) continue;
      return absl::InternalError(absl::StrCat(who, ": shm_open(\"", shm_name,
                                              "\"): ", ErrnoText(errno)));
    }
    // Our byte 64 before anything else; a sweeper that took it first (it
    // saw an empty file) makes us start again under another name.
    struct stat by_fd;
    struct stat by_name;
    if (!TryLockByte(fd, kOwnerLockByte) || fstat(fd, &by_fd) != 0 ||
        stat(absl::StrCat("/dev/shm/", name).c_str(), &by_name) != 0 ||
        by_fd.st_ino != by_name.st_ino) {
      close(fd);
      continue;
    }
    if (ftruncate(fd, static_cast<off_t>(total)) != 0) {
      const int err = errno;
      shm_unlink(shm_name.c_str());
      close(fd);
      return absl::ResourceExhaustedError(absl::StrCat(
          who, ": cannot size ", name, " to ", total, " bytes: ", ErrnoText(err)));
    }
    // Every page now: tmpfs sizes a file sparsely, and a /dev/shm too small
    // for it (a container's is 64 MB unless told otherwise) would otherwise
    // kill the writer with SIGBUS at its first write into a missing page.
    int reserved;
    do {
      reserved = posix_fallocate(fd, 0, static_cast<off_t>(total));
    } while (reserved == EINTR);
    if (reserved != 0) {
      shm_unlink(shm_name.c_str());
      close(fd);
      return absl::ResourceExhaustedError(absl::StrCat(
          who, ": cannot reserve ", total, " bytes for ", name, " in /dev/shm (slots ", slots,
          " x slot_bytes ", slot_bytes, "): ", ErrnoText(reserved),
          "; give /dev/shm more room (a container's is 64 MB by default) or the writer fewer "
          "or smaller slots"));
    }
    void* base = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
      const int err = errno;
      shm_unlink(shm_name.c_str());
      close(fd);
      return absl::ResourceExhaustedError(
          absl::StrCat(who, ": cannot map ", name, ": ", ErrnoText(err)));
    }
    auto* header = static_cast<Header*>(base);
    header->version = kVersion;
    header->slots = slots;
    header->slot_bytes = slot_bytes;
    header->slot_stride = Stride(slot_bytes);
    header->data_offset = kDataOffset;
    const size_t n = std::min(channel.size(), sizeof(header->channel) - 1);
    std::memcpy(header->channel, channel.data(), n);
    header->channel[n] = '\0';
    header->magic.store(kMagic, std::memory_order_release);
    return std::shared_ptr<LoanSegment>(new LoanSegment(std::make_unique<loan_internal::MappedFile>(
        name, std::string(channel), fd, static_cast<uint8_t*>(base), total, slots, slot_bytes)));
  }
  return absl::InternalError(
      absl::StrCat(who, ": no free segment name after 8 attempts in /dev/shm"));
}

namespace loan_internal {

MappedFile::MappedFile(std::string name_in, std::string channel_in, int fd_in, uint8_t* base_in,
                       size_t mapped_in, uint32_t slots_in, uint64_t slot_bytes_in)
    : name(std::move(name_in)),
      channel(std::move(channel_in)),
      fd(fd_in),
      base(base_in),
      mapped(mapped_in),
      slots(slots_in),
      slot_bytes(slot_bytes_in) {}

MappedFile::~MappedFile() {
  munmap(base, mapped);
  close(fd);
}

std::atomic<uint64_t>* MappedFile::word(uint32_t slot) const {
  return reinterpret_cast<std::atomic<uint64_t>*>(base + kWordsOffset) + slot;
}

uint8_t* MappedFile::slot_data(uint32_t slot) const {
  return base + kDataOffset + Stride(slot_bytes) * slot;
}

}  // namespace loan_internal

LoanSegment::~LoanSegment() {
  // The name goes first; file_ then unmaps and closes, dropping byte 64.
  shm_unlink(("/" + file_->name).c_str());
}

absl::StatusOr<SlotClaim> LoanSegment::Claim() {
  MutexLock lock(&claim_mu_);
  // A dead reader's pins leave its slots out of the rotation (later
  // readers get less time before a slot comes round again): looked for
  // every kReclaimEvery claims, and whenever no slot is free.
  if (++claims_since_reclaim_ >= kReclaimEvery) {
    claims_since_reclaim_ = 0;
    ReclaimDeadReaders();
  }
  for (int pass = 0; pass < 2; ++pass) {
    for (uint32_t k = 0; k < file_->slots; ++k) {
      const uint32_t i = (next_ + k) % file_->slots;
      uint64_t w = file_->word(i)->load(std::memory_order_acquire);
      const uint32_t generation = GenerationOf(w);
      if ((w & kPinMask) != 0 || (generation & 1) != 0) continue;
      if (!file_->word(i)->compare_exchange_strong(w, WordOf(generation + 1, 0),
                                            std::memory_order_acq_rel)) {
        continue;  // pinned just now
      }
      next_ = (i + 1) % file_->slots;
      return SlotClaim{i, generation + 1, file_->slot_data(i)};
    }
    if (pass == 0 && ReclaimDeadReaders() == 0) break;
  }
  int pinned = 0;
  int writing = 0;
  for (uint32_t i = 0; i < file_->slots; ++i) {
    const uint64_t w = file_->word(i)->load(std::memory_order_relaxed);
    pinned += (w & kPinMask) != 0;
    writing += (GenerationOf(w) & 1) != 0;
  }
  return absl::ResourceExhaustedError(absl::StrCat(
      "loan segment ", file_->name, " of channel \"", file_->channel, "\": all ", file_->slots,
      " slots are in use (", pinned, " held by readers, ", writing,
      " loaned and not yet published); readers keep messages too long, or the "
      "writer needs more slots"));
}

Published LoanSegment::Publish(const SlotClaim& claim, uint64_t size, bool local_pin) {
  const uint32_t generation = claim.generation + 1;
  file_->word(claim.slot)->store(WordOf(generation, local_pin ? kLocalPinBit : 0),
                          std::memory_order_release);
  Published published;
  published.slot = claim.slot;
  published.generation = generation;
  published.size = size;
  auto* header = reinterpret_cast<Header*>(file_->base);
  {
    MutexLock lock(&publish_mu_);
    published.sequence = ++sequence_;
    RingEntry& entry = Ring(file_->base)[published.sequence % kRingEntries];
    // Being rewritten: 0 first; a reader that sees either new field (each
    // stored with release) then sees a sequence other than the old one.
    entry.sequence.store(0, std::memory_order_relaxed);
    entry.slot_and_generation.store((uint64_t{claim.slot} << 32) | generation,
                                    std::memory_order_release);
    entry.size.store(size, std::memory_order_release);
    entry.sequence.store(published.sequence, std::memory_order_release);
    header->last_sequence.store(published.sequence, std::memory_order_release);
  }
  header->doorbell.fetch_add(1, std::memory_order_release);
  Futex(&header->doorbell, FUTEX_WAKE, INT32_MAX, nullptr);
  return published;
}

void LoanSegment::Abandon(const SlotClaim& claim) {
  file_->word(claim.slot)->store(WordOf(claim.generation + 1, 0), std::memory_order_release);
}

void LoanSegment::ReleaseLocalPin(uint32_t slot) {
  file_->word(slot)->fetch_and(~kLocalPinBit, std::memory_order_release);
}

int LoanSegment::ReclaimDeadReaders() {
  uint64_t bits = 0;
  for (uint32_t i = 0; i < file_->slots; ++i) {
    bits |= file_->word(i)->load(std::memory_order_relaxed) & (kLocalPinBit - 1);
  }
  int freed = 0;
  for (int e = 0; e < kMaxReaderProcesses; ++e) {
    if ((bits & (uint64_t{1} << e)) == 0) continue;
    // Holding the entry's byte ourselves: its reader is gone, and no new
    // reader can take the entry until we let go.
    if (!TryLockByte(file_->fd, e)) continue;
    for (uint32_t i = 0; i < file_->slots; ++i) {
      file_->word(i)->fetch_and(~(uint64_t{1} << e), std::memory_order_acq_rel);
    }
    UnlockByte(file_->fd, e);
    ++freed;
    AWARN << "loan segment " << file_->name << " of channel \"" << file_->channel
          << "\": reader entry " << e
          << " belonged to a process that is gone; its pins are cleared";
  }
  return freed;
}

int LoanSegment::PinnedSlots() const {
  int pinned = 0;
  for (uint32_t i = 0; i < file_->slots; ++i) {
    pinned += (file_->word(i)->load(std::memory_order_relaxed) & kPinMask) != 0;
  }
  return pinned;
}

absl::StatusOr<std::shared_ptr<LoanMapping>> LoanMapping::Open(const std::string& name) {
  if (!absl::StartsWith(name, kSegmentPrefix) || name.find('/') != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "loan segment name \"", name, "\" does not start with \"", kSegmentPrefix,
        "\" or holds a '/'"));
  }
  const std::string shm_name = "/" + name;
  const int fd = shm_open(shm_name.c_str(), O_RDWR | O_CLOEXEC, 0);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) {
      return absl::NotFoundError(
          absl::StrCat("loan segment ", name, " does not exist (its writer is gone)"));
    }
    return absl::InternalError(
        absl::StrCat("loan segment ", name, ": shm_open: ", ErrnoText(err)));
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || static_cast<uint64_t>(st.st_size) < kPage) {
    close(fd);
    return absl::InvalidArgumentError(absl::StrCat(
        "loan segment ", name, ": size ", st.st_size, " is smaller than its header"));
  }
  void* first = mmap(nullptr, kPage, PROT_READ, MAP_SHARED, fd, 0);
  if (first == MAP_FAILED) {
    close(fd);
    return absl::InternalError(absl::StrCat("loan segment ", name, ": cannot map"));
  }
  const auto* header = static_cast<const Header*>(first);
  const uint64_t magic = header->magic.load(std::memory_order_acquire);
  const uint32_t version = header->version;
  const uint32_t slots = header->slots;
  const uint64_t slot_bytes = header->slot_bytes;
  const uint64_t stride = header->slot_stride;
  const uint64_t data_offset = header->data_offset;
  std::string channel(header->channel, strnlen(header->channel, sizeof(header->channel)));
  munmap(first, kPage);
  std::string bad;
  if (magic != kMagic) {
    bad = "magic is not CYLOAN01 (not a loan segment, or still being made)";
  } else if (version != kVersion) {
    bad = absl::StrCat("version ", version, " is not ", kVersion);
  } else if (slots < 1 || slots > kMaxSlots) {
    bad = absl::StrCat("slots ", slots, " is outside 1..", kMaxSlots);
  } else if (slot_bytes < 1 || slot_bytes > kMaxSlotBytes || stride != Stride(slot_bytes) ||
             data_offset != kDataOffset) {
    bad = absl::StrCat("slot_bytes ", slot_bytes, " / stride ", stride, " / data offset ",
                       data_offset, " are inconsistent");
  } else if (static_cast<uint64_t>(st.st_size) < kDataOffset + stride * slots) {
    bad = absl::StrCat("size ", st.st_size, " is smaller than ", slots, " slots of ",
                       stride, " bytes");
  }
  if (!bad.empty()) {
    close(fd);
    return absl::InvalidArgumentError(absl::StrCat("loan segment ", name, ": ", bad));
  }
  const size_t mapped = kDataOffset + stride * slots;
  void* base = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    const int err = errno;
    close(fd);
    return absl::ResourceExhaustedError(
        absl::StrCat("loan segment ", name, ": cannot map: ", ErrnoText(err)));
  }
  int entry = -1;
  for (int e = 0; e < kMaxReaderProcesses; ++e) {
    if (TryLockByte(fd, e)) {
      entry = e;
      break;
    }
  }
  if (entry < 0) {
    munmap(base, mapped);
    close(fd);
    return absl::ResourceExhaustedError(absl::StrCat(
        "loan segment ", name, " of channel \"", channel, "\": all ",
        kMaxReaderProcesses, " reader entries are taken by live processes"));
  }
  auto file = std::make_unique<loan_internal::MappedFile>(
      name, std::move(channel), fd, static_cast<uint8_t*>(base), mapped, slots, slot_bytes);
  // Pins a dead predecessor on this entry left behind.
  for (uint32_t i = 0; i < slots; ++i) {
    file->word(i)->fetch_and(~(uint64_t{1} << entry), std::memory_order_acq_rel);
  }
  auto mapping = std::shared_ptr<LoanMapping>(new LoanMapping(std::move(file), entry));
  return mapping;
}

LoanMapping::LoanMapping(std::unique_ptr<loan_internal::MappedFile> file, int entry)
    : file_(std::move(file)), entry_(entry), local_pins_(file_->slots, 0) {}

LoanMapping::~LoanMapping() {
  for (uint32_t i = 0; i < file_->slots; ++i) {
    file_->word(i)->fetch_and(~(uint64_t{1} << entry_), std::memory_order_release);
  }
  // file_ unmaps and closes, dropping the entry's byte.
}

absl::StatusOr<const uint8_t*> LoanMapping::Pin(uint32_t slot, uint32_t generation,
                                                uint64_t size) {
  if (slot >= file_->slots) {
    return absl::OutOfRangeError(absl::StrCat("loan segment ", file_->name, ": slot ", slot,
                                              " is past its ", file_->slots, " slots"));
  }
  if (size > file_->slot_bytes) {
    return absl::OutOfRangeError(absl::StrCat("loan segment ", file_->name, ": size ", size,
                                              " is over its slot_bytes ", file_->slot_bytes));
  }
  if (generation == 0 || (generation & 1) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "loan segment ", file_->name, ": generation ", generation,
        " is not a published one (0 or odd: never or being written)"));
  }
  const uint64_t bit = uint64_t{1} << entry_;
  MutexLock lock(&mu_);
  std::atomic<uint64_t>* w = file_->word(slot);
  uint64_t current = w->load(std::memory_order_acquire);
  if (local_pins_[slot] == 0) {
    while (true) {
      if (GenerationOf(current) != generation) break;
      if (w->compare_exchange_weak(current, current | bit, std::memory_order_acq_rel)) {
        current |= bit;
        break;
      }
    }
  }
  if (GenerationOf(current) != generation) {
    return absl::DataLossError(absl::StrCat(
        "loan segment ", file_->name, " of channel \"", file_->channel, "\": slot ", slot,
        " holds generation ", GenerationOf(current), ", not ", generation,
        " (the writer reused it: this reader was more than ", file_->slots,
        " messages behind)"));
  }
  ++local_pins_[slot];
  return file_->slot_data(slot);
}

uint64_t LoanMapping::LastSequence() const {
  return reinterpret_cast<const Header*>(file_->base)->last_sequence.load(std::memory_order_acquire);
}

bool LoanMapping::ReadRing(uint64_t sequence, Published* out) const {
  if (sequence == 0) return false;
  const RingEntry& entry = Ring(file_->base)[sequence % kRingEntries];
  if (entry.sequence.load(std::memory_order_acquire) != sequence) return false;
  const uint64_t slot_and_generation = entry.slot_and_generation.load(std::memory_order_acquire);
  const uint64_t size = entry.size.load(std::memory_order_acquire);
  if (entry.sequence.load(std::memory_order_acquire) != sequence) return false;
  out->sequence = sequence;
  out->slot = static_cast<uint32_t>(slot_and_generation >> 32);
  out->generation = static_cast<uint32_t>(slot_and_generation);
  out->size = size;
  return true;
}

uint32_t LoanMapping::Doorbell() const {
  return reinterpret_cast<const Header*>(file_->base)->doorbell.load(std::memory_order_acquire);
}

void LoanMapping::WaitDoorbell(uint32_t seen, int timeout_ms) const {
  timespec timeout;
  timeout.tv_sec = timeout_ms / 1000;
  timeout.tv_nsec = static_cast<long>(timeout_ms % 1000) * 1000000;
  Futex(&reinterpret_cast<const Header*>(file_->base)->doorbell, FUTEX_WAIT, seen, &timeout);
}

bool LoanMapping::ForChannel(absl::string_view channel) const {
  // The header keeps the first sizeof(Header::channel) - 1 bytes.
  return file_->channel ==
         channel.substr(0, sizeof(Header::channel) - 1);
}

void LoanMapping::RingDoorbell() const {
  auto* header = reinterpret_cast<Header*>(file_->base);
  header->doorbell.fetch_add(1, std::memory_order_release);
  Futex(&header->doorbell, FUTEX_WAKE, INT32_MAX, nullptr);
}

bool LoanMapping::WriterAlive() const {
  struct flock fl = ByteLock(kOwnerLockByte, F_WRLCK);
  if (fcntl(file_->fd, F_OFD_GETLK, &fl) != 0) return true;  // cannot tell: assume so
  return fl.l_type != F_UNLCK;
}

void LoanMapping::Unpin(uint32_t slot) {
  MutexLock lock(&mu_);
  if (slot >= file_->slots || local_pins_[slot] == 0) return;
  if (--local_pins_[slot] == 0) {
    file_->word(slot)->fetch_and(~(uint64_t{1} << entry_), std::memory_order_release);
  }
}

std::vector<std::string> SweepAbandonedSegments() {
  std::vector<std::string> removed;
  DIR* dir = opendir("/dev/shm");
  if (dir == nullptr) return removed;
  const time_t now = time(nullptr);
  while (struct dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    if (!absl::StartsWith(name, kSegmentPrefix)) continue;
    const int fd = open(absl::StrCat("/dev/shm/", name).c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) continue;
    struct stat st;
    // An empty file may be a writer between creating and locking it: left
    // alone unless it is old.
    if (TryLockByte(fd, kOwnerLockByte) && fstat(fd, &st) == 0 &&
        (st.st_size > 0 || now - st.st_mtime > 10)) {
      if (shm_unlink(("/" + name).c_str()) == 0) removed.push_back(name);
    }
    close(fd);
  }
  closedir(dir);
  return removed;
}

}  // namespace loan
}  // namespace cyber
