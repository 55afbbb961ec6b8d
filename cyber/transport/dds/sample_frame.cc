#include "cyber/transport/dds/sample_frame.h"

#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace cyber {
namespace dds {
namespace {

void PutLe(uint64_t v, int bytes, std::string* out) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t GetLe(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) {
    v |= static_cast<uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  }
  return v;
}

}  // namespace

void AppendFrameHeader(const FrameHeader& header, uint32_t payload_size, std::string* out) {
  out->append(kFrameMagic, sizeof(kFrameMagic));
  out->push_back(static_cast<char>(kFrameVersion));
  out->push_back(static_cast<char>(header.kind));
  PutLe(kFrameHeaderSize, 2, out);
  PutLe(payload_size, 4, out);
  PutLe(header.kind == FrameKind::kFailure ? header.status : 0, 4, out);
  PutLe(header.sequence, 8, out);
  PutLe(static_cast<uint64_t>(header.sent_ns), 8, out);
  PutLe(header.correlation_client, 8, out);
  PutLe(header.correlation_sequence, 8, out);
  PutLe(static_cast<uint64_t>(header.kind == FrameKind::kRequest ? header.budget_ns : 0),
        8, out);
}

absl::StatusOr<FrameView> DecodeFrame(absl::string_view bytes) {
  if (bytes.size() < kMinFrameHeaderSize) {
    return absl::InvalidArgumentError(absl::StrCat(
        "frame of ", bytes.size(), " bytes is shorter than the smallest (",
        kMinFrameHeaderSize, "-byte) header"));
  }
  const char* p = bytes.data();
  if (std::memcmp(p, kFrameMagic, sizeof(kFrameMagic)) != 0) {
    return absl::InvalidArgumentError("frame does not start with \"CYBR\"");
  }
  FrameView view;
  view.version = static_cast<uint8_t>(p[4]);
  if (view.version == 0) {
    return absl::InvalidArgumentError("frame version 0 is invalid");
  }
  const uint8_t kind = static_cast<uint8_t>(p[5]);
  if (kind > static_cast<uint8_t>(FrameKind::kFailure)) {
    return absl::InvalidArgumentError(
        absl::StrCat("frame kind ", static_cast<int>(kind), " is unknown"));
  }
  const uint64_t header_size = GetLe(p + 6, 2);
  if (header_size < kMinFrameHeaderSize || header_size > bytes.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "frame header size ", header_size, " is outside [", kMinFrameHeaderSize,
        ", ", bytes.size(), "] (the frame's length)"));
  }
  const uint64_t payload_size = GetLe(p + 8, 4);
  if (payload_size > bytes.size() - header_size) {
    return absl::InvalidArgumentError(absl::StrCat(
        "frame payload size ", payload_size, " is more than the ",
        bytes.size() - header_size, " bytes after its header"));
  }
  const uint32_t status = static_cast<uint32_t>(GetLe(p + 12, 4));
  if (kind == static_cast<uint8_t>(FrameKind::kFailure) && status == 0) {
    return absl::InvalidArgumentError(
        "frame of kind 3 (service failure) carries status 0 (OK)");
  }
  view.header.kind = static_cast<FrameKind>(kind);
  if (view.header.kind == FrameKind::kFailure) view.header.status = status;
  view.header.sequence = GetLe(p + 16, 8);
  view.header.sent_ns = static_cast<int64_t>(GetLe(p + 24, 8));
  view.header.correlation_client = GetLe(p + 32, 8);
  view.header.correlation_sequence = GetLe(p + 40, 8);
  // The budget is version 2's: a shorter header has none.
  if (header_size >= 56 && view.header.kind == FrameKind::kRequest) {
    const int64_t budget = static_cast<int64_t>(GetLe(p + 48, 8));
    view.header.budget_ns = budget > 0 ? budget : 0;
  }
  view.payload = bytes.substr(header_size, payload_size);
  return view;
}

}  // namespace dds
}  // namespace cyber
