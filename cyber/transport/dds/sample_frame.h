// SampleFrame: how one message travels between processes — a small fixed
// header, then the message's protobuf bytes.
//
// Why a header of our own (DDS already numbers samples): a reader must be
// able to say, for every sample it drops, what it was and who sent it, and
// a service needs to pair a response with its request across processes.
// DDS gives neither in a form that survives a garbage payload. The header
// is decoded before anything trusts the payload, and decoding never reads
// past the bytes it is given (tests/fuzz/sample_frame_fuzzer.cc).
//
// Layout, version 1 (all integers little-endian):
//
//   offset  size  field
//   ------  ----  ----------------------------------------------------------
//        0     4  magic "CYBR"
//        4     1  version (1)
//        5     1  kind: 0 message, 1 service request, 2 service response
//        6     2  header size in bytes (48 in version 1)
//        8     4  payload size in bytes
//       12     4  reserved (0)
//       16     8  sequence number, per channel and sending process, from 1
//       24     8  sent at: CLOCK_MONOTONIC ns of the sender (same host only)
//       32     8  correlation client: the requesting client's id (services)
//       40     8  correlation sequence: the request's number (services)
//       48     -  payload: the protobuf message, serialized
//
// The payload size is explicit because the bytes a transport hands over
// may be longer than what was sent: Fast-DDS pads a sample to a multiple of
// 4 bytes, and a protobuf parser would read the padding as fields. Bytes
// after the payload are ignored.
//
// A later version may grow the header: a decoder accepts a header size of
// at least 48 and skips what it does not know, so an old reader still
// reads a newer writer's payload. A version 0 or a header smaller than 48
// is refused.
//
// Threads: free functions on caller-owned bytes.

#ifndef CYBER_TRANSPORT_DDS_SAMPLE_FRAME_H_
#define CYBER_TRANSPORT_DDS_SAMPLE_FRAME_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cyber {
namespace dds {

enum class FrameKind : uint8_t { kMessage = 0, kRequest = 1, kResponse = 2 };

struct FrameHeader {
  FrameKind kind = FrameKind::kMessage;
  uint64_t sequence = 0;
  int64_t sent_ns = 0;
  uint64_t correlation_client = 0;
  uint64_t correlation_sequence = 0;
};

inline constexpr char kFrameMagic[4] = {'C', 'Y', 'B', 'R'};
inline constexpr uint8_t kFrameVersion = 1;
inline constexpr size_t kFrameHeaderSize = 48;

// A decoded frame: the header and a view of the payload inside the bytes
// given to DecodeFrame (valid while they are).
struct FrameView {
  FrameHeader header;
  uint8_t version = 0;
  absl::string_view payload;
};

// Appends the header of `header` for a payload of `payload_size` bytes to
// `*out` (kFrameHeaderSize bytes); the caller appends the payload after it.
void AppendFrameHeader(const FrameHeader& header, uint32_t payload_size, std::string* out);

// Decodes `bytes`. InvalidArgument, saying what is wrong (too short, wrong
// magic, unknown kind, header or payload size out of range), for anything
// that is not a frame.
absl::StatusOr<FrameView> DecodeFrame(absl::string_view bytes);

}  // namespace dds
}  // namespace cyber

#endif  // CYBER_TRANSPORT_DDS_SAMPLE_FRAME_H_
