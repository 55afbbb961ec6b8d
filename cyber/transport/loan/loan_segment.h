// LoanSegment and LoanMapping: the shared memory behind a loaned channel,
// where a writer fills a buffer that readers in other processes of the same
// host read in place, so a camera image or a point cloud crosses processes
// with no copy at all.
//
// Why a segment of our own, beside Fast-DDS's: Fast-DDS's shared memory
// carries serialized samples, copied in by the writer and out by the
// reader, and its loans (data sharing) need a fixed-size plain type. A
// frame buffer is neither: its size varies, and what the sensor wants is to
// write into memory the reader will read. So the writer owns one segment
// (/dev/shm/cyber_loan.<pid>.<n>.<random>) of `slots` buffers of
// `slot_bytes` each; a sample on DDS carries only a reference to a slot
// (loan_reference.h), and the reader maps the segment once and reads the
// slot where it is.
//
// The protocol. Every slot has one 64-bit word in the segment:
// generation (high 32 bits) | pins (low 32 bits). An even generation is a
// published (or never used) slot, an odd one a slot being written. Pin bit
// 31 is the writer process's own readers; bits 0-30 are reader processes,
// each of which took one "reader entry" when it mapped the segment.
//
//   writer Claim:   a slot with no pins and an even generation g becomes
//                   g+1 (one compare-and-swap: nobody can pin it meanwhile).
//   writer Publish: g+2, with bit 31 if the writer's process keeps it.
//   reader Pin:     sets its bit iff the generation is still the one the
//                   reference names (one compare-and-swap): from then on the
//                   writer cannot claim the slot, and the bytes are those
//                   published; a slot already claimed again is refused (the
//                   reader was more than `slots` messages behind: counted
//                   lost, never read torn).
//   reader Unpin:   clears its bit.
//
// The writer takes slots round-robin, skipping pinned ones, so a reader has
// the time of `slots - 1` further messages to pin one: a ring of the last
// `slots` messages, as a keep-last history of that depth.
//
// The doorbell. Every Publish also appends (sequence, slot, generation,
// size) to a ring of the last 64 publishes in the segment and bumps a futex
// word there; a reader process may wait on that word (WaitDoorbell) and take
// new messages from the ring (ReadRing) instead of waiting for DDS to carry
// each reference: a wake-up across processes, not a DDS round (on this
// machine ~50 us against ~200 us). DDS still carries every reference: it is
// how readers find a segment, and what a lockstep run orders.
//
// Processes that die. No PIDs (they mean nothing across the PID namespaces
// of sandboxes and containers, and are reused): every claim on the segment
// is an open-file-description lock (fcntl F_OFD_SETLK) on one byte of the
// segment file, which the kernel drops however its holder dies, -9
// included. A reader process holds byte e (0-30) for entry e while it has
// the segment mapped; a writer that finds every slot pinned takes, for each
// bit set, that entry's byte itself: if it gets it, the reader is gone and
// its pins are cleared (ReclaimDeadReaders). A reader that takes an entry
// clears that bit first (pins of a dead predecessor). The writer holds
// byte 64 while it lives; SweepAbandonedSegments removes a segment whose
// byte 64 it can take, so a writer killed with -9 leaves nothing in
// /dev/shm after the next writer's start (or tools/run_tests.sh's sweep).
//
// Threads: LoanSegment's Claim/Publish/Abandon/ReleaseLocalPin and
// LoanMapping's Pin/Unpin are thread-safe; the words are lock-free atomics
// in the mapping (address-free on this platform, static_asserted).

#ifndef CYBER_TRANSPORT_LOAN_LOAN_SEGMENT_H_
#define CYBER_TRANSPORT_LOAN_LOAN_SEGMENT_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cyber/common/mutex.h"

namespace cyber {
namespace loan {

inline constexpr uint32_t kMaxSlots = 256;
inline constexpr uint64_t kMaxSlotBytes = uint64_t{1} << 30;  // 1 GiB
inline constexpr uint64_t kMaxSegmentBytes = uint64_t{16} << 30;
// Reader processes per segment (pin bits 0-30).
inline constexpr int kMaxReaderProcesses = 31;
// The prefix of every segment's name in /dev/shm.
inline constexpr absl::string_view kSegmentPrefix = "cyber_loan.";

static_assert(std::atomic<uint64_t>::is_always_lock_free,
              "slot words are shared between processes");

// Publishes the doorbell's ring remembers.
inline constexpr uint64_t kRingEntries = 64;

// What a writer holds between Claim and Publish/Abandon.
struct SlotClaim {
  uint32_t slot = 0;
  uint32_t generation = 0;  // odd: being written
  uint8_t* data = nullptr;
};

// One publish: what a reference names, and its place in the writer's order
// (from 1).
struct Published {
  uint64_t sequence = 0;
  uint32_t slot = 0;
  uint32_t generation = 0;
  uint64_t size = 0;
};

namespace loan_internal {

// A segment file, mapped: what a writer's and a reader's view share. Unmaps
// and closes on destruction (closing drops the byte locks taken through
// `fd`).
struct MappedFile {
  MappedFile(std::string name, std::string channel, int fd, uint8_t* base, size_t mapped,
             uint32_t slots, uint64_t slot_bytes);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::atomic<uint64_t>* word(uint32_t slot) const;
  uint8_t* slot_data(uint32_t slot) const;

  const std::string name;
  const std::string channel;
  const int fd;
  uint8_t* const base;
  const size_t mapped;
  const uint32_t slots;
  const uint64_t slot_bytes;
};

}  // namespace loan_internal

class LoanSegment {
 public:
  // Creates a segment of `slots` x `slot_bytes` for `channel` (the name is
  // for messages and for the segment's header). InvalidArgument naming the
  // field and value for slots outside 1..256, slot_bytes outside 1..1 GiB
  // or a total over 16 GiB; ResourceExhausted when /dev/shm has no room
  // for every page (reserved here, so a full /dev/shm fails now, not with
  // SIGBUS at a write); Internal (with errno's text) when /dev/shm refuses.
  static absl::StatusOr<std::shared_ptr<LoanSegment>> Create(
      absl::string_view channel, uint32_t slots, uint64_t slot_bytes);
  ~LoanSegment();  // removes the name and unmaps
  LoanSegment(const LoanSegment&) = delete;
  LoanSegment& operator=(const LoanSegment&) = delete;

  // The name readers open (no leading '/', as in /dev/shm).
  const std::string& name() const { return file_->name; }
  const std::string& channel() const { return file_->channel; }
  uint32_t slots() const { return file_->slots; }
  uint64_t slot_bytes() const { return file_->slot_bytes; }

  // A slot to write: no process pins it. The pins of dead reader
  // processes are cleared every 64 claims and when every slot is pinned
  // (then the slots are tried again); then ResourceExhausted naming the
  // channel, the segment and the slots.
  absl::StatusOr<SlotClaim> Claim();
  // Makes the first `size` bytes of the claimed slot readable at generation
  // claim.generation + 1, records the publish in the ring and rings the
  // doorbell; `local_pin`: the writer's process holds it (bit 31) until
  // ReleaseLocalPin. Publishes are numbered in the order of their calls.
  Published Publish(const SlotClaim& claim, uint64_t size, bool local_pin);
  // Gives a claimed slot back unpublished (its old references stay stale).
  void Abandon(const SlotClaim& claim);
  void ReleaseLocalPin(uint32_t slot);

  // Clears the pins of reader processes that are gone; returns how many
  // entries it freed.
  int ReclaimDeadReaders();
  // Slots pinned by anyone now (for statistics and tests).
  int PinnedSlots() const;

 private:
  explicit LoanSegment(std::unique_ptr<loan_internal::MappedFile> file)
      : file_(std::move(file)) {}

  const std::unique_ptr<loan_internal::MappedFile> file_;
  Mutex claim_mu_;  // one Claim scan at a time; next_ is its cursor
  static constexpr uint32_t kReclaimEvery = 64;
  uint32_t next_ ABSL_GUARDED_BY(claim_mu_) = 0;
  uint32_t claims_since_reclaim_ ABSL_GUARDED_BY(claim_mu_) = 0;
  Mutex publish_mu_;  // one ring append at a time
  uint64_t sequence_ ABSL_GUARDED_BY(publish_mu_) = 0;
};

// A reader process's view of another process's segment.
class LoanMapping {
 public:
  // Maps the segment `name` and takes a reader entry. NotFound when it no
  // longer exists (its writer is gone), InvalidArgument when it is not a
  // loan segment of this version, ResourceExhausted when 31 reader
  // processes have it mapped.
  static absl::StatusOr<std::shared_ptr<LoanMapping>> Open(const std::string& name);
  ~LoanMapping();  // clears this process's pins, drops the entry, unmaps
  LoanMapping(const LoanMapping&) = delete;
  LoanMapping& operator=(const LoanMapping&) = delete;

  const std::string& name() const { return file_->name; }
  const std::string& channel() const { return file_->channel; }
  // Whether the segment is `channel`'s (as far as its header keeps names).
  bool ForChannel(absl::string_view channel) const;
  uint32_t slots() const { return file_->slots; }
  uint64_t slot_bytes() const { return file_->slot_bytes; }
  int entry() const { return entry_; }

  // Pins `slot` at `generation`: the returned bytes stay as published until
  // the matching Unpin. OutOfRange naming the field for a slot or size
  // beyond the segment; DataLoss when the slot was claimed again (the
  // reader fell `slots` messages behind, or the writer restarted).
  absl::StatusOr<const uint8_t*> Pin(uint32_t slot, uint32_t generation,
                                     uint64_t size);
  void Unpin(uint32_t slot);

  // The doorbell (see the header comment). The last publish's sequence (0:
  // none yet).
  uint64_t LastSequence() const;
  // The ring's entry for publish `sequence`: false when it is not there
  // (not published yet, or more than kRingEntries publishes ago).
  bool ReadRing(uint64_t sequence, Published* out) const;
  // The futex word's value now; WaitDoorbell sleeps while it still holds
  // `seen`, at most `timeout_ms` (and may return early).
  uint32_t Doorbell() const;
  void WaitDoorbell(uint32_t seen, int timeout_ms) const;
  // Moves the doorbell word and wakes every waiter (in every process:
  // harmless, they find nothing new and wait again); a waiter that read the
  // word before and has not reached its wait yet does not wait at all.
  void RingDoorbell() const;
  // Whether the segment's writer still lives (its byte-64 lock is held).
  bool WriterAlive() const;

 private:
  LoanMapping(std::unique_ptr<loan_internal::MappedFile> file, int entry);

  const std::unique_ptr<loan_internal::MappedFile> file_;
  const int entry_;
  Mutex mu_;
  // Pins of this process per slot: the shared bit is set while any is held.
  std::vector<uint32_t> local_pins_ ABSL_GUARDED_BY(mu_);
};

// Removes every /dev/shm/cyber_loan.* whose writer is gone (its byte-64
// lock is free); returns the names removed. Never touches a live writer's.
std::vector<std::string> SweepAbandonedSegments();

}  // namespace loan
}  // namespace cyber

#endif  // CYBER_TRANSPORT_LOAN_LOAN_SEGMENT_H_
