// ChannelQos: what a channel promises between processes — Cyber RT's
// qos_profile (history and depth, reliability, durability), which the
// DDS transport maps onto DDS QoS (cyber/transport/dds/dds_qos.h).
//
// Within a process none of it applies: every subscribed reader gets every
// message into its own pending queue (reader.h). Between processes:
//   reliable        lost packets are resent; a writer keeps its last `depth`
//                   messages until every matched reader acknowledged them.
//   best effort     no resends: the freshest data, for sensor streams.
//   transient local the writer keeps its last `depth` messages for readers
//                   that join later (a map, a calibration, a config).
// A best-effort writer and a reliable reader never match (the reader asks
// for more than the writer offers); both processes log it, naming the
// channel.
//
// Defaults (ChannelQos{}): reliable, volatile, keep the last 16. Cyber RT's
// default depth is 1, which loses messages under any burst on a reliable
// channel; 16 is ROS 2's order of magnitude. SensorData() is Cyber RT's and
// ROS 2's sensor profile: best effort, keep the last 5.
//
// Large messages within one host: `data_sharing_max_bytes` > 0 makes the
// channel's messages (up to that many bytes each, serialized) travel by
// Fast-DDS data sharing to the readers of other processes on this host:
// the writer serializes each message once into a shared-memory pool that
// those readers read, and no transport copies it (readers on other hosts
// get it over the transports). The pool holds depth + 4
// messages of that size per writer, reserved when the writer is created; a
// larger message is refused by the write, naming the channel, its size and
// the bound. One bound per message type per process: every channel of the
// type (and every reader and writer of it) must ask for the same one,
// else the second is refused naming the first. Every process of the
// channel should use the same bound: a reader's payloads hold its bound,
// and Fast-DDS drops a larger message from a writer elsewhere before it
// reaches us (uncounted). 0: no data sharing.

#ifndef CYBER_TRANSPORT_CHANNEL_QOS_H_
#define CYBER_TRANSPORT_CHANNEL_QOS_H_

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"

namespace cyber {

struct ChannelQos {
  enum class History { kKeepLast, kKeepAll };
  enum class Reliability { kReliable, kBestEffort };
  enum class Durability { kVolatile, kTransientLocal };

  History history = History::kKeepLast;
  // Messages kept (keep-last), or the most kept unacknowledged (keep-all).
  uint32_t depth = 16;
  Reliability reliability = Reliability::kReliable;
  Durability durability = Durability::kVolatile;
  uint32_t data_sharing_max_bytes = 0;

  static ChannelQos SensorData() {
    ChannelQos q;
    q.depth = 5;
    q.reliability = Reliability::kBestEffort;
    return q;
  }

  bool operator==(const ChannelQos& o) const {
    return history == o.history && depth == o.depth &&
           reliability == o.reliability && durability == o.durability &&
           data_sharing_max_bytes == o.data_sharing_max_bytes;
  }
  bool operator!=(const ChannelQos& o) const { return !(*this == o); }

  // "reliable, volatile, keep last 16" (and ", data sharing up to N
  // bytes"), for messages.
  std::string ToString() const {
    return absl::StrCat(
        reliability == Reliability::kReliable ? "reliable" : "best effort", ", ",
        durability == Durability::kVolatile ? "volatile" : "transient local",
        ", ", history == History::kKeepLast ? "keep last " : "keep all, at most ",
        depth,
        data_sharing_max_bytes > 0
            ? absl::StrCat(", data sharing up to ", data_sharing_max_bytes, " bytes")
            : std::string());
  }
};

}  // namespace cyber

#endif  // CYBER_TRANSPORT_CHANNEL_QOS_H_
