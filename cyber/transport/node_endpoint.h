// NodeEndpoint: what a Node shuts down when it shuts down — its readers,
// services and clients, whatever their message types.
//
// Why its own header: readers (cyber/node), services and clients
// (cyber/service) are each a node's endpoint, and the node shuts them all
// down the same way; none of them is a kind of the others.
//
// Threads: both methods from any thread; Shutdown() is idempotent.

#ifndef CYBER_TRANSPORT_NODE_ENDPOINT_H_
#define CYBER_TRANSPORT_NODE_ENDPOINT_H_

namespace cyber {
namespace transport_internal {

class NodeEndpoint {
 public:
  virtual ~NodeEndpoint() = default;
  virtual void Shutdown() = 0;
  virtual bool is_shut_down() const = 0;
};

}  // namespace transport_internal
}  // namespace cyber

#endif  // CYBER_TRANSPORT_NODE_ENDPOINT_H_
