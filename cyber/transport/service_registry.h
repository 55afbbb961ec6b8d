// ServiceRegistry: the services of one ChannelBus (service name -> request
// and response types, and the server of this process, if any), so that a
// Client finds a Service of its own process without serializing anything.
//
// Why in the bus: "in-process" means what it means for channels, the same
// ChannelBus (a test's own bus, a simulated graph's, or the process's), so
// two tests never see each other's services.
//
// Design and trade-offs:
//  * As with channels, a service's types are fixed by its first user
//    (server or client) for the lifetime of the registry; a later user with
//    other types gets an error naming both pairs and the first user's node.
//  * One server per service name in a registry (Cyber RT has one too); a
//    second one while the first is alive is refused, naming the first's node.
//  * The registry holds servers weakly: the server's node owns it. A server
//    unregisters when it shuts down, so a client then finds none.
//  * It holds clients weakly too, for Topology() (the launcher's "called
//    but served by no one" check) and ServedNames() (a client's "did you
//    mean"): a client counts while it exists and is not shut down.
//  * Report() lists every server and client that still exists, shut down
//    or not, with its counts (mainboard's service table, taken after the
//    components stopped and before they are destroyed).
//  * Nothing here knows the scheduler: the two interfaces below are what a
//    client and a server see of each other (service.h, client.h).
//
// Threads: every method is thread-safe; none calls out under the lock.

#ifndef CYBER_TRANSPORT_SERVICE_REGISTRY_H_
#define CYBER_TRANSPORT_SERVICE_REGISTRY_H_

#include <map>
#include <memory>
#include <string>
#include <typeindex>
#include <typeinfo>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cyber/common/mutex.h"
#include "cyber/time/clock.h"
#include "cyber/time/instant.h"
#include "cyber/transport/service_stats.h"
#include "google/protobuf/descriptor.h"

namespace cyber {
namespace transport_internal {

// A response (a std::shared_ptr<const Resp>, its type erased: the registry
// guarantees both ends agree on it), or why there is none.
using ServiceOutcome = absl::StatusOr<std::shared_ptr<const void>>;

// When a request was sent and how long its client waits, or when it was
// answered: an instant on `clock` (the client's or the server's). Within a
// process client and server usually share a clock; when they do, the
// other side reuses the instant instead of reading the clock again (a
// clock read is a sizeable part of an in-process call).
struct ServiceTiming {
  const Clock* clock = nullptr;  // null: no instant given
  Instant at;
  absl::Duration budget = absl::InfiniteDuration();  // requests: the timeout
};

// Where an in-process server sends the outcome of one request: the
// client's pending call.
class ReplyTo {
 public:
  virtual ~ReplyTo() = default;
  // Called at most once per request, never under a server lock. Does not
  // run user code (a client's callback is dispatched as a routine).
  // `answered`: when the server answered.
  virtual void Reply(ServiceOutcome outcome, const ServiceTiming& answered) = 0;
  // Whether the client still waits for the outcome: false once its call
  // ended (timed out on the tick at or after its deadline, cancelled). A
  // server skips a request whose client stopped waiting. Cheap (one atomic
  // load): asked for every request served.
  virtual bool Waiting() const = 0;
};

// A server as its in-process clients see it.
class InProcessServer {
 public:
  virtual ~InProcessServer() = default;
  virtual const std::string& node_name() const = 0;
  virtual bool is_shut_down() const = 0;
  // Queues `request` (a std::shared_ptr<const Req>) sent at `sent.at`,
  // whose client waits `sent.budget` more (InfiniteDuration: forever); its
  // outcome goes to `reply` (a full queue replies at once). False, with
  // `reply` untouched, once shut down.
  virtual bool Submit(std::shared_ptr<const void> request,
                      std::shared_ptr<ReplyTo> reply, const ServiceTiming& sent) = 0;
  virtual ServiceStats stats() const = 0;
};

// A client as the registry sees it (for Topology()).
class InProcessClient {
 public:
  virtual ~InProcessClient() = default;
  virtual const std::string& node_name() const = 0;
  virtual bool is_shut_down() const = 0;
  virtual ClientStats stats() const = 0;
};

// One server or client of a service and what it counted (see
// ServiceRegistry::Report).
struct ServiceEndpointReport {
  std::string service;
  std::string node;
  bool server = false;
  bool shut_down = false;
  ServiceStats server_stats;  // server
  ClientStats client_stats;   // client
};

// Who serves and calls one service now (see ServiceRegistry::Topology).
struct ServiceTopology {
  std::string service;
  std::string types;    // "request A, response B"
  std::string server;   // the node of its live server here; empty: none
  std::vector<std::string> clients;  // nodes with a live client, sorted, once each
  // The protobuf descriptors of the two types (null: not protobuf).
  const google::protobuf::Descriptor* request_descriptor = nullptr;
  const google::protobuf::Descriptor* response_descriptor = nullptr;
};

class ServiceRegistry {
 public:
  ServiceRegistry() = default;
  ServiceRegistry(const ServiceRegistry&) = delete;
  ServiceRegistry& operator=(const ServiceRegistry&) = delete;

  // Records that node `node` uses `service` with these types; the first
  // use fixes them. FailedPrecondition naming the node, the service, both
  // type pairs and the first user's node if they differ.
  // The descriptors (null for a type that is not protobuf) are kept for
  // Topology().
  absl::Status Use(const std::string& node, const std::string& service,
                   const std::type_info& request,
                   const std::type_info& response,
                   const google::protobuf::Descriptor* request_descriptor = nullptr,
                   const google::protobuf::Descriptor* response_descriptor = nullptr);
  // Makes `server` the service's server. AlreadyExists naming both nodes
  // while another server of it is alive and not shut down.
  // REQUIRES: Use() succeeded for the service.
  absl::Status Register(const std::string& service,
                        const std::shared_ptr<InProcessServer>& server);
  // Forgets `server` if it is still the service's server.
  void Unregister(const std::string& service, const InProcessServer* server);
  // The service's live server (not shut down), or null.
  std::shared_ptr<InProcessServer> Find(const std::string& service) const;
  // Records a client of `service` (forgets clients gone since).
  // REQUIRES: Use() succeeded for the service.
  void AddClient(const std::string& service, std::weak_ptr<const InProcessClient> client);
  // The services that have a live server, sorted.
  std::vector<std::string> ServedNames() const;
  // Every service used so far, sorted by name, with its live server and
  // clients.
  std::vector<ServiceTopology> Topology() const;
  // Every server and client that still exists (shut down or not: a shut
  // down one's counts are final), by service name, servers first.
  std::vector<ServiceEndpointReport> Report() const;

 private:
  struct Entry {
    std::type_index request;
    std::type_index response;
    std::string types;  // "request A, response B", for messages
    std::string first_node;
    const google::protobuf::Descriptor* request_descriptor = nullptr;
    const google::protobuf::Descriptor* response_descriptor = nullptr;
    std::weak_ptr<InProcessServer> server;
    // Every server registered, for Report() (the gone ones pruned).
    std::vector<std::weak_ptr<const InProcessServer>> servers;
    std::vector<std::weak_ptr<const InProcessClient>> clients;
  };

  void RememberLocked(Entry* e, const std::shared_ptr<InProcessServer>& server)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable Mutex mu_;
  std::map<std::string, Entry> services_ ABSL_GUARDED_BY(mu_);
};

}  // namespace transport_internal
}  // namespace cyber

#endif  // CYBER_TRANSPORT_SERVICE_REGISTRY_H_
