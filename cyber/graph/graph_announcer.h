// GraphAnnouncer: tells the process's DDS domain what the process is — its
// name, nodes, channels with their message descriptors and QoS, services —
// and, every second, its statistics (graph.proto says what goes where).
// mainboard and cyber::Init start one for the process runtime; the tools
// read it through DomainGraph.
//
// Why a thread that looks, instead of hooks in every CreateWriter: a graph
// changes a handful of times in a process's life, and looking four times a
// second costs a few microseconds (the snapshot is built from the bus's
// topology; descriptors are built once per type), while hooks would put
// DDS calls under the bus's locks. What is sent is compared with what was
// sent last, so an unchanged graph is never sent again. Nothing here reads
// the clock for scheduling anything of the robot: the thread sleeps on the
// steady clock, apart from the runtime's timers.
//
// Threads: Start and the destructor from any thread (not from a
// callback of the transport); the snapshot functions run on the
// announcer's thread.

#ifndef CYBER_GRAPH_GRAPH_ANNOUNCER_H_
#define CYBER_GRAPH_GRAPH_ANNOUNCER_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cyber/graph/graph.pb.h"
#include "cyber/transport/remote_transport.h"

namespace cyber {
namespace graph {

// The DDS topics of the graph (not channels of any node).
inline constexpr char kGraphTopic[] = "/cyber/graph";
inline constexpr char kStatusTopic[] = "/cyber/status";

// "process@host:pid", how the tools and the logs name a process.
std::string ProcessLabel(const std::string& process, const std::string& host, int64_t pid);

class GraphAnnouncer {
 public:
  struct Options {
    // How often the graph is looked at (and sent if it changed).
    absl::Duration poll = absl::Milliseconds(250);
    // How often the status is sent; InfiniteDuration: never.
    absl::Duration status_period = absl::Seconds(1);
    // true: announce nothing (and start nothing of the transport) until
    // the transport is linked by the process's own first channel
    // (RemoteTransport::linked()); false: announce at once.
    bool wait_until_linked = false;
  };
  using GraphFn = std::function<ProcessGraph()>;
  using StatusFn = std::function<ProcessStatus()>;

  // Starts announcing on `transport` (which starts its participant,
  // unless options.wait_until_linked). `graph` and `status` fill what they
  // know; the announcer sets process, host and pid from transport->self()
  // and the generation/sequence. `status` may be null. InvalidArgument for
  // bad options; the transport's errors (on the announcer's thread) are
  // logged, naming the topic, and tried again at the next poll.
  static absl::StatusOr<std::unique_ptr<GraphAnnouncer>> Start(
      std::shared_ptr<RemoteTransport> transport, GraphFn graph, StatusFn status,
      Options options);
  static absl::StatusOr<std::unique_ptr<GraphAnnouncer>> Start(
      std::shared_ptr<RemoteTransport> transport, GraphFn graph, StatusFn status) {
    return Start(std::move(transport), std::move(graph), std::move(status), Options());
  }
  // Stops the thread; sends nothing after it returns.
  ~GraphAnnouncer();

  // Looks at the graph now instead of at the next poll (after a change the
  // caller knows of, e.g. the launcher started its components).
  void Poke();
  // Graphs sent so far.
  uint64_t generation() const;

  class Impl;

 private:
  explicit GraphAnnouncer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace graph
}  // namespace cyber

#endif  // CYBER_GRAPH_GRAPH_ANNOUNCER_H_
