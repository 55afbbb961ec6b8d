#include "cyber/graph/runtime_announcer.h"

#include <algorithm>
#include <utility>

#include "cyber/graph/graph_snapshot.h"

namespace cyber {
namespace graph {

absl::StatusOr<std::unique_ptr<GraphAnnouncer>> AnnounceRuntime(Runtime& runtime,
                                                                 RuntimeAnnounceOptions options) {
  ChannelBus* bus = runtime.bus();
  auto snapshotter = std::make_shared<GraphSnapshotter>();
  auto extra_nodes = options.extra_nodes;
  std::vector<std::string> dag_files = options.dag_files;
  std::string clock = options.clock;
  GraphAnnouncer::GraphFn graph = [bus, snapshotter, extra_nodes, dag_files, clock] {
    ProcessGraph g = snapshotter->Snapshot(*bus);
    if (extra_nodes != nullptr) {
      std::vector<std::string> nodes(g.nodes().begin(), g.nodes().end());
      for (std::string& n : extra_nodes()) nodes.push_back(std::move(n));
      std::sort(nodes.begin(), nodes.end());
      nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
      g.clear_nodes();
      for (std::string& n : nodes) g.add_nodes(std::move(n));
    }
    for (const std::string& f : dag_files) g.add_dag_files(f);
    g.set_clock(clock);
    return g;
  };
  return GraphAnnouncer::Start(bus->remote(), std::move(graph), std::move(options.status),
                               options.announcer);
}

}  // namespace graph
}  // namespace cyber
