// A process's graph as graph.proto describes it, from its channel bus:
// nodes, channels (per node and role, with the qos of the process's link
// to other processes), services and clients, and each protobuf type's
// FileDescriptorSet. The process's identity (name, host, pid) and its dag
// files are the caller's to fill.
//
// Threads: GraphSnapshotter is thread-safe.

#ifndef CYBER_GRAPH_GRAPH_SNAPSHOT_H_
#define CYBER_GRAPH_GRAPH_SNAPSHOT_H_

#include <map>

#include "absl/base/thread_annotations.h"
#include "cyber/common/mutex.h"
#include "cyber/graph/graph.pb.h"
#include "cyber/transport/channel_bus.h"
#include "cyber/transport/channel_qos.h"

namespace cyber {
namespace graph {

Qos ToProto(const ChannelQos& qos);
ChannelQos FromProto(const Qos& qos);

class GraphSnapshotter {
 public:
  // Everything on `bus` now, sorted (channels by name, node and role;
  // services likewise), so that an unchanged graph gives the same bytes.
  ProcessGraph Snapshot(const ChannelBus& bus);

 private:
  // Descriptor sets are built once per type.
  const google::protobuf::FileDescriptorSet& SetOf(const google::protobuf::Descriptor* type);

  Mutex mu_;
  std::map<const google::protobuf::Descriptor*, google::protobuf::FileDescriptorSet> sets_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace graph
}  // namespace cyber

#endif  // CYBER_GRAPH_GRAPH_SNAPSHOT_H_
