#include "cyber/transport/service_registry.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "cyber/transport/channel_bus.h"  // TypeName

namespace cyber {
namespace transport_internal {
namespace {

std::string PairName(const std::type_info& request,
                     const std::type_info& response) {
  return absl::StrCat("request ", TypeName(request), ", response ",
                      TypeName(response));
}

}  // namespace

absl::Status ServiceRegistry::Use(const std::string& node,
                                  const std::string& service,
                                  const std::type_info& request,
                                  const std::type_info& response,
                                  const google::protobuf::Descriptor* request_descriptor,
                                  const google::protobuf::Descriptor* response_descriptor) {
  MutexLock lock(&mu_);
  auto it = services_.find(service);
  if (it == services_.end()) {
    services_.emplace(service,
                      Entry{std::type_index(request), std::type_index(response),
                            PairName(request, response), node, request_descriptor,
                            response_descriptor, {}, {}, {}});
    return absl::OkStatus();
  }
  const Entry& e = it->second;
  if (e.request == std::type_index(request) &&
      e.response == std::type_index(response)) {
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "node \"", node, "\": service \"", service, "\" carries ", e.types,
      " (first used by node \"", e.first_node, "\"), not ",
      PairName(request, response)));
}

absl::Status ServiceRegistry::Register(
    const std::string& service, const std::shared_ptr<InProcessServer>& server) {
  // The current server is asked whether it is shut down outside the lock;
  // it is replaced only if it is still the one asked about.
  std::shared_ptr<InProcessServer> existing;
  {
    MutexLock lock(&mu_);
    Entry& e = services_.at(service);
    existing = e.server.lock();
    if (existing == nullptr) {
      e.server = server;
      RememberLocked(&e, server);
      return absl::OkStatus();
    }
  }
  if (!existing->is_shut_down()) {
    return absl::AlreadyExistsError(absl::StrCat(
        "node \"", server->node_name(), "\": service \"", service,
        "\" already has a server in this process (node \"",
        existing->node_name(), "\"); one server per service"));
  }
  std::shared_ptr<InProcessServer> replaced;  // released outside the lock
  MutexLock lock(&mu_);
  Entry& e = services_.at(service);
  replaced = e.server.lock();
  if (replaced != nullptr && replaced != existing) {
    // Another server registered meanwhile: it is alive (it just did).
    return absl::AlreadyExistsError(absl::StrCat(
        "node \"", server->node_name(), "\": service \"", service,
        "\" already has a server in this process (registered concurrently); "
        "one server per service"));
  }
  e.server = server;
  RememberLocked(&e, server);
  return absl::OkStatus();
}

void ServiceRegistry::Unregister(const std::string& service,
                                 const InProcessServer* server) {
  std::shared_ptr<InProcessServer> current;  // released outside the lock
  MutexLock lock(&mu_);
  auto it = services_.find(service);
  if (it == services_.end()) return;
  current = it->second.server.lock();
  if (current == nullptr || current.get() == server) it->second.server.reset();
}

std::shared_ptr<InProcessServer> ServiceRegistry::Find(
    const std::string& service) const {
  std::shared_ptr<InProcessServer> server;
  {
    MutexLock lock(&mu_);
    auto it = services_.find(service);
    if (it == services_.end()) return nullptr;
    server = it->second.server.lock();
  }
  if (server != nullptr && server->is_shut_down()) return nullptr;
  return server;
}

void ServiceRegistry::AddClient(const std::string& service,
                                std::weak_ptr<const InProcessClient> client) {
  std::vector<std::weak_ptr<const InProcessClient>> gone;  // released after the lock
  MutexLock lock(&mu_);
  std::vector<std::weak_ptr<const InProcessClient>>& clients = services_.at(service).clients;
  std::vector<std::weak_ptr<const InProcessClient>> kept;
  kept.reserve(clients.size() + 1);
  for (auto& c : clients) (c.expired() ? gone : kept).push_back(std::move(c));
  kept.push_back(std::move(client));
  clients.swap(kept);
}

void ServiceRegistry::RememberLocked(Entry* e, const std::shared_ptr<InProcessServer>& server) {
  // Pruned as they go; the gone ones hold nothing (weak).
  std::vector<std::weak_ptr<const InProcessServer>>& servers = e->servers;
  servers.erase(std::remove_if(servers.begin(), servers.end(),
                               [](const auto& w) { return w.expired(); }),
                servers.end());
  servers.push_back(server);
}

std::vector<ServiceEndpointReport> ServiceRegistry::Report() const {
  // Held under the lock; asked for their counts outside it.
  std::vector<std::pair<std::string, std::shared_ptr<const InProcessServer>>> servers;
  std::vector<std::pair<std::string, std::shared_ptr<const InProcessClient>>> clients;
  {
    MutexLock lock(&mu_);
    for (const auto& [name, e] : services_) {
      for (const auto& weak : e.servers) {
        if (auto s = weak.lock()) servers.emplace_back(name, std::move(s));
      }
      for (const auto& weak : e.clients) {
        if (auto c = weak.lock()) clients.emplace_back(name, std::move(c));
      }
    }
  }
  std::vector<ServiceEndpointReport> report;
  report.reserve(servers.size() + clients.size());
  for (const auto& [name, s] : servers) {
    ServiceEndpointReport r;
    r.service = name;
    r.node = s->node_name();
    r.server = true;
    r.shut_down = s->is_shut_down();
    r.server_stats = s->stats();
    report.push_back(std::move(r));
  }
  for (const auto& [name, c] : clients) {
    ServiceEndpointReport r;
    r.service = name;
    r.node = c->node_name();
    r.shut_down = c->is_shut_down();
    r.client_stats = c->stats();
    report.push_back(std::move(r));
  }
  std::stable_sort(report.begin(), report.end(),
                   [](const ServiceEndpointReport& a, const ServiceEndpointReport& b) {
                     if (a.service != b.service) return a.service < b.service;
                     return a.server && !b.server;
                   });
  return report;
}

std::vector<std::string> ServiceRegistry::ServedNames() const {
  std::vector<std::string> names;
  for (const ServiceTopology& t : Topology()) {
    if (!t.server.empty()) names.push_back(t.service);
  }
  return names;
}

std::vector<ServiceTopology> ServiceRegistry::Topology() const {
  // Copied under the lock; the endpoints are asked outside it.
  struct Held {
    ServiceTopology topology;
    std::shared_ptr<InProcessServer> server;
    std::vector<std::shared_ptr<const InProcessClient>> clients;
  };
  std::vector<Held> held;
  {
    MutexLock lock(&mu_);
    held.reserve(services_.size());
    for (const auto& [name, e] : services_) {
      Held h;
      h.topology.service = name;
      h.topology.types = e.types;
      h.topology.request_descriptor = e.request_descriptor;
      h.topology.response_descriptor = e.response_descriptor;
      h.server = e.server.lock();
      for (const auto& weak : e.clients) {
        if (auto c = weak.lock()) h.clients.push_back(std::move(c));
      }
      held.push_back(std::move(h));
    }
  }
  std::vector<ServiceTopology> topology;
  topology.reserve(held.size());
  for (Held& h : held) {
    if (h.server != nullptr && !h.server->is_shut_down()) {
      h.topology.server = h.server->node_name();
    }
    for (const auto& c : h.clients) {
      if (!c->is_shut_down()) h.topology.clients.push_back(c->node_name());
    }
    std::vector<std::string>& clients = h.topology.clients;
    std::sort(clients.begin(), clients.end());
    clients.erase(std::unique(clients.begin(), clients.end()), clients.end());
    topology.push_back(std::move(h.topology));
  }
  return topology;  // sorted by name: services_ is a std::map
}

}  // namespace transport_internal
}  // namespace cyber
