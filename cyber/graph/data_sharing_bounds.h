// Whether a reader's data-sharing bound lets it receive every message of a
// writer in another process (ChannelQos::data_sharing_max_bytes).
//
// Fast-DDS gives every endpoint of a bounded type payload buffers of its
// bound, whatever the writer: a reader bounded to R bytes drops a message
// over R from a writer elsewhere (an unbounded one, or one bounded to more)
// before it reaches us, and counts it nowhere. Nothing in DDS discovery
// says so, so the processes' graphs carry each endpoint's bound and this
// check names the pairs that lose messages: DomainGraph lists them per
// channel (cyber_channel info shows them), and GraphAnnouncer logs them
// once in both processes of the pair; both through
// DataSharingBoundMismatchesAmong, the one place that pairs endpoints.
//
// A writer bounded to W <= R, or a reader without a bound, loses nothing
// (the latter just does not share memory).

#ifndef CYBER_GRAPH_DATA_SHARING_BOUNDS_H_
#define CYBER_GRAPH_DATA_SHARING_BOUNDS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cyber {
namespace graph {

// One end of the pair: how it is named in the sentence ("fusion@vm:28
// (fusion)": process label and node) and its bound (0: none).
struct BoundedEndpoint {
  std::string name;
  uint32_t data_sharing_max_bytes = 0;
};

// Nullopt when `reader` receives every message of `writer` on `channel`;
// otherwise one sentence naming the channel, both ends, both bounds and
// what is lost.
std::optional<std::string> DataSharingBoundMismatch(const std::string& channel,
                                                    const BoundedEndpoint& writer,
                                                    const BoundedEndpoint& reader);

// An endpoint of a channel as a process's graph announces it, with a QoS.
struct AnnouncedEndpoint {
  std::string process;  // its process's label: one process's ends never pair
  std::string node;
  std::string type_name;
  bool writer = false;  // else a reader
  uint32_t data_sharing_max_bytes = 0;
};

// Every writer and reader among `endpoints` (all of `channel`) that are
// in two processes and of one type and whose bounds make the reader drop
// the writer's larger messages: one sentence each (DataSharingBoundMismatch,
// the ends named "process (node)"), sorted, none twice.
std::vector<std::string> DataSharingBoundMismatchesAmong(
    const std::string& channel, const std::vector<AnnouncedEndpoint>& endpoints);

}  // namespace graph
}  // namespace cyber

#endif  // CYBER_GRAPH_DATA_SHARING_BOUNDS_H_
