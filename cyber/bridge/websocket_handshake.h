// The opening handshake of a WebSocket server (RFC 6455 section 4.2): the
// client's HTTP/1.1 upgrade request parsed and checked, and the server's
// "101 Switching Protocols" answer with Sec-WebSocket-Accept and the
// chosen subprotocol (Foxglove's clients offer "foxglove.websocket.v1" and
// close a connection that does not choose it).
//
// Pure functions over text, so the handshake is tested without sockets
// (websocket_handshake_test.cc: RFC 6455's own example key).
//
// Threads: pure functions.

#ifndef CYBER_BRIDGE_WEBSOCKET_HANDSHAKE_H_
#define CYBER_BRIDGE_WEBSOCKET_HANDSHAKE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cyber {
namespace bridge {

// base64(SHA-1(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11")).
std::string WebSocketAccept(absl::string_view key);

struct UpgradeRequest {
  std::string path;                      // "/" usually
  std::string key;                       // Sec-WebSocket-Key
  std::vector<std::string> subprotocols; // Sec-WebSocket-Protocol, in order
};

// The request up to and including its blank line. InvalidArgument naming
// what is missing or wrong (not a GET, no "Upgrade: websocket", no key,
// version other than 13).
absl::StatusOr<UpgradeRequest> ParseUpgradeRequest(absl::string_view request);

// The 101 answer to `request`, choosing `subprotocol` (empty: none).
std::string UpgradeResponse(const UpgradeRequest& request, absl::string_view subprotocol);

// A plain HTTP error answer (the connection is closed after it): status
// line `status` ("400 Bad Request") and `body` as text.
std::string HttpErrorResponse(absl::string_view status, absl::string_view body);

}  // namespace bridge
}  // namespace cyber

#endif  // CYBER_BRIDGE_WEBSOCKET_HANDSHAKE_H_
