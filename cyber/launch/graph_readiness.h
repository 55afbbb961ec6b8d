// GraphReadiness: Readiness answered from the DDS domain the launched
// processes join (CYBER_DOMAIN_ID): a process is up once it announced a
// ProcessGraph with nodes under its process_name and pid (mainboard
// announces after its components started); a channel is ready once any
// process announces a writer on it.
//
// The launcher joins the domain only when a process of the plan waits
// (the program calls Join only then), and leaves it once no process waits
// any more (Done): a launch adds no participant to the domain for longer
// than its start, and a launcher killed later leaves no DDS files behind.
//
// Threads: as Readiness (the supervisor's Run() thread).

#ifndef CYBER_LAUNCH_GRAPH_READINESS_H_
#define CYBER_LAUNCH_GRAPH_READINESS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "cyber/graph/domain_graph.h"
#include "cyber/launch/readiness.h"

namespace cyber {
namespace launch {

class GraphReadiness : public Readiness {
 public:
  // Joins the domain of the environment (DomainGraphOptionsFromEnvironment).
  static absl::StatusOr<std::unique_ptr<GraphReadiness>> Join();
  explicit GraphReadiness(std::unique_ptr<graph::DomainGraph> graph);

  bool ProcessUp(const std::string& process_name, pid_t pid) override;
  bool ChannelHasWriter(const std::string& channel) override;
  std::string Where() const override;
  // Leaves the domain; later questions answer false.
  void Done() override;

 private:
  std::unique_ptr<graph::DomainGraph> graph_;
};

}  // namespace launch
}  // namespace cyber

#endif  // CYBER_LAUNCH_GRAPH_READINESS_H_
