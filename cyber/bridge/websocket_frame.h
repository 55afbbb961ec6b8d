// WebSocket framing (RFC 6455 section 5) for a server: frames it sends
// (never masked, one frame per message: a server may not fragment, it just
// need not), and a decoder of what a client sends (always masked; messages
// that arrive in fragments are joined; control frames — ping, pong, close —
// may come between fragments and are handed over at once).
//
// The decoder is fed bytes as the socket gives them (any split, one byte
// at a time too) and returns whole messages, so it is tested without
// sockets (websocket_frame_test.cc: RFC 6455's section 5.7 examples).
//
// Threads: a FrameDecoder is used by one thread; the functions are pure.

#ifndef CYBER_BRIDGE_WEBSOCKET_FRAME_H_
#define CYBER_BRIDGE_WEBSOCKET_FRAME_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cyber {
namespace bridge {

enum class Opcode : uint8_t {
  kContinuation = 0x0,
  kText = 0x1,
  kBinary = 0x2,
  kClose = 0x8,
  kPing = 0x9,
  kPong = 0xA,
};

// One unmasked, final frame of `opcode` carrying `payload`.
std::string EncodeFrame(Opcode opcode, absl::string_view payload);
// The same, masked with `mask` (what a client sends; for tests).
std::string EncodeMaskedFrame(Opcode opcode, absl::string_view payload, uint32_t mask,
                              bool final_frame = true);

// A close frame's payload: the status code (big-endian) and a reason.
std::string ClosePayload(uint16_t code, absl::string_view reason);

struct WebSocketMessage {
  Opcode opcode;  // kText, kBinary, or a control opcode
  std::string payload;
};

class FrameDecoder {
 public:
  // A message (joined from its fragments) larger than `max_message_bytes`
  // is a protocol error (the connection should be closed with 1009).
  explicit FrameDecoder(size_t max_message_bytes) : max_message_bytes_(max_message_bytes) {}

  // Appends bytes read from the socket.
  void Feed(absl::string_view bytes) { buffer_.append(bytes.data(), bytes.size()); }

  // The next whole message, nullopt when more bytes are needed, or
  // InvalidArgument (unmasked client frame, reserved bits or opcode,
  // fragmented or oversized control frame, continuation without a start,
  // a new message inside a fragmented one) or ResourceExhausted (too
  // large). After an error the decoder is not usable.
  absl::StatusOr<std::optional<WebSocketMessage>> Next();

 private:
  const size_t max_message_bytes_;
  std::string buffer_;  // bytes fed and not yet consumed
  // The fragmented message being joined, if any.
  std::optional<WebSocketMessage> partial_;
};

}  // namespace bridge
}  // namespace cyber

#endif  // CYBER_BRIDGE_WEBSOCKET_FRAME_H_
