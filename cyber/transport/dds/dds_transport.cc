#include "cyber/transport/dds/dds_transport.h"

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cyber/transport/dds/dds_participant.h"
#include "cyber/transport/dds/dds_publisher.h"
#include "cyber/transport/dds/dds_subscription.h"

namespace cyber {
namespace dds {

absl::StatusOr<DdsTransportOptions> DdsTransportOptionsFromEnvironment(
    const std::string& process_name) {
  DdsTransportOptions options;
  options.process_name = process_name;
  if (const char* domain = std::getenv("CYBER_DOMAIN_ID"); domain != nullptr && *domain) {
    uint32_t id = 0;
    if (!absl::SimpleAtoi(domain, &id) || id > kMaxDomainId) {
      return absl::InvalidArgumentError(absl::StrCat(
          "environment variable CYBER_DOMAIN_ID: \"", domain,
          "\" is not a DDS domain id (a whole number from 0 to ", kMaxDomainId, ")"));
    }
    options.domain_id = id;
  }
  if (const char* ip = std::getenv("CYBER_IP"); ip != nullptr && *ip) {
    std::vector<std::string> octets = absl::StrSplit(ip, '.');
    bool ok = octets.size() == 4;
    for (const std::string& o : octets) {
      int v = -1;
      ok = ok && absl::SimpleAtoi(o, &v) && v >= 0 && v <= 255;
    }
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrCat(
          "environment variable CYBER_IP: \"", ip,
          "\" is not an IPv4 address (the interface other hosts reach this one on)"));
    }
    options.interface_address = ip;
  }
  return options;
}

// --- DdsTransport -------------------------------------------------------------

DdsTransport::DdsTransport(DdsTransportOptions options)
    : impl_(std::make_shared<Impl>(std::move(options))) {}

DdsTransport::~DdsTransport() { impl_->Shutdown(); }

absl::StatusOr<std::shared_ptr<RemotePublisher>> DdsTransport::Publisher(
    const RemoteEndpoint& endpoint) {
  return impl_->Publisher(impl_, endpoint);
}

absl::StatusOr<std::unique_ptr<RemoteSubscription>> DdsTransport::Subscribe(
    const RemoteEndpoint& endpoint, SampleHandler handler) {
  return impl_->Subscribe(impl_, endpoint, std::move(handler));
}

uint64_t DdsTransport::AddPeerLostListener(
    std::function<void(const RemotePeer&, bool crashed)> listener) {
  return impl_->AddPeerLostListener(std::move(listener));
}

void DdsTransport::RemovePeerLostListener(uint64_t id) { impl_->RemovePeerLostListener(id); }

std::vector<RemotePeer> DdsTransport::RemoteWriters(const std::string& channel) const {
  return impl_->RemoteWriters(channel);
}

std::vector<RemoteChannelStats> DdsTransport::ChannelStats() const {
  return impl_->ChannelStats();
}

std::vector<RemotePeer> DdsTransport::LostPeers() const { return impl_->LostPeers(); }

RemotePeer DdsTransport::self() const { return impl_->self(); }

void DdsTransport::Shutdown() { impl_->Shutdown(); }

bool DdsTransport::participant_started() const { return impl_->started(); }

std::vector<RemotePeer> DdsTransport::Peers() const { return impl_->Peers(); }

const DdsTransportOptions& DdsTransport::options() const { return impl_->options(); }

}  // namespace dds
}  // namespace cyber
