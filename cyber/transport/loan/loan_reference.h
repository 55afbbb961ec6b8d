// LoanReference: what a sample of a SharedBytes channel carries between
// processes — either the bytes themselves ("inline"), or where they lie in
// the writer's loan segment (loan_segment.h): the segment, the slot, the
// slot's generation and the size, and the host they are on.
//
// Why the host: a segment is readable on its own host only. A reader on
// another host gets a clear error naming the writer's host (and the sample
// is counted as undecodable by the transport), instead of a file that is
// not there or, worse, one of the same name that is another writer's.
//
// Layout (little-endian): "CYLR", version (1), kind (0 inline, 1 loan),
// 2 bytes zero; inline: the bytes follow; loan: slot u32, generation u32,
// size u64, sequence u64 (the writer's publish number), host boot id (16
// bytes), name length u8, the name.
//
// Decoding never reads past the bytes it is given, and refuses what is not
// a reference with the field and value named.
//
// Threads: free functions.

#ifndef CYBER_TRANSPORT_LOAN_LOAN_REFERENCE_H_
#define CYBER_TRANSPORT_LOAN_LOAN_REFERENCE_H_

#include <array>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cyber {
namespace loan {

using BootId = std::array<uint8_t, 16>;

// This host's boot id (/proc/sys/kernel/random/boot_id): one per booted
// kernel, shared by every network namespace and container on it, which
// share /dev/shm too (a container with its own /dev/shm would see another
// file system under one boot id: the reader then reports the segment as
// missing).
const BootId& ThisHostBootId();
std::string BootIdText(const BootId& id);

struct LoanReference {
  std::string segment;
  uint32_t slot = 0;
  uint32_t generation = 0;
  uint64_t size = 0;
  uint64_t sequence = 0;  // the publish's number in its segment, from 1
  BootId host{};
};

// A decoded sample: inline bytes (a view into the sample) or a loan.
struct DecodedReference {
  bool loaned = false;
  absl::string_view inline_bytes;
  LoanReference loan;
};

std::string EncodeInline(absl::string_view bytes);
std::string EncodeLoan(const LoanReference& reference);
// InvalidArgument naming the field and the value for anything else.
absl::StatusOr<DecodedReference> DecodeReference(absl::string_view wire);

}  // namespace loan
}  // namespace cyber

#endif  // CYBER_TRANSPORT_LOAN_LOAN_REFERENCE_H_
