#include "cyber/launch/graph_readiness.h"

#include <utility>

namespace cyber {
namespace launch {

absl::StatusOr<std::unique_ptr<GraphReadiness>> GraphReadiness::Join() {
  absl::StatusOr<graph::DomainGraphOptions> options =
      graph::DomainGraphOptionsFromEnvironment("cyber_launch");
  if (!options.ok()) return options.status();
  absl::StatusOr<std::unique_ptr<graph::DomainGraph>> graph =
      graph::DomainGraph::Join(*std::move(options));
  if (!graph.ok()) return graph.status();
  return std::make_unique<GraphReadiness>(*std::move(graph));
}

GraphReadiness::GraphReadiness(std::unique_ptr<graph::DomainGraph> graph)
    : graph_(std::move(graph)) {}

bool GraphReadiness::ProcessUp(const std::string& process_name, pid_t pid) {
  for (const graph::ProcessView& p : graph_->Processes()) {
    if (p.same_host && p.graph.process() == process_name && p.graph.pid() == pid &&
        p.graph.nodes_size() > 0) {
      return true;
    }
  }
  return false;
}

bool GraphReadiness::ChannelHasWriter(const std::string& channel) {
  absl::StatusOr<graph::ChannelView> view = graph_->Channel(channel);
  return view.ok() && !view->writers.empty();
}

std::string GraphReadiness::Where() const { return graph_->DomainDescription(); }

void GraphReadiness::Done() { graph_->Leave(); }

}  // namespace launch
}  // namespace cyber
