// FoxgloveBridge: a running graph seen from Foxglove. A WebSocket server
// speaking "foxglove.websocket.v1" (foxglove_protocol.h) that advertises
// every channel of a ChannelSource with its protobuf schema as it appears,
// unadvertises it when it goes, and forwards a channel's messages to every
// client subscribed to it.
//
// Why one source subscription per channel, only while someone watches: a
// DDS reader on every channel of the domain would make every writer send
// every sample to the bridge even with no viewer; with refcounting, a
// channel costs the graph nothing until a client subscribes, and the same
// for ten clients as for one (each message is received once, then copied
// per client).
//
// Slow clients never hold the graph: a message is queued per client and
// dropped (counted: Stats().dropped) once the client's queue is full
// (WebSocketServer::Options::max_queued_messages).
//
// Time: a message's timestamp is when the bridge received it, absl::Now()
// (the system clock, ns since the Unix epoch), which is what Foxglove
// shows on its timeline; the writer's own stamp stays inside the message.
//
// Services (capability "services"): every service of the source is
// advertised with its request and response schemas; a call runs on a
// thread of its own (at most `max_concurrent_calls` at once, each bounded
// by `call_timeout`), so a slow service never holds the client's other
// requests. Client publish (capability "clientPublish"): a client's
// advertised channel (encoding "protobuf", a type the graph knows) gets a
// writer in the bridge's participant for as long as the client keeps it.
//
// Not supported (the server announces no capability for them, and answers
// a client that tries with a status message): parameters, time, assets,
// the connection graph.
//
// Threads: Start and the destructor from one thread; Stats from any. The
// destructor closes every client and returns when no handler of the
// source runs any more. `source` must outlive the bridge.

#ifndef CYBER_BRIDGE_FOXGLOVE_BRIDGE_H_
#define CYBER_BRIDGE_FOXGLOVE_BRIDGE_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cyber/bridge/channel_source.h"
#include "cyber/bridge/foxglove_protocol.h"
#include "cyber/bridge/websocket_server.h"
#include "cyber/common/mutex.h"

namespace cyber {
namespace bridge {

class FoxgloveBridge {
 public:
  struct Options {
    // Address, port and queue bound (the subprotocol is set by the bridge).
    WebSocketServer::Options server;
    // The name in serverInfo (Foxglove shows it).
    std::string name = "cyber_bridge";
    absl::Duration call_timeout = absl::Seconds(5);
    int max_concurrent_calls = 16;
  };
  struct Stats {
    size_t clients = 0;
    size_t advertised = 0;             // channels advertised now
    size_t source_subscriptions = 0;   // channels read now (someone watches)
    uint64_t forwarded = 0;            // messages queued to clients
    uint64_t dropped = 0;              // messages dropped for slow clients
    size_t services = 0;               // services advertised now
    size_t client_channels = 0;        // channels clients publish on now
    uint64_t published = 0;            // client messages published
    uint64_t calls = 0;                // service calls answered (or failed)
  };

  static absl::StatusOr<std::unique_ptr<FoxgloveBridge>> Start(ChannelSource* source,
                                                               Options options);
  ~FoxgloveBridge();
  FoxgloveBridge(const FoxgloveBridge&) = delete;
  FoxgloveBridge& operator=(const FoxgloveBridge&) = delete;

  int port() const { return server_->port(); }
  Stats stats() const;

 private:
  using ClientId = WebSocketServer::ClientId;
  struct AdvertisedState {
    AdvertisedChannel channel;
    std::string type_name;
  };
  struct PublishingChannel {
    ClientChannel channel;
    std::shared_ptr<ChannelSource::Publisher> publisher;
  };
  struct ClientState {
    // Its subscriptions: subscription id -> channel id.
    std::map<uint32_t, uint32_t> subscriptions;
    // The channels it publishes on, by its channel id.
    std::map<uint32_t, PublishingChannel> publishing;
  };

  FoxgloveBridge(ChannelSource* source, Options options);
  void SyncLoop();
  void Sync();
  void SyncServices(const std::vector<ChannelSource::Service>& services)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(control_mu_);
  void OnOpen(ClientId client);
  void OnMessage(ClientId client, const WebSocketMessage& message);
  void OnClose(ClientId client);
  void Subscribe(ClientId client, const Subscription& subscription)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(control_mu_);
  void Advertise(ClientId client, const ClientChannel& channel)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(control_mu_);
  void OnBinary(ClientId client, const std::string& payload);
  void StartCall(ClientId client, const ClientBinary& request);
  void JoinFinishedCalls(bool all);
  void Unsubscribe(ClientId client, uint32_t subscription_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(control_mu_);
  // Ends the source subscription of `channel_id` if no client reads it.
  void ReleaseIfUnused(uint32_t channel_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(control_mu_);
  void Forward(uint32_t channel_id, absl::string_view payload, absl::Time received);
  void SendStatus(ClientId client, StatusLevel level, const std::string& message);

  ChannelSource* const source_;
  const Options options_;
  const std::string session_id_;
  std::unique_ptr<WebSocketServer> server_;
  std::optional<uint64_t> listener_id_;  // set once the listener is added
  std::thread sync_thread_;
  std::atomic<uint64_t> forwarded_{0};
  std::atomic<uint64_t> published_{0};
  std::atomic<uint64_t> calls_{0};

  // calls_mu_ protects the threads of service calls in flight; each sets
  // its flag when it is done, and is joined by the next call or the
  // destructor.
  struct CallThread {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  Mutex calls_mu_;
  std::vector<CallThread> calls_in_flight_ ABSL_GUARDED_BY(calls_mu_);

  // wake_mu_ protects the following state (the sync thread's work list).
  Mutex wake_mu_;
  CondVar wake_cv_;
  bool dirty_ ABSL_GUARDED_BY(wake_mu_) = true;
  bool stopping_ ABSL_GUARDED_BY(wake_mu_) = false;

  // control_mu_ serializes what changes the channels and subscriptions
  // (sync, client requests, clients leaving) and protects the following
  // state. Held while calling the source and the server (neither calls
  // back into the bridge with a lock of theirs held on this path).
  mutable Mutex control_mu_;
  uint32_t next_channel_id_ ABSL_GUARDED_BY(control_mu_) = 1;
  std::map<std::string, AdvertisedState> advertised_ ABSL_GUARDED_BY(control_mu_);  // by topic
  std::map<ClientId, ClientState> clients_ ABSL_GUARDED_BY(control_mu_);
  uint32_t next_service_id_ ABSL_GUARDED_BY(control_mu_) = 1;
  std::map<std::string, AdvertisedService> services_ ABSL_GUARDED_BY(control_mu_);  // by name
  std::map<uint32_t, std::unique_ptr<ChannelSource::Subscription>> source_subscriptions_
      ABSL_GUARDED_BY(control_mu_);

  // routes_mu_ protects the routing table the source's handlers read: per
  // channel id, who gets its messages (client, subscription id).
  mutable Mutex routes_mu_;
  std::map<uint32_t, std::vector<std::pair<ClientId, uint32_t>>> routes_
      ABSL_GUARDED_BY(routes_mu_);
};

}  // namespace bridge
}  // namespace cyber

#endif  // CYBER_BRIDGE_FOXGLOVE_BRIDGE_H_
