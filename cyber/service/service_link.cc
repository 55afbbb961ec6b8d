#include "cyber/service/service_link.h"

#include "absl/strings/str_cat.h"

namespace cyber {
namespace transport_internal {
namespace {

RemoteEndpoint Endpoint(std::string channel, const std::string& type_name,
                        ChannelQos qos, const std::string& node) {
  RemoteEndpoint e;
  e.channel = std::move(channel);
  e.type_name = type_name;
  e.qos = qos;
  e.node = node;
  return e;
}

absl::Status Prefixed(const std::string& prefix, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat(prefix, ": ", status.message()));
}

}  // namespace

absl::StatusOr<std::unique_ptr<RemoteSubscription>> LinkService(
    RemoteTransport* remote, ServiceSide side, const std::string& service,
    const std::string& node, const ServiceTypes& types, const std::string& prefix,
    absl::FunctionRef<void(std::shared_ptr<RemotePublisher> outlet)> install,
    RemoteTransport::SampleHandler on_sample) {
  const RemoteEndpoint requests =
      Endpoint(RequestChannel(service), types.request_type, RequestQos(), node);
  const RemoteEndpoint responses =
      Endpoint(ResponseChannel(service), types.response_type, ResponseQos(), node);
  const bool server = side == ServiceSide::kServer;
  absl::StatusOr<std::shared_ptr<RemotePublisher>> outlet =
      remote->Publisher(server ? responses : requests);
  if (!outlet.ok()) return Prefixed(prefix, outlet.status());
  install(*std::move(outlet));
  absl::StatusOr<std::unique_ptr<RemoteSubscription>> inlet =
      remote->Subscribe(server ? requests : responses, std::move(on_sample));
  if (!inlet.ok()) return Prefixed(prefix, inlet.status());
  return inlet;
}

}  // namespace transport_internal
}  // namespace cyber
