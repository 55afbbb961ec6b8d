// Internal to this repository: not part of the API (docs/api.md lists the
// API headers); its Bazel target is visible only inside this repository.
//
// How a Service or a Client reaches other processes: its two channels of
// the RemoteTransport (service_common.h), opened in the one safe order, and
// its handle's hold on what it reads.
//
// Each side publishes on one channel and reads the other:
//   server   publishes "<service>/response", reads "<service>/request"
//   client   publishes "<service>/request",  reads "<service>/response"
// The outlet is opened and handed to its side first, the inlet subscribed
// after: whatever arrives through the inlet finds the outlet in place (a
// server answers through it).
//
// Threads: LinkService and LinkToOtherProcesses while the service or
// client is being created (before it is handed out); RemoteInlet from any
// thread.

#ifndef CYBER_SERVICE_SERVICE_LINK_H_
#define CYBER_SERVICE_SERVICE_LINK_H_

#include <memory>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cyber/common/mutex.h"
#include "cyber/transport/channel_bus.h"  // kCrossesProcesses
#include "cyber/transport/remote_transport.h"
#include "cyber/service/service_common.h"

namespace cyber {
namespace transport_internal {

enum class ServiceSide { kServer, kClient };

// A service's message types between processes (protobuf full names) and
// their codecs.
struct ServiceTypes {
  std::string request_type;
  std::string response_type;
  EncodeFn encode_request = nullptr;
  DecodeFn decode_request = nullptr;
  EncodeFn encode_response = nullptr;
  DecodeFn decode_response = nullptr;
};

// REQUIRES: both cross processes (kCrossesProcesses).
template <typename Req, typename Resp>
ServiceTypes ServiceTypesOf() {
  ServiceTypes t;
  t.request_type = Req::descriptor()->full_name();
  t.response_type = Resp::descriptor()->full_name();
  t.encode_request = &EncodeMessage<Req>;
  t.decode_request = &DecodeMessage<Req>;
  t.encode_response = &EncodeMessage<Resp>;
  t.decode_response = &DecodeMessage<Resp>;
  return t;
}

// Opens `side`'s outlet of `service` for node `node` and passes it to
// `install`, then subscribes `on_sample` to the side's inlet, which the
// caller keeps (its destruction ends the subscription). Errors are the
// transport's, opening with `prefix` (node "n": service "s").
absl::StatusOr<std::unique_ptr<RemoteSubscription>> LinkService(
    RemoteTransport* remote, ServiceSide side, const std::string& service,
    const std::string& node, const ServiceTypes& types, const std::string& prefix,
    absl::FunctionRef<void(std::shared_ptr<RemotePublisher> outlet)> install,
    RemoteTransport::SampleHandler on_sample);

// A Service's or Client's handle's hold on its inlet: its Shutdown()
// destroys the subscription, outside any lock (destroying it waits for a
// sample being handed over, whose handler may take the core's locks).
class RemoteInlet {
 public:
  void Set(std::unique_ptr<RemoteSubscription> subscription) {
    MutexLock lock(&mu_);
    subscription_ = std::move(subscription);
  }
  // Ends the subscription (if any). Idempotent.
  void Close() {
    std::unique_ptr<RemoteSubscription> closing;
    {
      MutexLock lock(&mu_);
      closing = std::move(subscription_);
    }
  }

 private:
  Mutex mu_;
  std::unique_ptr<RemoteSubscription> subscription_ ABSL_GUARDED_BY(mu_);
};

// What Service::Create and Client::Create do last: links `core` (a
// ServiceCore or ClientCore, whose LinkRemote(const ServiceTypes&) opens
// the link with LinkService) to other processes when the node's bus has a
// RemoteTransport and both types cross processes, and keeps its inlet in
// `inlet`. On an error the caller shuts its handle down.
template <typename Req, typename Resp, typename Core>
absl::Status LinkToOtherProcesses(const NodeContext& context, Core* core,
                                  RemoteInlet* inlet) {
  if constexpr (kCrossesProcesses<Req> && kCrossesProcesses<Resp>) {
    if (context.remote == nullptr) return absl::OkStatus();
    absl::StatusOr<std::unique_ptr<RemoteSubscription>> linked =
        core->LinkRemote(ServiceTypesOf<Req, Resp>());
    if (!linked.ok()) return linked.status();
    inlet->Set(*std::move(linked));
  }
  return absl::OkStatus();
}

}  // namespace transport_internal
}  // namespace cyber

#endif  // CYBER_SERVICE_SERVICE_LINK_H_
