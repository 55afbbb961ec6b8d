#include "cyber/bridge/websocket_frame.h"

#include "absl/strings/str_cat.h"

namespace cyber {
namespace bridge {
namespace {

bool IsControl(uint8_t opcode) { return (opcode & 0x8) != 0; }

std::string Header(Opcode opcode, size_t size, bool masked, bool final_frame) {
  std::string header;
  header.push_back(static_cast<char>((final_frame ? 0x80 : 0x00) | static_cast<uint8_t>(opcode)));
  const uint8_t mask_bit = masked ? 0x80 : 0x00;
  if (size < 126) {
    header.push_back(static_cast<char>(mask_bit | size));
  } else if (size <= 0xFFFF) {
    header.push_back(static_cast<char>(mask_bit | 126));
    header.push_back(static_cast<char>(size >> 8));
    header.push_back(static_cast<char>(size));
  } else {
    header.push_back(static_cast<char>(mask_bit | 127));
    for (int i = 7; i >= 0; --i) header.push_back(static_cast<char>(uint64_t{size} >> (8 * i)));
  }
  return header;
}

}  // namespace

std::string EncodeFrame(Opcode opcode, absl::string_view payload) {
  std::string frame = Header(opcode, payload.size(), /*masked=*/false, /*final_frame=*/true);
  frame.append(payload.data(), payload.size());
  return frame;
}

std::string EncodeMaskedFrame(Opcode opcode, absl::string_view payload, uint32_t mask,
                              bool final_frame) {
  std::string frame = Header(opcode, payload.size(), /*masked=*/true, final_frame);
  const uint8_t key[4] = {static_cast<uint8_t>(mask >> 24), static_cast<uint8_t>(mask >> 16),
                          static_cast<uint8_t>(mask >> 8), static_cast<uint8_t>(mask)};
  frame.append(reinterpret_cast<const char*>(key), 4);
  for (size_t i = 0; i < payload.size(); ++i) {
    frame.push_back(static_cast<char>(static_cast<uint8_t>(payload[i]) ^ key[i % 4]));
  }
  return frame;
}

std::string ClosePayload(uint16_t code, absl::string_view reason) {
  std::string payload;
  payload.push_back(static_cast<char>(code >> 8));
  payload.push_back(static_cast<char>(code));
  payload.append(reason.data(), reason.size());
  return payload;
}

absl::StatusOr<std::optional<WebSocketMessage>> FrameDecoder::Next() {
  while (true) {
    const auto* bytes = reinterpret_cast<const uint8_t*>(buffer_.data());
    const size_t available = buffer_.size();
    if (available < 2) return std::nullopt;
    const bool final_frame = (bytes[0] & 0x80) != 0;
    const uint8_t opcode = bytes[0] & 0x0F;
    if ((bytes[0] & 0x70) != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("WebSocket frame: reserved bits set (first byte 0x",
                       absl::Hex(bytes[0]), "), no extension was negotiated"));
    }
    if (opcode > 0xA || (opcode > 0x2 && opcode < 0x8)) {
      return absl::InvalidArgumentError(
          absl::StrCat("WebSocket frame: reserved opcode 0x", absl::Hex(opcode)));
    }
    if ((bytes[1] & 0x80) == 0) {
      return absl::InvalidArgumentError(
          "WebSocket frame: a client frame is not masked (RFC 6455 section 5.1)");
    }
    uint64_t length = bytes[1] & 0x7F;
    size_t header = 2;
    if (length == 126) {
      if (available < 4) return std::nullopt;
      length = uint64_t{bytes[2]} << 8 | bytes[3];
      header = 4;
    } else if (length == 127) {
      if (available < 10) return std::nullopt;
      length = 0;
      for (int i = 0; i < 8; ++i) length = length << 8 | bytes[2 + i];
      header = 10;
    }
    if (IsControl(opcode) && (length > 125 || !final_frame)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "WebSocket frame: control frame (opcode 0x", absl::Hex(opcode),
          ") fragmented or over 125 bytes (", length, ")"));
    }
    const size_t joined = partial_ ? partial_->payload.size() : 0;
    if (length > max_message_bytes_ || joined + length > max_message_bytes_) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "WebSocket message: ", joined + length, " bytes, over the limit of ",
          max_message_bytes_));
    }
    if (available < header + 4 + length) return std::nullopt;
    const uint8_t* key = bytes + header;
    std::string payload(length, '\0');
    for (size_t i = 0; i < length; ++i) {
      payload[i] = static_cast<char>(bytes[header + 4 + i] ^ key[i % 4]);
    }
    buffer_.erase(0, header + 4 + length);

    if (IsControl(opcode)) {
      return WebSocketMessage{static_cast<Opcode>(opcode), std::move(payload)};
    }
    if (opcode == static_cast<uint8_t>(Opcode::kContinuation)) {
      if (!partial_) {
        return absl::InvalidArgumentError(
            "WebSocket frame: a continuation frame with no message begun");
      }
      partial_->payload += payload;
    } else {
      if (partial_) {
        return absl::InvalidArgumentError(absl::StrCat(
            "WebSocket frame: a new message (opcode 0x", absl::Hex(opcode),
            ") inside a fragmented one"));
      }
      partial_ = WebSocketMessage{static_cast<Opcode>(opcode), std::move(payload)};
    }
    if (final_frame) {
      WebSocketMessage message = std::move(*partial_);
      partial_.reset();
      return message;
    }
  }
}

}  // namespace bridge
}  // namespace cyber
