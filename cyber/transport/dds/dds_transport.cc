#include "cyber/transport/dds/dds_transport.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cyber/transport/dds/dds_participant.h"
#include "cyber/transport/dds/dds_publisher.h"
#include "cyber/transport/dds/dds_subscription.h"

namespace cyber {
namespace dds {

namespace {

// Whether `text` is a dotted-quad IPv4 address.
bool IsIPv4(const std::string& text) {
  std::vector<std::string> octets = absl::StrSplit(text, '.');
  bool ok = octets.size() == 4;
  for (const std::string& o : octets) {
    int v = -1;
    ok = ok && !o.empty() && o.size() <= 3 && absl::SimpleAtoi(o, &v) && v >= 0 && v <= 255;
  }
  return ok;
}

// This host's IPv4 addresses, as (interface, address).
std::vector<std::pair<std::string, std::string>> HostIPv4Addresses() {
  std::vector<std::pair<std::string, std::string>> out;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return out;
  for (const ifaddrs* a = list; a != nullptr; a = a->ifa_next) {
    if (a->ifa_addr == nullptr || a->ifa_addr->sa_family != AF_INET) continue;
    char text[INET_ADDRSTRLEN] = {};
    const auto* in = reinterpret_cast<const sockaddr_in*>(a->ifa_addr);
    if (inet_ntop(AF_INET, &in->sin_addr, text, sizeof(text)) == nullptr) continue;
    out.emplace_back(a->ifa_name, text);
  }
  freeifaddrs(list);
  return out;
}

}  // namespace

void SetFewerWakeups(DdsTransportOptions* options) {
  options->heartbeat_piggyback = false;
  options->nack_suppression = absl::Milliseconds(5);
}

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
    if (!IsIPv4(ip)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "environment variable CYBER_IP: \"", ip,
          "\" is not an IPv4 address (the interface other hosts reach this one on)"));
    }
    // Fast-DDS given an address no interface has opens no socket on the
    // network and says nothing: the process would be alone, silently.
    const std::vector<std::pair<std::string, std::string>> own = HostIPv4Addresses();
    bool found = false;
    std::vector<std::string> listed;
    for (const auto& a : own) {
      found = found || a.second == ip;
      listed.push_back(absl::StrCat(a.first, " ", a.second));
    }
    if (!found) {
      return absl::InvalidArgumentError(absl::StrCat(
          "environment variable CYBER_IP: \"", ip, "\" is not an address of host \"",
          HostName(), "\", whose IPv4 addresses are: ",
          listed.empty() ? "none" : absl::StrJoin(listed, ", ")));
    }
    options.interface_address = ip;
  }
  if (const char* server = std::getenv("CYBER_DISCOVERY_SERVER");
      server != nullptr && *server) {
    std::vector<std::string> parts = absl::StrSplit(server, absl::MaxSplits(':', 1));
    uint32_t port = 11811;
    const bool port_ok = parts.size() == 1 ||
                         (absl::SimpleAtoi(parts[1], &port) && port > 0 && port <= 65535);
    if (!IsIPv4(parts[0]) || !port_ok) {
      return absl::InvalidArgumentError(absl::StrCat(
          "environment variable CYBER_DISCOVERY_SERVER: \"", server,
          "\" is not <ipv4> or <ipv4>:<port> (the Fast-DDS discovery server, "
          "e.g. 198.18.0.1:11811)"));
    }
    options.discovery_server_address = parts[0];
    options.discovery_server_port = static_cast<uint16_t>(port);
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
bool DdsTransport::linked() const { return impl_->started(); }

std::vector<RemotePeer> DdsTransport::Peers() const { return impl_->Peers(); }
std::vector<RemotePeer> DdsTransport::GraphAnnouncingPeers() const {
  return impl_->GraphAnnouncingPeers();
}

const DdsTransportOptions& DdsTransport::options() const { return impl_->options(); }

}  // namespace dds
}  // namespace cyber
