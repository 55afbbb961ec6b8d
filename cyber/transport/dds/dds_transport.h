// DdsTransport: channels between processes and hosts on Fast-DDS 2.9.
//
// One DDS participant per transport (a runtime owns one transport: one per
// mainboard process), made on the first channel that needs it, so a graph
// without channels, or of non-protobuf channels only, opens nothing. Per
// channel: one DDS topic named like the channel, of type FrameTopicType
// registered under the message's protobuf full name; one DataWriter for
// all of the process's Writers and one DataReader for all of its Readers.
//
// What is exposed, and where:
//   same host   shared memory (Fast-DDS's SHM transport, a segment of
//               `shm_segment_bytes` per participant), and UDP on the
//               loopback interface for what shared memory cannot carry.
//               Nothing listens on any other interface: no other machine
//               can reach the process.
//   other hosts only with `interface_address` (CYBER_IP, which must be
//               an address of this host): UDP on that interface, discovery
//               by multicast; on networks without multicast, through a
//               Fast-DDS discovery server (`discovery_server_address`,
//               CYBER_DISCOVERY_SERVER). Anyone in the domain on that
//               network reads and writes every channel, unless DDS
//               Security is on (`security_dir`, --security: dds_security.h).
// No XML profile is read unless `profile_file` (or Fast-DDS's own
// FASTRTPS_DEFAULT_PROFILES_FILE) names one: a DEFAULT_FASTRTPS_PROFILES.xml
// in the working directory is ignored.
//
// Faults handled here (docs/transport.md):
//   * A sample that is not a frame, or whose payload does not parse as the
//     channel's message, is dropped, counted (dropped_undecodable) and
//     logged naming channel and sender (rate-limited).
//   * A peer using another message type on a channel this process uses is
//     logged as an error (channel, both types, the peer's host and pid) and
//     listed in ChannelStats().type_conflicts for as long as its endpoint
//     exists; DDS never matches the two, so nothing is delivered between
//     them. When the endpoint goes (closed, the peer leaving, or declared
//     dead after its lease, as when it restarts with the right type) the
//     conflict ends: logged, counted in type_conflicts_ended.
//   * Incompatible QoS (a best-effort writer, a reliable reader) is logged,
//     naming the channel.
//   * A peer that leaves or stops answering (`lease`: declared dead after
//     it, e.g. after kill -9) is logged and reported to peer-lost
//     listeners; everything else keeps running.
//   * Shared-memory files of dead processes (kill -9 leaves ~700 KB in
//     /dev/shm per participant) are removed before the participant starts
//     (shm_cleanup.h: judged by Fast-DDS's own locks, never by PID).
//   * A message larger than `max_message_bytes` is refused by Publish()
//     with an error naming the channel, the size and the limit.
//
// A process never receives its own samples: samples whose writer belongs to
// this participant are skipped before decoding.
//
// Threads: every method is thread-safe. Handlers run on Fast-DDS threads.
// Shutdown() waits for running handlers and must not be called from one.

#ifndef CYBER_TRANSPORT_DDS_DDS_TRANSPORT_H_
#define CYBER_TRANSPORT_DDS_DDS_TRANSPORT_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cyber/transport/remote_transport.h"

namespace cyber {
namespace dds {

struct DdsTransportOptions {
  // Cyber RT's CYBER_DOMAIN_ID; its default is 80.
  uint32_t domain_id = 80;
  // Cyber RT's CYBER_IP: the IPv4 address of the interface other hosts
  // reach this one on. Empty: shared memory and loopback only.
  std::string interface_address;
  // CYBER_DISCOVERY_SERVER: the IPv4 address and UDP port of a Fast-DDS
  // discovery server (`fastdds discovery -i 0 -l <ip> -p <port>`), for
  // networks without multicast: the participant is its client and
  // discovers its peers through it only. Empty address: discovery by
  // multicast (or Fast-DDS's own ROS_DISCOVERY_SERVER, if set).
  std::string discovery_server_address;
  uint16_t discovery_server_port = 11811;
  // DDS Security (authentication, access control per channel,
  // encryption): a directory holding the files named in dds_security.h
  // (tools/make_security_set.sh makes one per process). Empty: off.
  std::string security_dir;
  // A Fast-DDS XML profile file to load; empty: none. Its default
  // participant profile (is_default_profile="true") is the base of the
  // participant's QoS; name, transports and lease are then set from these
  // options. This is how DDS Security is turned on (docs/transport.md).
  std::string profile_file;
  // How peers name this process (the binary's name).
  std::string process_name = "cyber";
  uint32_t shm_segment_bytes = 8u << 20;
  size_t max_message_bytes = 64u << 20;
  // A peer silent this long is declared dead; it announces itself every
  // lease / 3.
  absl::Duration lease = absl::Seconds(3);
  // Remove shared-memory files of dead processes before starting.
  bool clean_dead_segments = true;
  // Whether this process announces its graph (cyber::Init's processes do,
  // through the process runtime's link; the inspection tools, which only
  // look, and lockstep mainboards do not). It travels in the participant's
  // discovery data, so a tool that has discovered a process but not yet
  // its graph writer knows to wait for its graph.
  bool announces_graph = false;
  // Whether a reliable writer asks for acknowledgements with its messages
  // (a heartbeat riding on a message once its history is full: for a
  // keep-last writer, every message). Off, acknowledgements come with the
  // periodic heartbeat only (every 10 ms while anything is unacknowledged),
  // and a lost message is repaired as fast. Lockstep processes turn it
  // off: each acknowledgement is one more wake-up of a process per message,
  // on the step's path.
  bool heartbeat_piggyback = true;
  // How long a reliable writer ignores a reader's request to resend what it
  // has just sent (Fast-DDS's nack suppression). Each message sent starts
  // this timer on Fast-DDS's event thread unless it is already running: at
  // 0 (Fast-DDS's default), one wake-up of that thread per message and
  // reader. Lockstep processes set a few milliseconds: one wake-up per that
  // period, and a lost message is resent at most that much later.
  absl::Duration nack_suppression = absl::ZeroDuration();
};

// For a process each of whose messages lies on a chain of round trips
// between processes (lockstep simulated time, cyber/lockstep): fewer
// wake-ups per message, at the price of a slower repair of a lost one
// (heartbeat_piggyback off, nack_suppression 5 ms).
void SetFewerWakeups(DdsTransportOptions* options);

// Options from Cyber RT's environment: CYBER_DOMAIN_ID (0..232), CYBER_IP
// (an IPv4 address of one of this host's interfaces), CYBER_DISCOVERY_SERVER
// ("<ipv4>" or "<ipv4>:<port>", port 11811 by default). InvalidArgument
// naming the variable and its value for a malformed one, and for a
// CYBER_IP this host does not have (the message lists the addresses it
// has, by interface).
absl::StatusOr<DdsTransportOptions> DdsTransportOptionsFromEnvironment(
    const std::string& process_name);

class DdsTransport final : public RemoteTransport {
 public:
  // Starts nothing: the participant is made by the first Publisher() or
  // Subscribe().
  explicit DdsTransport(DdsTransportOptions options);
  ~DdsTransport() override;  // Shutdown()
  DdsTransport(const DdsTransport&) = delete;
  DdsTransport& operator=(const DdsTransport&) = delete;

  absl::StatusOr<std::shared_ptr<RemotePublisher>> Publisher(
      const RemoteEndpoint& endpoint) override;
  absl::StatusOr<std::unique_ptr<RemoteSubscription>> Subscribe(
      const RemoteEndpoint& endpoint, SampleHandler handler) override;
  uint64_t AddPeerLostListener(
      std::function<void(const RemotePeer&, bool crashed)> listener) override;
  void RemovePeerLostListener(uint64_t id) override;
  std::vector<RemotePeer> RemoteWriters(const std::string& channel) const override;
  std::vector<RemoteChannelStats> ChannelStats() const override;
  std::vector<RemotePeer> LostPeers() const override;
  RemotePeer self() const override;
  bool linked() const override;  // participant_started()
  void Shutdown() override;

  // Whether the participant exists (tests: a graph without channels opens
  // none).
  bool participant_started() const;
  // Processes of the domain seen alive now.
  std::vector<RemotePeer> Peers() const;
  // Those of them that said, when discovered, that they announce their
  // graph (DdsTransportOptions::announces_graph).
  std::vector<RemotePeer> GraphAnnouncingPeers() const;
  const DdsTransportOptions& options() const;

  class Impl;  // dds_transport.cc

 private:
  const std::shared_ptr<Impl> impl_;
};

}  // namespace dds
}  // namespace cyber

#endif  // CYBER_TRANSPORT_DDS_DDS_TRANSPORT_H_
