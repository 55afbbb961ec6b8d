// Foxglove's WebSocket protocol, "foxglove.websocket.v1"
// (github.com/foxglove/ws-protocol, docs/spec.md): the messages this server
// sends, as JSON text or binary payloads, and the client messages it
// understands, parsed. No sockets and no graph here, so each shape is tested
// alone (foxglove_protocol_test.cc).
//
// Server → client, text: serverInfo, advertise, unadvertise, status,
// advertiseServices, unadvertiseServices, serviceCallFailure.
// Server → client, binary: message data (opcode 0x01, subscription id u32
// LE, receive timestamp u64 ns LE, the message's bytes); service call
// response (0x03: service id u32, call id u32, encoding length u32,
// encoding, the response's bytes).
// Client → server, text: subscribe {subscriptions:[{id, channelId}]},
// unsubscribe {subscriptionIds:[...]}, advertise (a client's channels,
// capability clientPublish) {channels:[{id, topic, encoding, schemaName}]},
// unadvertise {channelIds:[...]}; other ops are reported as unsupported.
// Client → server, binary: message data (0x01: client channel id u32, the
// message's bytes), service call request (0x02, laid out as the response).
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

std::string ServerInfoJson(absl::string_view name, absl::string_view session_id,
                           const std::vector<std::string>& capabilities);
std::string AdvertiseJson(const std::vector<AdvertisedChannel>& channels);
std::string UnadvertiseJson(const std::vector<uint32_t>& channel_ids);

// A service as advertised: request and response schemas as channels'.
struct AdvertisedService {
  uint32_t id = 0;
  std::string name;
  std::string request_type;
  std::string request_schema;  // FileDescriptorSet, serialized
  std::string response_type;
  std::string response_schema;
};
std::string AdvertiseServicesJson(const std::vector<AdvertisedService>& services);
std::string UnadvertiseServicesJson(const std::vector<uint32_t>& service_ids);
std::string ServiceCallFailureJson(uint32_t service_id, uint32_t call_id,
                                   absl::string_view message);
// The binary service-call response (opcode 0x03).
std::string ServiceCallResponsePayload(uint32_t service_id, uint32_t call_id,
                                       absl::string_view encoding, absl::string_view response);

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

// A channel a client advertises to publish on.
struct ClientChannel {
  uint32_t id = 0;
  std::string topic;
  std::string encoding;     // "protobuf" is the one this server takes
  std::string schema_name;  // the message type's full name
};

struct ClientOp {
  enum class Kind { kSubscribe, kUnsubscribe, kAdvertise, kUnadvertise, kUnsupported };
  Kind kind = Kind::kUnsupported;
  std::string op;  // as sent ("subscribe", "advertise", ...)
  std::vector<Subscription> subscriptions;   // kSubscribe
  std::vector<uint32_t> subscription_ids;    // kUnsubscribe
  std::vector<ClientChannel> channels;       // kAdvertise
  std::vector<uint32_t> channel_ids;         // kUnadvertise
};

// A client's text message. InvalidArgument (naming the field and the
// value) when it is not JSON, has no "op", or a subscribe/unsubscribe is
// malformed.
absl::StatusOr<ClientOp> ParseClientOp(absl::string_view text);

// A client's binary message: message data on one of its channels, or a
// service call request.
struct ClientBinary {
  enum class Kind { kMessageData, kServiceCallRequest };
  Kind kind = Kind::kMessageData;
  uint32_t channel_id = 0;   // kMessageData
  uint32_t service_id = 0;   // kServiceCallRequest
  uint32_t call_id = 0;
  std::string encoding;
  std::string data;  // the message or the request
};
// InvalidArgument naming the opcode or the field cut short.
absl::StatusOr<ClientBinary> ParseClientBinary(absl::string_view payload);

}  // namespace bridge
}  // namespace cyber

#endif  // CYBER_BRIDGE_FOXGLOVE_PROTOCOL_H_
