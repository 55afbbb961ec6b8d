// RemoteTransport: what carries a channel's messages to other processes and
// hosts. The channel bus (channel_bus.h) talks to this interface only; the
// DDS implementation (cyber/transport/dds/dds_transport.h) is the one a
// runtime owns (cyber/runtime/runtime.h), so code and tests that never
// leave the process link and start nothing of DDS.
//
// Why these three operations: a channel needs, per process, at most one
// outlet (Publisher: serialized messages out) and one inlet (Subscribe:
// serialized messages in, handed to the channel's readers), whatever number
// of Writers and Readers the process has on it. In-process delivery never
// goes through here (no serialization, no copy), and a process never gets
// its own messages back from here.
//
// Message types: only protobuf messages cross processes (the payload is the
// message's serialized form; the DDS type name its full name). A channel of
// another C++ type stays in-process.
//
// Threads: every method is thread-safe. A SampleHandler runs on a transport
// thread: it must only decode and hand over (Reader::Deliver never blocks).

#ifndef CYBER_TRANSPORT_REMOTE_TRANSPORT_H_
#define CYBER_TRANSPORT_REMOTE_TRANSPORT_H_

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "cyber/transport/channel_qos.h"
#include "google/protobuf/message_lite.h"

namespace cyber {

// One end of a channel in this process, as the transport is asked for it.
struct RemoteEndpoint {
  std::string channel;
  // The protobuf full name, e.g. "sensor_polling.ImuReading".
  std::string type_name;
  ChannelQos qos;
  // The node that asked first, for messages.
  std::string node;
  // A reader that takes parsed messages: its message type's default
  // instance. The transport may then parse a sample where it arrived (for
  // Fast-DDS, in its history or a writer's data-sharing pool) and hand it
  // as RemoteSample::message, saving the copy of the bytes; it still hands
  // payload when it did not parse. Null: payload only.
  const google::protobuf::MessageLite* prototype = nullptr;
};

// Who sent a sample: the process, as its peers see it.
struct RemotePeer {
  std::string host;
  int64_t pid = 0;
  std::string process;  // the binary's name
  // "process (host h, pid p)"
  std::string ToString() const;
};

// What a sample is to services: a plain message, or a request and its
// answer (a response, or the server's error) paired by (client, sequence).
struct Correlation {
  // The values are the frame's kinds (cyber/transport/dds/sample_frame.h).
  enum class Kind : uint8_t { kMessage, kRequest, kResponse, kFailure };
  Kind kind = Kind::kMessage;
  uint64_t client = 0;
  uint64_t sequence = 0;
  // kRequest: how much longer the client waits, from when it was sent (a
  // duration: the processes' clocks differ); 0: no deadline.
  int64_t budget_ns = 0;
  // kFailure: the server's absl::StatusCode (the payload is its message).
  uint32_t status = 0;
};

// Who sent a sample and when: what a recorder keeps of it.
struct SampleOrigin {
  // The sending process as discovered (null: not discovered yet); valid
  // during the handler call.
  const RemotePeer* sender = nullptr;
  // The sending DataWriter's GUID (DDS's 16 bytes): one per channel and
  // sending process.
  std::array<uint8_t, 16> writer_guid{};
  // The writer's number for the sample: per channel and sending process,
  // from 1, no gaps at the sender (a gap at a reader is a lost sample).
  uint64_t sequence = 0;
  // The sender's stamp: its CLOCK_REALTIME when it published, or the stamp
  // it was given (RemotePublisher::PublishAt, a replayed message's
  // original). Nanoseconds since the epoch; 0: none.
  int64_t source_time_ns = 0;
};

// A sample from another process, valid during the handler call.
struct RemoteSample {
  absl::string_view payload;  // the serialized message (empty if `message`)
  // The message, parsed by the transport (only for an endpoint with a
  // prototype, and of its type); null: parse `payload`.
  std::shared_ptr<google::protobuf::MessageLite> message;
  Correlation correlation;
  SampleOrigin origin;
};

class RemotePublisher {
 public:
  virtual ~RemotePublisher() = default;
  // Whether a Publish now could reach anyone: a reader in another process
  // is matched, or the channel keeps messages for late joiners. Writers
  // skip serialization when false.
  virtual bool Wanted() const = 0;
  // Sends one serialized message. Errors (after the transport shut down, a
  // message over the size limit) name the channel; nothing blocks for a
  // slow reader beyond the QoS's own bound.
  virtual absl::Status Publish(absl::string_view payload,
                               Correlation correlation = {}) = 0;
  // The same for a message not yet serialized: the transport serializes it
  // straight into its own buffer (no intermediate copy). `message` must not
  // be modified during the call.
  virtual absl::Status PublishMessage(const google::protobuf::MessageLite& message,
                                      Correlation correlation = {}) = 0;
  // Publish with the sender's stamp set to `source_time` instead of now
  // (readers see it as SampleOrigin::source_time_ns): a replayed message
  // keeps its original send stamp, a process on lockstep simulated time
  // stamps its simulated instant. InvalidArgument for a time before the
  // epoch or an infinite one.
  virtual absl::Status PublishAt(absl::string_view payload, absl::Time source_time,
                                 Correlation correlation = {}) = 0;
};

// Open while it exists: destroying it unsubscribes, and no handler call
// runs after the destructor returns.
class RemoteSubscription {
 public:
  virtual ~RemoteSubscription() = default;
};

// Per channel, what crossed the process boundary (mainboard's status).
struct RemoteChannelStats {
  std::string channel;
  std::string type_name;
  uint64_t sent = 0;           // samples published
  uint64_t send_failures = 0;  // Publish errors
  uint64_t received = 0;       // samples from other processes handed over
  uint64_t bytes_sent = 0;     // the messages' bytes (frame headers not counted)
  uint64_t bytes_received = 0;
  uint64_t dropped_undecodable = 0;  // not a frame, or not the message type
  uint64_t lost = 0;                 // gaps DDS reported (best effort)
  int64_t latency_p99_ns = -1;       // same-host samples; -1: none yet
  std::vector<RemotePeer> remote_writers;
  std::vector<RemotePeer> remote_readers;
  // Peers on this channel with another message type now, one line per
  // peer, role and type: "fusion (host robot, pid 9) reads sensor.OldImu".
  // A conflict lasts as long as the peer's endpoint: it ends when that
  // endpoint is removed, the peer leaves, or the peer is declared dead
  // (after its lease), e.g. when it restarts with the right type. Each is
  // logged as an error when it begins and as information when it ends.
  std::vector<std::string> type_conflicts;
  // Conflicts on this channel that have ended since the process started.
  uint64_t type_conflicts_ended = 0;
};

class RemoteTransport {
 public:
  // Returns true if `payload` parsed as the channel's message and was
  // handed over; false: the transport drops it, counts it and logs it with
  // the sender named.
  using SampleHandler = std::function<bool(const RemoteSample&)>;

  virtual ~RemoteTransport() = default;

  // True when the transport decides when each message is handed over (a
  // lockstep run's): nothing may reach readers around it, e.g. a loan
  // segment's doorbell (cyber/transport/loan/loan_inlet.h).
  virtual bool ControlsDeliveryTime() const { return false; }

  // The outlet of `endpoint.channel` in this process (one per channel: the
  // second call returns the first one's). FailedPrecondition after
  // Shutdown(), or when the channel's QoS differs from the first caller's
  // (both named); Unavailable when the transport cannot start.
  virtual absl::StatusOr<std::shared_ptr<RemotePublisher>> Publisher(
      const RemoteEndpoint& endpoint) = 0;
  // Subscribes `handler` to other processes' messages on the channel.
  virtual absl::StatusOr<std::unique_ptr<RemoteSubscription>> Subscribe(
      const RemoteEndpoint& endpoint, SampleHandler handler) = 0;

  // Called once per peer process that goes away (left, or stopped answering
  // and declared dead), on a transport thread; for services. Returns an id
  // for RemovePeerLostListener.
  virtual uint64_t AddPeerLostListener(
      std::function<void(const RemotePeer&, bool crashed)> listener) = 0;
  virtual void RemovePeerLostListener(uint64_t id) = 0;

  // The processes with a writer on `channel` now (a client asks whether a
  // server is left after a peer went away).
  virtual std::vector<RemotePeer> RemoteWriters(
      const std::string& channel) const = 0;
  // Every channel this process opened, sorted by name.
  virtual std::vector<RemoteChannelStats> ChannelStats() const = 0;
  // The peers declared dead (stopped answering: crashed or killed) since
  // the transport started, oldest first; the last 16 are kept.
  virtual std::vector<RemotePeer> LostPeers() const = 0;
  // This process as its peers see it.
  virtual RemotePeer self() const = 0;
  // Whether the transport has joined the network (a DdsTransport: its
  // participant exists, made by the first Publisher() or Subscribe()).
  // Lets a caller that only reports on the process (the graph announcer
  // of cyber::Init) wait for the process's own first channel instead of
  // starting DDS in a program that never uses it.
  virtual bool linked() const { return true; }
  // Closes every endpoint and leaves the network; later calls fail, handlers
  // are not called again. Idempotent.
  virtual void Shutdown() = 0;
};

}  // namespace cyber

#endif  // CYBER_TRANSPORT_REMOTE_TRANSPORT_H_
