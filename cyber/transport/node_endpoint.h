// NodeEndpoint: what a Node shuts down when it shuts down — its readers,
// services and clients, whatever their message types.
//
// Why its own header: readers (cyber/node), services and clients
// (cyber/service) are each a node's endpoint, and the node shuts them all
// down the same way; none of them is a kind of the others.
//
// Shutdown among peers. An endpoint's Shutdown() waits for its running
// callback, unless called from it. When two callbacks of one node shut the
// node down at the same moment, each would wait for the other's callback
// for ever. So Node::Shutdown() called from one of the node's callbacks
// uses ShutdownAmong(peers) instead: it does not wait for a callback whose
// routine is among `peers` (the node's callbacks inside Node::Shutdown()
// now), and a caller entering Node::Shutdown() makes every endpoint
// re-check its waits (RecheckPeers). A caller that is not one of the
// node's callbacks (a thread, another routine) uses Shutdown() and waits
// for every callback.
//
// Threads: every method from any thread; Shutdown() is idempotent.

#ifndef CYBER_TRANSPORT_NODE_ENDPOINT_H_
#define CYBER_TRANSPORT_NODE_ENDPOINT_H_

namespace cyber {
namespace scheduler {
class CRoutine;
}  // namespace scheduler

namespace transport_internal {

class NodeEndpoint {
 public:
  // The node's callbacks that are inside Node::Shutdown() now.
  class ShutdownPeers {
   public:
    virtual bool Contains(const scheduler::CRoutine* routine) const = 0;

   protected:
    ~ShutdownPeers() = default;
  };

  virtual ~NodeEndpoint() = default;
  virtual void Shutdown() = 0;
  virtual bool is_shut_down() const = 0;

  // --- For Node::Shutdown() (see the header comment) ---------------------
  // Whether a callback of this endpoint runs in `routine` now.
  virtual bool RunsCallbackIn(const scheduler::CRoutine* routine) const = 0;
  // Shutdown(), except that a running callback whose routine is among
  // `peers` is not waited for (nor one the caller runs in).
  virtual void ShutdownAmong(const ShutdownPeers& peers) = 0;
  // Makes a ShutdownAmong() that waits here for a callback ask its peers
  // again (a callback joined them).
  virtual void RecheckPeers() = 0;
};

}  // namespace transport_internal
}  // namespace cyber

#endif  // CYBER_TRANSPORT_NODE_ENDPOINT_H_
