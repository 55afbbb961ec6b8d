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
// Layout, version 2 (all integers little-endian):
//
//   offset  size  field
//   ------  ----  ----------------------------------------------------------
//        0     4  magic "CYBR"
//        4     1  version (2)
//        5     1  kind: 0 message, 1 service request, 2 service response,
//                 3 service failure (the server's error instead of a
//                 response)
//        6     2  header size in bytes (56 in version 2)
//        8     4  payload size in bytes
//       12     4  status: a failure's absl::StatusCode (never 0); 0 in the
//                 other kinds
//       16     8  sequence number, per channel and sending process, from 1
//       24     8  sent at: CLOCK_MONOTONIC ns of the sender (same host only)
//       32     8  correlation client: the requesting client's id (services)
//       40     8  correlation sequence: the request's number (services)
//       48     8  budget: a request's time left, in ns, when it was sent
//                 (how much longer its client waits); 0: no deadline
//       56     -  payload: the protobuf message, serialized; for a failure,
//                 the status's message (UTF-8 text)
//
// Version 1 had a 48-byte header with offset 12 reserved (0) and no budget:
// its requests decode with no deadline. A version-1 reader refuses kind 3
// (unknown kind, counted as undecodable), so its client times out as it
// always did instead of misreading an error's text as a response.
//
// The payload size is explicit because the bytes a transport hands over
// may be longer than what was sent: Fast-DDS pads a sample to a multiple of
// 4 bytes, and a protobuf parser would read the padding as fields. Bytes
// after the payload are ignored.
//
// A later version may grow the header: a decoder accepts a header size of
// at least 48 and skips what it does not know, so an old reader still
// reads a newer writer's payload; fields past the header size it is given
// read as 0. A version 0, a header smaller than 48, or a failure with
// status 0 is refused.
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

enum class FrameKind : uint8_t {
  kMessage = 0,
  kRequest = 1,
  kResponse = 2,
  kFailure = 3
};

struct FrameHeader {
  FrameKind kind = FrameKind::kMessage;
  uint64_t sequence = 0;
  int64_t sent_ns = 0;
  uint64_t correlation_client = 0;
  uint64_t correlation_sequence = 0;
  uint32_t status = 0;     // kFailure: its absl::StatusCode
  int64_t budget_ns = 0;   // kRequest: time left when sent; 0: none
};

inline constexpr char kFrameMagic[4] = {'C', 'Y', 'B', 'R'};
inline constexpr uint8_t kFrameVersion = 2;
inline constexpr size_t kFrameHeaderSize = 56;
// The smallest header a decoder accepts (version 1's).
inline constexpr size_t kMinFrameHeaderSize = 48;

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
