// Foxglove's WebSocket protocol, "foxglove.websocket.v1"
// (github.com/foxglove/ws-protocol, docs/spec.md): the messages this server
// sends, as JSON text or binary payloads, and the client messages it
// understands, parsed. No sockets and no graph here, so each shape is tested
// alone (foxglove_protocol_test.cc).
//
// Server → client, text: serverInfo, advertise, unadvertise, status.
// Server → client, binary: message data (opcode 0x01, subscription id u32
// LE, receive timestamp u64 ns LE, the message's bytes).
// Client → server, text: subscribe {subscriptions:[{id, channelId}]},
// unsubscribe {subscriptionIds:[...]}; other ops are reported as
// unsupported (this server announces no capability that uses them).
//
// Threads: pure functions.

#ifndef CYBER_BRIDGE_FOXGLOVE_PROTOCOL_H_
#define CYBER_BRIDGE_FOXGLOVE_PROTOCOL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace cyber {
namespace bridge {

inline constexpr char kFoxgloveSubprotocol[] = "foxglove.websocket.v1";

// A channel as advertised: `schema` is the serialized FileDescriptorSet of
// the message type (it is base64-encoded on the wire).
struct AdvertisedChannel {
  uint32_t id = 0;
  std::string topic;
  std::string schema_name;  // protobuf full name
  std::string schema;       // FileDescriptorSet, serialized
};

std::string ServerInfoJson(absl::string_view name, absl::string_view session_id);
std::string AdvertiseJson(const std::vector<AdvertisedChannel>& channels);
std::string UnadvertiseJson(const std::vector<uint32_t>& channel_ids);

enum class StatusLevel { kInfo = 0, kWarning = 1, kError = 2 };
std::string StatusJson(StatusLevel level, absl::string_view message);

// The binary message-data payload (one WebSocket binary message).
// `receive_time` is written as nanoseconds since the Unix epoch.
std::string MessageDataPayload(uint32_t subscription_id, absl::Time receive_time,
                               absl::string_view message);

struct Subscription {
  uint32_t id = 0;          // the client's subscription id
  uint32_t channel_id = 0;  // an advertised channel
};

struct ClientOp {
  enum class Kind { kSubscribe, kUnsubscribe, kUnsupported };
  Kind kind = Kind::kUnsupported;
  std::string op;  // as sent ("subscribe", "advertise", ...)
  std::vector<Subscription> subscriptions;   // kSubscribe
  std::vector<uint32_t> subscription_ids;    // kUnsubscribe
};

// A client's text message. InvalidArgument (naming the field and the
// value) when it is not JSON, has no "op", or a subscribe/unsubscribe is
// malformed.
absl::StatusOr<ClientOp> ParseClientOp(absl::string_view text);

}  // namespace bridge
}  // namespace cyber

#endif  // CYBER_BRIDGE_FOXGLOVE_PROTOCOL_H_
