// What a Service (service.h) and a Client (client.h) share: what they take
// from their Node, and how a service travels between processes.
//
// Between processes a service is two channels of the RemoteTransport,
//   "<service>/request"   the request type's protobuf full name; frames of
//                         kind kRequest, Correlation{client, sequence}
//   "<service>/response"  the response type's; kind kResponse, the same
//                         Correlation copied from the request
// so the transport's type matching (the DDS type name) refuses a peer with
// other types, as for any channel. A client id is a random 64-bit number
// per Client, the sequence numbers its requests from 1: a client takes the
// responses carrying its id and ignores the others (every client of the
// service in every process reads the one response channel).
//
// QoS: both reliable. Requests are volatile (a server that starts later
// must not run old requests) and keep-all: a burst beyond the depth makes
// the sending call fail (UNAVAILABLE) instead of losing a request silently.
// Responses are transient-local (keep the last kResponseDepth): a client
// whose reader matches the server's writer a little after the server
// matched its request (discovery is not symmetric) still gets its answer;
// responses to other clients in that replay are ignored like any other.
//
// Threads: plain data and pure functions.

#ifndef CYBER_SERVICE_SERVICE_COMMON_H_
#define CYBER_SERVICE_SERVICE_COMMON_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/time/time.h"
#include "cyber/transport/channel_qos.h"
#include "cyber/transport/node_state.h"
#include "cyber/transport/remote_transport.h"
#include "cyber/transport/service_registry.h"
#include "scheduler/scheduler.h"
#include "timer/dispatcher.h"  // timer::Route

namespace cyber {

// Cyber RT's default for SendRequest.
inline constexpr absl::Duration kDefaultServiceTimeout = absl::Seconds(5);

namespace transport_internal {

// What a service or client takes from its node.
struct NodeContext {
  std::shared_ptr<const NodeState> node;
  // The node's scheduler (owning when it is the process scheduler).
  std::shared_ptr<scheduler::Scheduler> scheduler;
  timer::Route route;
  std::shared_ptr<ServiceRegistry> registry;
  // Null: the service stays in the process.
  std::shared_ptr<RemoteTransport> remote;
};

inline std::string RequestChannel(const std::string& service) {
  return service + "/request";
}
inline std::string ResponseChannel(const std::string& service) {
  return service + "/response";
}

inline constexpr uint32_t kRequestDepth = 256;
inline constexpr uint32_t kResponseDepth = 64;

inline ChannelQos RequestQos() {
  ChannelQos q;
  q.history = ChannelQos::History::kKeepAll;
  q.depth = kRequestDepth;
  return q;
}

inline ChannelQos ResponseQos() {
  ChannelQos q;
  q.depth = kResponseDepth;
  q.durability = ChannelQos::Durability::kTransientLocal;
  return q;
}

// Typed conversions between a message and bytes, as plain function pointers
// (no allocation per service or client). Null where the type does not
// cross processes.
using EncodeFn = bool (*)(const void* message, std::string* bytes);
using DecodeFn = std::shared_ptr<const void> (*)(const char* data, size_t size);

template <typename M>
bool EncodeMessage(const void* message, std::string* bytes) {
  return static_cast<const M*>(message)->SerializeToString(bytes);
}

template <typename M>
std::shared_ptr<const void> DecodeMessage(const char* data, size_t size) {
  auto m = std::make_shared<M>();
  if (!m->ParseFromArray(data, static_cast<int>(size))) return nullptr;
  return std::shared_ptr<const M>(std::move(m));
}

}  // namespace transport_internal
}  // namespace cyber

#endif  // CYBER_SERVICE_SERVICE_COMMON_H_
