// ChannelQos (cyber/transport/channel_qos.h) as Fast-DDS endpoint QoS.
//
// Every field maps one to one (history kind and depth, reliability,
// durability); the rest is chosen here, the same for every channel:
//   * resource limits sized from the depth (one instance, `depth` samples,
//     at most 16 preallocated): Fast-DDS's default of 5,000 samples made a
//     reliable 64 B stream collapse to ~4k msg/s with 0.9 s median latency
//     (measured on these machines);
//   * payload pools that grow (PREALLOCATED_WITH_REALLOC), since a frame's
//     size is known only per message;
//   * a writer blocks at most 10 ms on a full keep-all history, then the
//     write fails and is counted: a slow reader never stalls a writer for
//     long;
//   * repairs fast enough for a lossy link: a keep-last writer drops its
//     oldest message when a new one comes, acknowledged or not, so a lost
//     packet must be repaired within `depth` messages (160 ms for the
//     default 16 at 100 Hz). Fast-DDS's defaults (a heartbeat every 3 s,
//     5 ms before answering one, 5 ms before resending) lost 8 of 2,000
//     messages at 10% packet loss and 73 at 30% (tools/hosts/scenarios.sh
//     loss); a heartbeat every 10 ms while something is unacknowledged
//     (none otherwise) and no delays lost none of 6,000 at either. Beyond
//     what `depth` covers only keep-all is lossless;
//   * data sharing (ChannelQos::data_sharing_max_bytes > 0) with a pool of
//     depth + kExtraSharedSamples messages: a reader still reading a
//     message the writer's history let go keeps it from being reused.

#ifndef CYBER_TRANSPORT_DDS_DDS_QOS_H_
#define CYBER_TRANSPORT_DDS_DDS_QOS_H_

#include <fastdds/dds/publisher/qos/DataWriterQos.hpp>
#include <fastdds/dds/subscriber/qos/DataReaderQos.hpp>

#include "cyber/transport/channel_qos.h"

namespace cyber {
namespace dds {

// A reliable writer's heartbeat period while it has messages a reader has
// not acknowledged (Fast-DDS sends none while everything is acknowledged).
inline constexpr int64_t kHeartbeatPeriodNs = 10'000'000;
// Pool samples beyond the history of a data-sharing writer.
inline constexpr int32_t kExtraSharedSamples = 4;

eprosima::fastdds::dds::DataWriterQos WriterQos(const ChannelQos& qos);
eprosima::fastdds::dds::DataReaderQos ReaderQos(const ChannelQos& qos);

}  // namespace dds
}  // namespace cyber

#endif  // CYBER_TRANSPORT_DDS_DDS_QOS_H_
