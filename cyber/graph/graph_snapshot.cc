#include "cyber/graph/graph_snapshot.h"

#include <algorithm>
#include <set>
#include <string>
#include <tuple>

#include "cyber/graph/descriptors.h"

namespace cyber {
namespace graph {

Qos ToProto(const ChannelQos& qos) {
  Qos q;
  q.set_reliable(qos.reliability == ChannelQos::Reliability::kReliable);
  q.set_transient_local(qos.durability == ChannelQos::Durability::kTransientLocal);
  q.set_keep_all(qos.history == ChannelQos::History::kKeepAll);
  q.set_depth(qos.depth);
  q.set_data_sharing_max_bytes(qos.data_sharing_max_bytes);
  return q;
}

ChannelQos FromProto(const Qos& q) {
  ChannelQos qos;
  qos.reliability =
      q.reliable() ? ChannelQos::Reliability::kReliable : ChannelQos::Reliability::kBestEffort;
  qos.durability = q.transient_local() ? ChannelQos::Durability::kTransientLocal
                                       : ChannelQos::Durability::kVolatile;
  qos.history = q.keep_all() ? ChannelQos::History::kKeepAll : ChannelQos::History::kKeepLast;
  qos.depth = q.depth();
  qos.data_sharing_max_bytes = q.data_sharing_max_bytes();
  return qos;
}

const google::protobuf::FileDescriptorSet& GraphSnapshotter::SetOf(
    const google::protobuf::Descriptor* type) {
  MutexLock lock(&mu_);
  auto it = sets_.find(type);
  if (it == sets_.end()) it = sets_.emplace(type, DescriptorSetOf(type)).first;
  return it->second;
}

ProcessGraph GraphSnapshotter::Snapshot(const ChannelBus& bus) {
  ProcessGraph graph;
  std::set<std::string> nodes;
  auto* descriptors = graph.mutable_descriptors();
  auto note_type = [&](const google::protobuf::Descriptor* type) {
    if (type == nullptr || descriptors->count(type->full_name()) > 0) return;
    (*descriptors)[type->full_name()] = SetOf(type);
  };
  for (const ChannelTopology& t : bus.Topology()) {
    const std::string type_name =
        t.descriptor != nullptr ? t.descriptor->full_name() : t.type_name;
    note_type(t.descriptor);
    auto add = [&](const std::string& node, ChannelEndpoint::Role role,
                   const std::optional<ChannelQos>& qos) {
      nodes.insert(node);
      ChannelEndpoint* e = graph.add_channels();
      e->set_channel(t.channel);
      e->set_node(node);
      e->set_role(role);
      e->set_type_name(type_name);
      if (qos.has_value()) {
        *e->mutable_qos() = ToProto(*qos);
      } else {
        e->set_in_process_only(true);
      }
    };
    for (const std::string& node : t.writers) add(node, ChannelEndpoint::WRITER, t.writer_qos);
    for (const std::string& node : t.readers) add(node, ChannelEndpoint::READER, t.reader_qos);
  }
  for (const transport_internal::ServiceTopology& s : bus.ServicesTopology()) {
    note_type(s.request_descriptor);
    note_type(s.response_descriptor);
    auto add = [&](const std::string& node, ServiceEndpoint::Role role) {
      nodes.insert(node);
      ServiceEndpoint* e = graph.add_services();
      e->set_service(s.service);
      e->set_node(node);
      e->set_role(role);
      if (s.request_descriptor != nullptr) {
        e->set_request_type(s.request_descriptor->full_name());
      }
      if (s.response_descriptor != nullptr) {
        e->set_response_type(s.response_descriptor->full_name());
      }
    };
    if (!s.server.empty()) add(s.server, ServiceEndpoint::SERVER);
    for (const std::string& node : s.clients) add(node, ServiceEndpoint::CLIENT);
  }
  for (const std::string& node : nodes) graph.add_nodes(node);
  // Topology() is sorted by channel (service) and its node lists are
  // sorted; writers come before readers: the order is already stable.
  return graph;
}

}  // namespace graph
}  // namespace cyber
