// A blocking WebSocket client for the bridge's tests: connects to a port of
// this host, does the handshake (offering a subprotocol), sends masked
// frames, reads the server's frames. Deliberately written against the RFC
// and not against our server's code (only EncodeMaskedFrame is shared, and
// it is tested on its own against RFC 6455's examples), so a test of the
// server is not the server testing itself. Foxglove's own client is the
// other check (foxglove_client_check.js).
//
// Not thread-safe: one test thread drives it. Every read waits at most
// `timeout`, which only bounds a failing test.

#ifndef CYBER_BRIDGE_TESTING_WEBSOCKET_TEST_CLIENT_H_
#define CYBER_BRIDGE_TESTING_WEBSOCKET_TEST_CLIENT_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace cyber {
namespace bridge {
namespace testing {

inline constexpr absl::Duration kTestTimeout = absl::Seconds(30);

struct Frame {
  uint8_t opcode = 0;
  bool final_frame = true;
  std::string payload;
};

class WebSocketTestClient {
 public:
  // Connects to 127.0.0.1:`port` (TCP only; no handshake yet).
  static absl::StatusOr<std::unique_ptr<WebSocketTestClient>> Connect(int port);
  ~WebSocketTestClient();

  // Sends an upgrade request offering `subprotocol` (empty: none) and
  // returns the server's response head (status line and headers).
  absl::StatusOr<std::string> Handshake(const std::string& subprotocol,
                                        const std::string& key = "dGhlIHNhbXBsZSBub25jZQ==");
  bool SendRaw(const std::string& bytes);
  bool SendText(const std::string& text);
  // The next frame from the server (never masked); error on timeout or
  // when the server closed the connection.
  absl::StatusOr<Frame> ReadFrame(absl::Duration timeout = kTestTimeout);
  // Reads frames until a text frame whose payload contains `needle`.
  absl::StatusOr<std::string> ReadTextContaining(const std::string& needle,
                                                 absl::Duration timeout = kTestTimeout);
  // Whether the server closed the TCP connection (reads until EOF).
  bool WaitForEof(absl::Duration timeout = kTestTimeout);
  // Stops reading from the socket (to act as a slow client): nothing.
  void Close();

 private:
  explicit WebSocketTestClient(int fd) : fd_(fd) {}
  // Fills buffer_ to at least `n` bytes.
  absl::Status Fill(size_t n, absl::Time deadline);

  int fd_;
  std::string buffer_;
};

}  // namespace testing
}  // namespace bridge
}  // namespace cyber

#endif  // CYBER_BRIDGE_TESTING_WEBSOCKET_TEST_CLIENT_H_
