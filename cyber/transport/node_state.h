// NodeState: what a Node shares with its writers and with the channels they
// write on (its name, and whether it is shut down), since both may outlive
// it. Apart from node.h and writer.h so that the channel bus, which keeps
// weak references to it, does not depend on the scheduler.
//
// Threads: `name` is immutable; `shut_down` is an atomic, set once by the
// node's Shutdown() and read from any thread.

#ifndef CYBER_TRANSPORT_NODE_STATE_H_
#define CYBER_TRANSPORT_NODE_STATE_H_

#include <atomic>
#include <string>
#include <utility>

namespace cyber {
namespace transport_internal {

struct NodeState {
  explicit NodeState(std::string n) : name(std::move(n)) {}
  const std::string name;
  std::atomic<bool> shut_down{false};
};

}  // namespace transport_internal
}  // namespace cyber

#endif  // CYBER_TRANSPORT_NODE_STATE_H_
