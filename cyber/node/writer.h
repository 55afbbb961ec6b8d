// Writer<M>: publishes messages of type M on one channel.
//
// Why writes never wait: a sensor driver publishing at 100 Hz must not be
// slowed by whoever listens. Write() takes a snapshot of the channel's
// readers (one shared_ptr copy under the channel lock) and pushes the message
// into each reader's bounded queue outside that lock; each reader's callback
// runs later in a scheduler routine (see reader.h). A full reader queue drops
// its oldest pending message and counts it there; the writer is never told
// and never blocks.
//
// Messages are shared, not copied per reader: every reader gets the same
// std::shared_ptr<const M>. Write(const M&) makes one copy into a shared_ptr
// first; publish with Write(std::shared_ptr<const M>) to avoid it.
//
// A reader subscribing concurrently with a Write may or may not receive that
// message; a reader that subscribed before Write() was called receives it.
//
// Other processes: when the channel is linked to them (channel_bus.h), a
// write also goes out, once, after the local deliveries: serialized only if
// a reader in another process is matched (or the channel keeps messages
// for late joiners). A failure there (a message over the transport's size
// limit, the transport shut down) does not undo the local delivery: it is
// counted (remote_failures) and logged, naming node and channel. A
// Writer<SharedBytes> sends a message its process loaned for this channel
// (cyber/node/loan_writer.h) as a reference its readers on this host read
// in place, any other (one received from another process, too) as its
// bytes.
//
// Threads: every method is thread-safe; one Writer may be used from many
// threads and routines at once (each reader sees each thread's messages in
// that thread's order). A Writer may outlive its Node (its writes then
// return false) and its ChannelBus.

#ifndef CYBER_NODE_WRITER_H_
#define CYBER_NODE_WRITER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "cyber/common/log.h"
#include "cyber/transport/channel_bus.h"
#include "cyber/transport/node_state.h"
#include "cyber/node/reader.h"

namespace cyber {

struct WriterStats {
  uint64_t written = 0;  // Write() calls that delivered (returned true)
  uint64_t refused = 0;  // Write() calls that returned false
  uint64_t remote_failures = 0;  // writes other processes did not get
};

template <typename M>
class Writer {
 public:
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // Delivers `message` to every reader of the channel. Returns false, and
  // delivers nothing, if the node is shut down or `message` is null.
  bool Write(std::shared_ptr<const M> message) {
    if (node_->shut_down.load(std::memory_order_acquire)) {
      refused_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    if (message == nullptr) {
      refused_.fetch_add(1, std::memory_order_relaxed);
      AERROR_EVERY(100) << "node \"" << node_->name << "\": writer on channel \""
                        << channel_name() << "\": Write(nullptr) refused";
      return false;
    }
    const auto readers = channel_->Snapshot();
    for (const auto& reader : *readers) reader->Deliver(message);
    if constexpr (transport_internal::kCrossesProcesses<M>) {
      if (remote_ != nullptr && remote_->Wanted()) SendRemote(*message);
    }
    written_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }

  // Copies `message` into a shared_ptr, then as above.
  bool Write(const M& message) {
    return Write(std::shared_ptr<const M>(std::make_shared<M>(message)));
  }

  const std::string& channel_name() const { return channel_->name(); }
  const std::string& node_name() const { return node_->name; }
  // True once the node is shut down: every Write from then on returns false.
  bool closed() const { return node_->shut_down.load(std::memory_order_acquire); }

  WriterStats stats() const {
    WriterStats s;
    s.written = written_.load(std::memory_order_relaxed);
    s.refused = refused_.load(std::memory_order_relaxed);
    s.remote_failures = remote_failures_.load(std::memory_order_relaxed);
    return s;
  }

 private:
  friend class Node;

  Writer(std::shared_ptr<const transport_internal::NodeState> node,
         std::shared_ptr<transport_internal::Channel<M>> channel,
         std::shared_ptr<RemotePublisher> remote)
      : node_(std::move(node)), channel_(std::move(channel)), remote_(std::move(remote)) {}

  void SendRemote(const M& message) {
    absl::Status sent;
    if constexpr (transport_internal::kIsSharedBytes<M>) {
      // This process's loan on this channel travels as its reference (the
      // readers of this host read it in place); anything else as its bytes.
      sent = remote_->Publish(message.SendsAsLoanOn(channel_name())
                                  ? loan::EncodeLoan(*message.loan())
                                  : loan::EncodeInline(message.view()));
    } else {
      sent = remote_->PublishMessage(message);
    }
    if (sent.ok()) return;
    const uint64_t failures = remote_failures_.fetch_add(1, std::memory_order_relaxed) + 1;
    AERROR_EVERY(100) << "node \"" << node_->name << "\": writer on channel \""
                      << channel_name() << "\": not sent to other processes: "
                      << sent.message() << " (" << failures << " so far)";
  }

  const std::shared_ptr<const transport_internal::NodeState> node_;
  const std::shared_ptr<transport_internal::Channel<M>> channel_;
  // The channel's outlet to other processes; null: in-process only.
  const std::shared_ptr<RemotePublisher> remote_;
  std::atomic<uint64_t> remote_failures_{0};
  std::atomic<uint64_t> written_{0};
  std::atomic<uint64_t> refused_{0};
};

}  // namespace cyber

#endif  // CYBER_NODE_WRITER_H_
