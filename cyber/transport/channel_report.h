// What a process's channels did, for mainboard's live status and summary:
// per channel, who writes and reads it here (nodes) and in other processes
// (process, host, pid), what crossed the process boundary (sent, received,
// dropped) and how long it took (latency p99, same-host samples).
//
// Why here and not in the launcher: the data is the bus's topology and the
// transport's counters; the launcher only prints it.
//
// Threads: pure functions of their arguments.

#ifndef CYBER_TRANSPORT_CHANNEL_REPORT_H_
#define CYBER_TRANSPORT_CHANNEL_REPORT_H_

#include <string>
#include <vector>

#include "cyber/transport/channel_bus.h"
#include "cyber/transport/remote_transport.h"

namespace cyber {

// One line per channel that crosses processes, e.g.
//   channel             type                      local w/r  remote writers              remote readers              sent  received  dropped  p99 ms
//   /sensor/imu         sensor_polling.ImuReading 1/0        -                           fusion (host a, pid 7)      1000  0         0        -
// Channels that stay in the process are listed with "-" in the remote
// columns. Below a channel's line: each type conflict it has now ("  type
// conflict on /x: <peer> writes <type>"), and how many ended ("  2 type
// conflicts on /x ended"). Empty string when there are no channels at all.
std::string ChannelTable(const std::vector<ChannelTopology>& local,
                         const std::vector<RemoteChannelStats>& remote);

// The short form for a live status line: "/sensor/imu →1 ↑1000 | /x ←1 ↓40
// drop 2 p99 0.41 ms" (→ remote readers, ← remote writers, ↑ sent,
// ↓ received), and "TYPE CONFLICT" on a channel with a conflict now; only
// channels that cross processes. Empty when none.
std::string ChannelStatusLine(const std::vector<RemoteChannelStats>& remote);

// "lost: fusion@robot:7 (crashed)" for peers declared dead; empty when none.
std::string LostPeersLine(const std::vector<RemotePeer>& lost);

}  // namespace cyber

#endif  // CYBER_TRANSPORT_CHANNEL_REPORT_H_
