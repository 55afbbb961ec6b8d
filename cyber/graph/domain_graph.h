// DomainGraph: a running graph as seen from outside — every process of a
// DDS domain (CYBER_DOMAIN_ID), its nodes, channels, services and
// statistics — for the programs in cyber/tools/. It joins the domain with a
// participant of its own and reads what each process announces
// (graph.proto); nothing else runs in between (no daemon), so a list is
// never staler than discovery itself: a process that leaves is gone at
// once, one that is killed after its lease.
//
// It also reads and writes any channel by name without the program knowing
// the message type at compile time: the announced FileDescriptorSets are
// loaded into a DescriptorPool, and a payload is decoded into a
// DynamicMessage (Decode, Subscribe), or a text-format message encoded
// (Encode) for a service call or a publish.
//
// Typical use (cyber_channel list):
//   absl::StatusOr<std::unique_ptr<DomainGraph>> graph =
//       DomainGraph::Join(DomainGraphOptionsFromEnvironment("cyber_channel"));
//   (*graph)->WaitForDiscovery(absl::Seconds(1));
//   for (const ChannelView& c : (*graph)->Channels()) ...
//
// Threads: every method is thread-safe. Listeners and subscription
// handlers run on transport threads; they must not call Leave().

#ifndef CYBER_GRAPH_DOMAIN_GRAPH_H_
#define CYBER_GRAPH_DOMAIN_GRAPH_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "cyber/graph/graph.pb.h"
#include "cyber/graph/graph_announcer.h"  // ProcessLabel
#include "cyber/transport/channel_qos.h"
#include "cyber/transport/dds/dds_transport.h"
#include "cyber/transport/remote_transport.h"
#include "google/protobuf/message.h"

namespace cyber {
namespace graph {

struct DomainGraphOptions {
  // The transport's options: domain, interface, discovery server,
  // security, and how this tool is named to others (process_name).
  dds::DdsTransportOptions transport;
  // Where the domain came from, for "no process found" messages:
  // "CYBER_DOMAIN_ID=42" or "the default domain 80 (CYBER_DOMAIN_ID unset)".
  std::string domain_source;
};

// From CYBER_DOMAIN_ID, CYBER_IP, CYBER_DISCOVERY_SERVER (see
// dds::DdsTransportOptionsFromEnvironment); InvalidArgument for a malformed
// one.
absl::StatusOr<DomainGraphOptions> DomainGraphOptionsFromEnvironment(
    const std::string& tool_name);


// One process of the domain: what it announced last.
struct ProcessView {
  ProcessGraph graph;
  std::optional<ProcessStatus> status;  // the latest status, once one came
  std::string label;                    // ProcessLabel(...)
  bool same_host = false;               // on this tool's host
};

// One process's writer or reader on a channel.
struct ChannelEndpointView {
  std::string process_label;  // "planner@robot:4242"
  std::string node;
  std::string type_name;
  std::optional<ChannelQos> qos;  // absent: in-process only
  bool in_process_only = false;
  // "shm" when the process is on this tool's host (Fast-DDS carries
  // same-host samples in shared memory), "udp" otherwise; for a link
  // between two processes, LinkKind().
  bool same_host_as_tool = false;
  std::string host;
};

struct ChannelView {
  std::string name;
  // The type the writers use (the first writer's; readers' if no writer);
  // type_conflict is true when endpoints disagree on the type name or on
  // the type's fields (conflict_details says which, one line each).
  std::string type_name;
  bool type_conflict = false;
  std::vector<std::string> conflict_details;
  std::vector<ChannelEndpointView> writers;
  std::vector<ChannelEndpointView> readers;
  // Pairs of a writer and a reader in another process whose data-sharing
  // bounds make the reader drop the writer's larger messages, one sentence
  // each (data_sharing_bounds.h).
  std::vector<std::string> bound_mismatches;
  // Null when no endpoint announced a descriptor for type_name.
  const google::protobuf::Descriptor* descriptor = nullptr;
};

struct NodeView {
  std::string name;
  std::string process_label;
  std::vector<std::string> writes;    // channels, sorted
  std::vector<std::string> reads;     // channels, sorted
  std::vector<std::string> serves;    // services, sorted
  std::vector<std::string> calls;     // services (clients), sorted
};

struct ServiceView {
  std::string name;
  std::string request_type;
  std::string response_type;
  std::vector<std::string> servers;  // "node in process@host:pid"
  std::vector<std::string> clients;
  const google::protobuf::Descriptor* request_descriptor = nullptr;
  const google::protobuf::Descriptor* response_descriptor = nullptr;
};

// "shm" when both hosts are the same, else "udp": how Fast-DDS carries a
// sample between two processes of ours (same host: its shared-memory
// transport; other hosts: UDP on CYBER_IP's interface).
std::string LinkKind(const std::string& writer_host, const std::string& reader_host);

// The QoS a reader of `channel` needs to hear every writer announced on
// it in another process (those of the channel's type): reliable if they
// all are, transient local if they all are, the deepest of their
// histories (at least 16). Nullopt when there is no such writer.
std::optional<ChannelQos> ReaderQosFor(const ChannelView& channel);

// Every writer and reader of `channel` in two processes (and of one type)
// whose data-sharing bounds make the reader drop the writer's larger
// messages: one sentence each (DataSharingBoundMismatch), sorted.
std::vector<std::string> DataSharingBoundMismatches(const ChannelView& channel);

class DomainGraph {
 public:
  // Joins the domain (starts a participant and subscribes to the graph and
  // status topics). Unavailable when DDS cannot start.
  static absl::StatusOr<std::unique_ptr<DomainGraph>> Join(DomainGraphOptions options);
  ~DomainGraph();  // Leave()
  DomainGraph(const DomainGraph&) = delete;
  DomainGraph& operator=(const DomainGraph&) = delete;

  // Waits until the graph has been stable (no process joined, changed or
  // left) for `settle`, `at_least` has passed since Join(), and every
  // participant that writes the graph topic, or was discovered as one that
  // announces its graph (DdsTransportOptions::announces_graph; a
  // DomainGraph's own participant says it does not), has sent its graph;
  // at most `max` in all. Discovery on one host takes ~100-300 ms, but a
  // participant whose answer to our first announcement was lost is seen
  // only at its next periodic one (every lease / 3): the tools pass that
  // period as `at_least` (cyber/inspect/tool_main.h).
  void WaitForDiscovery(absl::Duration settle = absl::Milliseconds(300),
                        absl::Duration max = absl::Seconds(1),
                        absl::Duration at_least = absl::ZeroDuration());
  // Waits until `predicate` (called with the graph unlocked, after each
  // change and at least every 50 ms) returns true, at most `timeout`.
  bool WaitUntil(const std::function<bool(const DomainGraph&)>& predicate,
                 absl::Duration timeout);

  // The processes seen now, sorted by label.
  std::vector<ProcessView> Processes() const;
  // Every channel of every process (the graph's own topics are not
  // listed), sorted by name.
  std::vector<ChannelView> Channels() const;
  // One channel. NotFound names the channel, the domain searched and the
  // closest names ("did you mean /sensor/imu?"), or why the domain may be
  // empty.
  absl::StatusOr<ChannelView> Channel(const std::string& name) const;
  std::vector<NodeView> Nodes() const;  // sorted by name, then process
  absl::StatusOr<NodeView> Node(const std::string& name) const;
  std::vector<ServiceView> Services() const;
  absl::StatusOr<ServiceView> Service(const std::string& name) const;

  // The message type `type_name` as announced (its pool outlives the
  // DomainGraph's users only while the DomainGraph exists); NotFound when
  // no process announced it.
  absl::StatusOr<const google::protobuf::Descriptor*> FindType(const std::string& type_name) const;
  // A fresh message of `type_name` (from the announced descriptors).
  absl::StatusOr<std::unique_ptr<google::protobuf::Message>> NewMessage(
      const std::string& type_name) const;
  // `payload` parsed as `type_name`; InvalidArgument if it does not parse.
  absl::StatusOr<std::unique_ptr<google::protobuf::Message>> Decode(
      const std::string& type_name, absl::string_view payload) const;
  // Text format -> serialized `type_name`; InvalidArgument with the
  // parser's line and column.
  absl::StatusOr<std::string> Encode(const std::string& type_name, const std::string& text) const;

  // A message received on a subscription.
  struct Received {
    absl::string_view payload;   // valid during the handler call
    absl::Time receive_time;     // the steady clock, for rates only
    std::string type_name;
    // Who sent it: the process's label ("pollers@robot:4242"; "" while
    // its participant is not discovered yet), the writer's DDS GUID (32
    // hex digits: one per channel and sending process) and its sequence
    // number (from 1; a gap is a lost message).
    std::string writer;
    std::string writer_guid;
    uint64_t sequence = 0;
    // The writer's send stamp (its wall clock; a replayed message's
    // original); InfinitePast() if it sent none.
    absl::Time send_time = absl::InfinitePast();
  };
  // Reads `channel` with a reader whose QoS matches every announced writer
  // (reliable if they all are, transient local if they all are). NotFound
  // as Channel(); the subscription ends when the result is destroyed.
  absl::StatusOr<std::unique_ptr<RemoteSubscription>> Subscribe(
      const std::string& channel, std::function<void(const Received&)> handler);
  // A writer on `channel` of `type_name` with `qos` (for a bridge client's
  // publish, cyber_recorder play).
  absl::StatusOr<std::shared_ptr<RemotePublisher>> Publisher(
      const std::string& channel, const std::string& type_name, const ChannelQos& qos);
  // Calls `service` with a serialized request; waits at most `timeout`.
  // The response's bytes, or the server's error (its code and message),
  // DeadlineExceeded naming the service and the timeout, NotFound when no
  // process serves it.
  absl::StatusOr<std::string> Call(const std::string& service, absl::string_view request,
                                   absl::Duration timeout);

  // Called (on a transport thread) after every change: a process joined,
  // changed its graph, sent a status, or left.
  uint64_t AddListener(std::function<void()> changed);
  void RemoveListener(uint64_t id);

  // "domain 42 (CYBER_DOMAIN_ID=42)", for messages.
  std::string DomainDescription() const;
  // Why nothing may be found, for "no process found" messages: the domain,
  // that processes announce only once they use DDS (mainboard always
  // does), and that --in_process_only processes are invisible.
  std::string WhyEmpty() const;

  RemoteTransport& transport();
  // Leaves the domain; later calls find nothing. Idempotent.
  void Leave();

  class Impl;

 private:
  explicit DomainGraph(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace graph
}  // namespace cyber

#endif  // CYBER_GRAPH_DOMAIN_GRAPH_H_
