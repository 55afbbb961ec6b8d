// SHA-1 (FIPS 180-4), for one thing only: the Sec-WebSocket-Accept value of
// the WebSocket handshake (RFC 6455 section 4.2.2), which is defined with
// SHA-1. Not for anything that needs a secure hash (SHA-1 is broken for
// collisions; the handshake only proves the server read the key).
//
// Why our own: ~80 lines against a new dependency (OpenSSL) for a hash of
// a 60-byte string once per connection.
//
// Threads: a pure function.

#ifndef CYBER_BRIDGE_SHA1_H_
#define CYBER_BRIDGE_SHA1_H_

#include <array>
#include <cstdint>

#include "absl/strings/string_view.h"

namespace cyber {
namespace bridge {

// The 20-byte digest of `data`.
std::array<uint8_t, 20> Sha1(absl::string_view data);

}  // namespace bridge
}  // namespace cyber

#endif  // CYBER_BRIDGE_SHA1_H_
