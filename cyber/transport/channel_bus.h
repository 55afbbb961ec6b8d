// ChannelBus: the registry of in-process channels (channel name -> message
// type + the readers subscribed to it), and Channel<M>, the per-channel
// reader list that writers deliver to.
//
// Why a registry object instead of a hidden global: each runtime owns one
// (cyber/runtime/runtime.h), so two tests (or two simulated robots in one
// process) never see each other's channels. Robot code that wants Cyber
// RT's behaviour (every node of the process talks to every other) passes
// nothing, and its nodes use the process runtime's bus.
//
// Design and trade-offs:
//  * A channel's message type is fixed by its first user (writer or reader)
//    and kept for the lifetime of the bus, like Cyber RT's topology: a later
//    user with another type gets an error naming both types and the node that
//    first used the channel. Channels are never removed (a robot has a fixed,
//    small set; this keeps the type of a name stable while nodes come and go).
//  * The bus lock guards only the name -> channel map, and is taken only when
//    a Writer or Reader is created. Each channel has its own lock over a
//    copy-on-write reader list: a write takes that lock just long enough to
//    copy one shared_ptr (the snapshot), then delivers outside every lock.
//    Adding or removing a reader copies the list (rare); writing never does.
//  * Writers and readers hold their Channel by shared_ptr, so they never touch
//    the bus after creation; the bus may be destroyed before them.
//  * Topology() says who is on each channel now, for the launcher's "written
//    but never read / read but never written" check: the nodes of its live
//    readers (from the reader list) and of its live writers (each channel
//    keeps a weak reference to every writer created on it; a writer counts
//    while it exists and its node is not shut down).
//
// Between processes: a bus given a RemoteTransport (SetRemote; a runtime
// does it for the transport it owns) also links each channel whose message
// is a protobuf message to other processes, the first time a Writer or a
// Reader of this process uses it: one outlet for all of the process's
// writers (Writer::Write publishes through it after the local deliveries),
// one inlet for all of its readers (a message from another process is
// parsed once and handed to every local reader's queue, as a local write
// is). Channels of other C++ types stay in the process. A process never
// gets its own messages back. The first Writer (Reader) of a channel fixes
// the channel's qos between processes; a later one asking for another is
// refused (FailedPrecondition naming both), since DDS would match it
// differently.
//
// Threads: every method is thread-safe. The bus must outlive calls to
// Node::CreateWriter / CreateReader that use it.

#ifndef CYBER_TRANSPORT_CHANNEL_BUS_H_
#define CYBER_TRANSPORT_CHANNEL_BUS_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <typeindex>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "cyber/common/log.h"
#include "cyber/common/mutex.h"
#include "cyber/transport/channel_qos.h"
#include "cyber/transport/loan/loan_inlet.h"
#include "cyber/transport/loan/shared_bytes.h"
#include "cyber/transport/remote_transport.h"
#include "cyber/transport/service_registry.h"
#include "google/protobuf/message.h"

namespace cyber {

class Node;
template <typename M>
class Reader;

namespace transport_internal {

struct NodeState;  // node_state.h

// A readable name for a type: the demangled typeid(...).name() (the raw name
// if demangling fails), e.g. "cyber::perception::Obstacles".
std::string TypeName(const std::type_info& type);

// `names` sorted, duplicates removed.
std::vector<std::string> SortedUnique(std::vector<std::string> names);

// What the bus knows about every channel, whatever its message type.
class ChannelBase {
 public:
  ChannelBase(std::string name, const std::type_info& type,
              std::string first_node)
      : name_(std::move(name)),
        type_(type),
        type_name_(TypeName(type)),
        first_node_(std::move(first_node)) {}
  virtual ~ChannelBase() = default;
  ChannelBase(const ChannelBase&) = delete;
  ChannelBase& operator=(const ChannelBase&) = delete;

  const std::string& name() const { return name_; }
  std::type_index type() const { return type_; }
  const std::string& type_name() const { return type_name_; }
  // The node whose CreateWriter/CreateReader created the channel.
  const std::string& first_node() const { return first_node_; }

  // Records a writer created on this channel by `node` (Node does this);
  // only weak references are kept.
  void AddWriter(const std::shared_ptr<const NodeState>& node,
                 const std::shared_ptr<const void>& writer);
  // Names of the nodes that have a writer on this channel now (the writer
  // exists and its node is not shut down), sorted, each once.
  std::vector<std::string> WriterNodes() const;
  // Names of the nodes whose readers are subscribed now, sorted, each once.
  virtual std::vector<std::string> ReaderNodes() const = 0;
  // The message's protobuf descriptor; null for another C++ type.
  virtual const google::protobuf::Descriptor* descriptor() const = 0;
  // Parses `payload` as the channel's protobuf message and hands it to the
  // readers subscribed now, as a Writer's Write does (in this process
  // only). False, delivering nothing, when the channel's message is not a
  // protobuf message or the payload does not parse. For writers that know
  // the channel's type by name only (node/serialized_writer.h).
  virtual bool DeliverSerialized(absl::string_view payload) = 0;

  // The qos this process's outlet (writer = true) or inlet to other
  // processes was opened with; nullopt while it has none.
  std::optional<ChannelQos> RemoteQos(bool writer) const;

 protected:
  void NoteRemoteQos(bool writer, const ChannelQos& qos);

 private:
  struct WriterRecord {
    std::weak_ptr<const NodeState> node;
    std::weak_ptr<const void> writer;
  };

  const std::string name_;
  const std::type_index type_;
  const std::string type_name_;
  const std::string first_node_;
  // writers_mu_ protects the following state.
  mutable Mutex writers_mu_;
  std::vector<WriterRecord> writers_ ABSL_GUARDED_BY(writers_mu_);
  std::optional<ChannelQos> outlet_qos_ ABSL_GUARDED_BY(writers_mu_);
  std::optional<ChannelQos> inlet_qos_ ABSL_GUARDED_BY(writers_mu_);
};

// M's protobuf descriptor, or null when M is not a protobuf message.
template <typename M>
const google::protobuf::Descriptor* DescriptorOf() {
  if constexpr (std::is_base_of_v<google::protobuf::Message, M>) {
    return M::descriptor();
  } else {
    return nullptr;
  }
}

// Whether messages of type M can cross processes: protobuf messages (their
// serialized form) and SharedBytes (a reference to a loan segment, or the
// bytes inline: cyber/transport/loan/).
template <typename M>
inline constexpr bool kIsSharedBytes = std::is_same_v<M, SharedBytes>;
template <typename M>
inline constexpr bool kCrossesProcesses =
    std::is_base_of_v<google::protobuf::Message, M> || kIsSharedBytes<M>;

// The DDS type name of M's channels.
template <typename M>
std::string RemoteTypeName() {
  if constexpr (kIsSharedBytes<M>) {
    return std::string(SharedBytes::kTypeName);
  } else {
    return M::descriptor()->full_name();
  }
}

// One channel carrying messages of type M: the readers a write goes to.
template <typename M>
class Channel final : public ChannelBase {
 public:
  using ReaderList = std::vector<std::shared_ptr<Reader<M>>>;

  Channel(std::string name, std::string first_node)
      : ChannelBase(std::move(name), typeid(M), std::move(first_node)) {}

  ~Channel() override {
    std::unique_ptr<RemoteSubscription> inlet;
    std::shared_ptr<loan::LoanInlet> loans;
    {
      MutexLock lock(&remote_mu_);
      inlet = std::move(inlet_);
      loans = std::move(loans_);
    }
    // Destroyed outside the lock: it waits for a handler in progress. Then
    // the loan inlet's doorbell threads end (they hand over to this
    // channel's readers until then).
    inlet.reset();
    if (loans != nullptr) loans->Stop();
  }

  // The outlet to other processes for a writer of node `node` asking for
  // `qos`: null when `remote` is null or M is not a protobuf message.
  // Errors from the transport (another qos than the channel's, a transport
  // that cannot start) name the channel.
  absl::StatusOr<std::shared_ptr<RemotePublisher>> RemoteOutlet(
      const std::shared_ptr<RemoteTransport>& remote, const ChannelQos& qos,
      const std::string& node) {
    if constexpr (!kCrossesProcesses<M>) {
      return std::shared_ptr<RemotePublisher>();
    } else {
      if (remote == nullptr) return std::shared_ptr<RemotePublisher>();
      absl::StatusOr<std::shared_ptr<RemotePublisher>> outlet =
          remote->Publisher(Endpoint(qos, node));
      if (outlet.ok()) NoteRemoteQos(/*writer=*/true, qos);
      return outlet;
    }
  }

  // Subscribes the channel's readers to other processes' messages, once
  // per transport. OK and nothing when `remote` is null or M is not a
  // protobuf message; FailedPrecondition when the channel is subscribed
  // with another qos (both named).
  absl::Status RemoteInlet(const std::shared_ptr<RemoteTransport>& remote,
                           const ChannelQos& qos, const std::string& node) {
    if constexpr (!kCrossesProcesses<M>) {
      return absl::OkStatus();
    } else {
      if (remote == nullptr) return absl::OkStatus();
      // Released outside the lock (declared before it), the subscription
      // first.
      std::shared_ptr<loan::LoanInlet> replaced_loans;
      std::unique_ptr<RemoteSubscription> replaced;
      MutexLock lock(&remote_mu_);
      if (inlet_ != nullptr && inlet_transport_ == remote.get()) {
        if (inlet_qos_ == qos) return absl::OkStatus();
        return absl::FailedPreconditionError(absl::StrCat(
            "node \"", node, "\": CreateReader on channel \"", name(), "\": qos (",
            qos.ToString(), ") differs from the qos this process already reads the channel with (",
            inlet_qos_.ToString(), "); readers of one process share one qos_profile per channel"));
      }
      // Each message from another process is parsed once and shared by every
      // local reader, as a local write is. `this` outlives the subscription
      // (the channel owns it, and destroying it waits for the handler).
      // A SharedBytes channel's samples go through its loan inlet: a loan is
      // pinned and read in place (the sample holds only the reference), and
      // later publishes of its segment are handed over at the segment's
      // doorbell, unless the transport decides when messages are handed
      // over (lockstep).
      std::shared_ptr<loan::LoanInlet> loans;
      if constexpr (kIsSharedBytes<M>) {
        loan::LoanInlet::Deliver deliver;
        if (!remote->ControlsDeliveryTime()) {
          deliver = [this](std::shared_ptr<const SharedBytes> message) {
            const std::shared_ptr<const ReaderList> readers = Snapshot();
            for (const auto& reader : *readers) reader->Deliver(message);
          };
        }
        loans = std::make_shared<loan::LoanInlet>(name(), std::move(deliver));
      }
      RemoteEndpoint endpoint = Endpoint(qos, node);
      if constexpr (!kIsSharedBytes<M>) endpoint.prototype = &M::default_instance();
      absl::StatusOr<std::unique_ptr<RemoteSubscription>> sub = remote->Subscribe(
          endpoint, [this, loans](const RemoteSample& sample) {
            std::shared_ptr<const M> shared;
            if constexpr (kIsSharedBytes<M>) {
              absl::StatusOr<std::shared_ptr<const SharedBytes>> resolved =
                  loans->Resolve(sample.payload);
              if (!resolved.ok()) {
                AERROR_EVERY(100) << resolved.status().message() << " (from "
                                  << (sample.origin.sender != nullptr
                                          ? sample.origin.sender->ToString()
                                          : std::string("a process not yet discovered"))
                                  << ")";
                return false;
              }
              if (*resolved == nullptr) return true;  // the inlet handed it over
              shared = *std::move(resolved);
            } else if (sample.message != nullptr) {
              // Parsed by the transport from our prototype: an M.
              std::shared_ptr<M> parsed = std::dynamic_pointer_cast<M>(sample.message);
              if (parsed == nullptr) return false;
              shared = std::move(parsed);
            } else {
              auto message = std::make_shared<M>();
              if (!message->ParseFromArray(sample.payload.data(),
                                           static_cast<int>(sample.payload.size()))) {
                return false;
              }
              shared = std::move(message);
            }
            const std::shared_ptr<const ReaderList> readers = Snapshot();
            for (const auto& reader : *readers) reader->Deliver(shared);
            return true;
          });
      if (!sub.ok()) return sub.status();
      replaced = std::exchange(inlet_, *std::move(sub));
      replaced_loans = std::exchange(loans_, std::move(loans));
      inlet_transport_ = remote.get();
      inlet_qos_ = qos;
      NoteRemoteQos(/*writer=*/false, qos);
      return absl::OkStatus();
    }
  }

  // The readers subscribed now. The list is immutable: a reader added or
  // removed later is not in (or stays in) this snapshot.
  std::shared_ptr<const ReaderList> Snapshot() const {
    MutexLock lock(&mu_);
    return readers_;
  }

  void Add(std::shared_ptr<Reader<M>> reader) {
    std::shared_ptr<const ReaderList> old;
    {
      MutexLock lock(&mu_);
      auto next = std::make_shared<ReaderList>(*readers_);
      next->push_back(std::move(reader));
      old = std::exchange(readers_, std::move(next));
    }
    // `old` (and whatever it was last to hold) is released outside the lock.
  }

  const google::protobuf::Descriptor* descriptor() const override {
    return DescriptorOf<M>();
  }

  bool DeliverSerialized(absl::string_view payload) override {
    if constexpr (!kCrossesProcesses<M>) {
      return false;
    } else if constexpr (kIsSharedBytes<M>) {
      // The bytes themselves (a replay's payload), copied once.
      const std::shared_ptr<const M> shared = SharedBytes::Copy(payload);
      const std::shared_ptr<const ReaderList> readers = Snapshot();
      for (const auto& reader : *readers) reader->Deliver(shared);
      return true;
    } else {
      auto message = std::make_shared<M>();
      if (!message->ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
        return false;
      }
      std::shared_ptr<const M> shared = std::move(message);
      const std::shared_ptr<const ReaderList> readers = Snapshot();
      for (const auto& reader : *readers) reader->Deliver(shared);
      return true;
    }
  }

  std::vector<std::string> ReaderNodes() const override {
    const std::shared_ptr<const ReaderList> readers = Snapshot();
    std::vector<std::string> nodes;
    for (const auto& r : *readers) nodes.push_back(r->node_name());
    return SortedUnique(std::move(nodes));
  }

  void Remove(const Reader<M>* reader) {
    std::shared_ptr<const ReaderList> old;
    {
      MutexLock lock(&mu_);
      auto next = std::make_shared<ReaderList>();
      next->reserve(readers_->size());
      for (const auto& r : *readers_) {
        if (r.get() != reader) next->push_back(r);
      }
      old = std::exchange(readers_, std::move(next));
    }
  }

 private:
  RemoteEndpoint Endpoint(const ChannelQos& qos, const std::string& node) const {
    RemoteEndpoint e;
    e.channel = name();
    if constexpr (kCrossesProcesses<M>) e.type_name = RemoteTypeName<M>();
    e.qos = qos;
    e.node = node;
    return e;
  }

  mutable Mutex mu_;
  std::shared_ptr<const ReaderList> readers_ ABSL_GUARDED_BY(mu_) =
      std::make_shared<const ReaderList>();

  // remote_mu_ protects the inlet from other processes.
  Mutex remote_mu_;
  std::unique_ptr<RemoteSubscription> inlet_ ABSL_GUARDED_BY(remote_mu_);
  // A SharedBytes channel's loan inlet (the subscription's handler holds it
  // too); null otherwise.
  std::shared_ptr<loan::LoanInlet> loans_ ABSL_GUARDED_BY(remote_mu_);
  // Compared only, never dereferenced: a later runtime's transport replaces
  // the inlet.
  const RemoteTransport* inlet_transport_ ABSL_GUARDED_BY(remote_mu_) = nullptr;
  ChannelQos inlet_qos_ ABSL_GUARDED_BY(remote_mu_);
};

}  // namespace transport_internal

// Who is on one channel now (see ChannelBus::Topology).
struct ChannelTopology {
  std::string channel;
  std::string type_name;             // the message type, demangled
  std::vector<std::string> writers;  // nodes with a live writer, sorted, once each
  std::vector<std::string> readers;  // nodes with a subscribed reader, likewise
  // The message's protobuf descriptor (null: another C++ type, which stays
  // in the process).
  const google::protobuf::Descriptor* descriptor = nullptr;
  // The qos of this process's link to other processes, as writer and as
  // reader; nullopt: no such link.
  std::optional<ChannelQos> writer_qos;
  std::optional<ChannelQos> reader_qos;
};

class ChannelBus {
 public:
  ChannelBus() = default;
  ~ChannelBus() = default;
  ChannelBus(const ChannelBus&) = delete;
  ChannelBus& operator=(const ChannelBus&) = delete;

  // Names of the channels registered so far, sorted.
  std::vector<std::string> ChannelNames() const;

  // Every channel registered so far, sorted by name, with the nodes writing
  // and reading it at the time of the call. A snapshot: nodes may come and
  // go while it is taken.
  std::vector<ChannelTopology> Topology() const;
  // Likewise for services: every service used on this bus so far, sorted by
  // name, with the node of its live server (if any) and of its live
  // clients (the launcher's "called but served by no one" check).
  std::vector<transport_internal::ServiceTopology> ServicesTopology() const {
    return services_->Topology();
  }
  // Every server and client of the bus's services that still exists, with
  // its counts (mainboard's service table).
  std::vector<transport_internal::ServiceEndpointReport> ServicesReport() const {
    return services_->Report();
  }

  // The transport to other processes for channels linked from now on
  // (null: none, the default). A runtime sets the one it owns and clears it
  // at shutdown; ClearRemote(t) clears only if `t` is still the one set.
  void SetRemote(std::shared_ptr<RemoteTransport> remote);
  void ClearRemote(const RemoteTransport* remote);
  std::shared_ptr<RemoteTransport> remote() const;

 private:
  friend class Node;

  // The channel named `channel`, created for message type M if new.
  // Errors: FailedPrecondition if the channel carries another type; the
  // message names `node`, the channel, both types and the channel's first
  // node. REQUIRES: `channel` is not empty (Node checks it).
  // The channel named `channel` if a writer or reader has used it (its
  // type is then fixed), else null.
  std::shared_ptr<transport_internal::ChannelBase> FindChannel(
      const std::string& channel) const;

  template <typename M>
  absl::StatusOr<std::shared_ptr<transport_internal::Channel<M>>> GetChannel(
      const std::string& node, const std::string& channel) {
    absl::StatusOr<std::shared_ptr<transport_internal::ChannelBase>> found =
        FindOrAdd(node, channel, typeid(M), [&] {
          return std::make_shared<transport_internal::Channel<M>>(channel, node);
        });
    if (!found.ok()) return found.status();
    // FindOrAdd checked the type, so the downcast is to the right class.
    return std::static_pointer_cast<transport_internal::Channel<M>>(
        *std::move(found));
  }

  absl::StatusOr<std::shared_ptr<transport_internal::ChannelBase>> FindOrAdd(
      const std::string& node, const std::string& channel,
      const std::type_info& type,
      const std::function<std::shared_ptr<transport_internal::ChannelBase>()>&
          make);

  mutable Mutex mu_;
  std::map<std::string, std::shared_ptr<transport_internal::ChannelBase>>
      channels_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<RemoteTransport> remote_ ABSL_GUARDED_BY(mu_);

  // --- Services (service.h, client.h) --------------------------------------
  // The bus's services; held by its servers and clients too, so the bus may
  // be destroyed before them (as channels).
  const std::shared_ptr<transport_internal::ServiceRegistry>& services() const {
    return services_;
  }
  const std::shared_ptr<transport_internal::ServiceRegistry> services_ =
      std::make_shared<transport_internal::ServiceRegistry>();
  // --- end of services ------------------------------------------------------
};

}  // namespace cyber

#endif  // CYBER_TRANSPORT_CHANNEL_BUS_H_
