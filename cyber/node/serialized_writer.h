// SerializedWriter: publishes serialized protobuf messages on a channel
// whose C++ message type the writing code does not know. A recording's
// replay (cyber/simulation/recording_replay.h) feeds a graph's channels this
// way from the bytes and type names the recording keeps.
//
// Why not Writer<M>: the replay is compiled without the graph's message
// types. The channel's type is fixed by the graph's own readers and writers
// (channel_bus.h); Node::TryCreateSerializedWriter finds the channel by
// name, and each Write() parses the payload into that type once and hands
// the message to every reader subscribed now, as Writer<M>::Write does (the
// readers' queues, their drops, their order). In this process only: a
// serialized write does not go to other processes.
//
// The writer counts as a writer of its node on the channel (the launcher's
// "read but written by no one" check sees it) while it exists and its node
// is not shut down.
//
// Threads: as Writer<M>: every method is thread-safe.

#ifndef CYBER_NODE_SERIALIZED_WRITER_H_
#define CYBER_NODE_SERIALIZED_WRITER_H_

#include <atomic>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/string_view.h"
#include "cyber/common/log.h"
#include "cyber/node/writer.h"
#include "cyber/transport/channel_bus.h"
#include "cyber/transport/node_state.h"

namespace cyber {

class SerializedWriter {
 public:
  SerializedWriter(const SerializedWriter&) = delete;
  SerializedWriter& operator=(const SerializedWriter&) = delete;

  // Parses `payload` as the channel's message and delivers it to every
  // reader of the channel. Returns false, and delivers nothing, when the
  // node is shut down or the payload does not parse (logged, naming node,
  // channel and type).
  bool Write(absl::string_view payload) {
    if (node_->shut_down.load(std::memory_order_acquire)) {
      refused_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    if (!channel_->DeliverSerialized(payload)) {
      refused_.fetch_add(1, std::memory_order_relaxed);
      AERROR_EVERY(100) << "node \"" << node_->name << "\": serialized writer on channel \""
                        << channel_name() << "\": " << payload.size()
                        << " bytes do not parse as " << type_name() << "; not delivered";
      return false;
    }
    written_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }

  const std::string& channel_name() const { return channel_->name(); }
  const std::string& node_name() const { return node_->name; }
  // The protobuf full name of the channel's message ("sensor_polling.ImuReading").
  const std::string& type_name() const { return type_name_; }

  WriterStats stats() const {
    WriterStats s;
    s.written = written_.load(std::memory_order_relaxed);
    s.refused = refused_.load(std::memory_order_relaxed);
    return s;
  }

 private:
  friend class Node;

  SerializedWriter(std::shared_ptr<const transport_internal::NodeState> node,
                   std::shared_ptr<transport_internal::ChannelBase> channel,
                   std::string type_name)
      : node_(std::move(node)), channel_(std::move(channel)), type_name_(std::move(type_name)) {}

  const std::shared_ptr<const transport_internal::NodeState> node_;
  const std::shared_ptr<transport_internal::ChannelBase> channel_;
  const std::string type_name_;
  std::atomic<uint64_t> written_{0};
  std::atomic<uint64_t> refused_{0};
};

}  // namespace cyber

#endif  // CYBER_NODE_SERIALIZED_WRITER_H_
