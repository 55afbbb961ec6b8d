// What mainboard sends on "/cyber/status" every second (graph.proto's
// ProcessStatus): its components' and timers' statistics, as its summary
// table shows them at exit, and per channel what crossed the process
// boundary — the figures cyber_monitor shows for a running graph.
//
// Threads: a pure function.

#ifndef CYBER_MAINBOARD_PROCESS_STATUS_H_
#define CYBER_MAINBOARD_PROCESS_STATUS_H_

#include <vector>

#include "cyber/component/component_base.h"
#include "cyber/graph/graph.pb.h"
#include "cyber/transport/remote_transport.h"

namespace cyber {

graph::ProcessStatus ProcessStatusOf(const std::vector<ComponentStats>& components,
                                     const std::vector<RemoteChannelStats>& channels);

}  // namespace cyber

#endif  // CYBER_MAINBOARD_PROCESS_STATUS_H_
