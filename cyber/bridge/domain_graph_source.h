// DomainGraphSource: the bridge's ChannelSource over a DDS domain, read
// through graph::DomainGraph (the graph every process announces). A
// channel is offered when a process outside this one writes it and some
// process announced its message type's descriptor; its schema is the
// type's FileDescriptorSet (its file and every file it imports,
// dependencies first), as Foxglove decodes protobuf. Services likewise,
// once a process serves them and their types are known. A client's
// publish goes out through a writer of the bridge's own participant
// (reliable, volatile, keep last 16: ChannelQos's default).
//
// Threads: as ChannelSource. `graph` must outlive the source.

#ifndef CYBER_BRIDGE_DOMAIN_GRAPH_SOURCE_H_
#define CYBER_BRIDGE_DOMAIN_GRAPH_SOURCE_H_

#include <string>

#include "cyber/bridge/channel_source.h"
#include "cyber/graph/domain_graph.h"
#include "google/protobuf/descriptor.h"

namespace cyber {
namespace bridge {

// The serialized FileDescriptorSet of `descriptor`'s file and its imports
// (graph::DescriptorSetOf: dependencies first, each once), as Foxglove
// takes a protobuf schema.
std::string FileDescriptorSetOf(const google::protobuf::Descriptor& descriptor);

class DomainGraphSource : public ChannelSource {
 public:
  explicit DomainGraphSource(graph::DomainGraph* graph) : graph_(graph) {}

  std::vector<Channel> Channels() override;
  uint64_t AddListener(std::function<void()> changed) override;
  void RemoveListener(uint64_t id) override;
  absl::StatusOr<std::unique_ptr<Subscription>> Subscribe(const std::string& topic,
                                                          Handler handler) override;
  std::vector<Service> Services() override;
  absl::StatusOr<std::unique_ptr<Publisher>> Publish(const std::string& topic,
                                                     const std::string& type_name) override;
  absl::StatusOr<std::string> Call(const std::string& service, absl::string_view request,
                                   absl::Duration timeout) override;

 private:
  graph::DomainGraph* const graph_;
};

}  // namespace bridge
}  // namespace cyber

#endif  // CYBER_BRIDGE_DOMAIN_GRAPH_SOURCE_H_
