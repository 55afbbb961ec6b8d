// Component<M0, ...>: a component driven by messages, reading one to four
// channels, with Cyber RT's semantics; Component<> (below) reads none.
//
//   class Fusion : public cyber::Component<Chatter, Driver> {
//    public:
//     bool Init() override { ... }
//     bool Proc(const std::shared_ptr<Chatter>& chatter,
//               const std::shared_ptr<Driver>& driver) override { ... }
//   };
//   CYBER_REGISTER_COMPONENT(Fusion)
//
// The graph entry lists one `readers` entry per channel, in the order of the
// template arguments: readers[0] is M0's channel, readers[1] M1's, and so on.
// A count that differs from the arity is refused at start with the entry's
// location (an extra entry would otherwise be silently unused; a missing one
// would leave Proc() never called).
//
// When Proc runs (the "fusion" rule, as in Cyber RT):
//   - only a message on the first channel (M0) triggers Proc();
//   - it is called with that message and the latest message of each other
//     channel, which may be one Proc() already saw;
//   - not before each other channel has delivered at least one message: M0
//     messages arriving earlier are dropped and counted
//     (ComponentStats::unfused); a Component<M0> has nothing to wait for.
//
// Messages on each channel arrive in write order, in scheduler routines;
// Proc() is never concurrent with itself (only M0's reader calls it). A
// Proc() that returns false or throws is a failed call: counted in Stats()
// (a throw also in `exceptions`) and logged with the running count; the
// component keeps receiving (ComponentBase::RunProc). If
// Proc() falls behind, M0's pending queue (`pending_queue_size`, default 1)
// keeps the newest messages and counts the dropped ones
// (ComponentStats::dropped). Messages are shared and immutable by contract:
// Proc() receives std::shared_ptr<M> (Cyber RT's signature) but must not
// modify a message. Shutdown() shuts every reader down synchronously, then
// calls Clear(): no Proc() runs after it returns.
//
// Component<> reads no channel and has no Proc(), as in Cyber RT: Init()
// starts whatever the component does itself — a loop (cyber::Async,
// CreateTask), a Timer, a service answering on a Reader it creates:
//
//   class ControlLoop : public cyber::Component<> {
//    public:
//     bool Init() override {
//       writer_ = node_->CreateWriter<Command>("/control/command");
//       timer_ = std::make_unique<cyber::Timer>(10, [this] { Step(); }, false);
//       timer_->Start();
//       return true;
//     }
//     void Clear() override { timer_->Stop(); }
//     ...
//   };
//
// Its graph entry is under `components`, with no `readers` (an entry is
// refused, naming it). Shutdown() shuts its node down (readers it created
// stop synchronously), then calls Clear() (if Init() ran), which must stop
// what Init() started (timers, tasks) before the component is destroyed. Stats() count
// no Proc() calls (`has_proc` false; the summary shows `-`).

#ifndef CYBER_COMPONENT_COMPONENT_H_
#define CYBER_COMPONENT_COMPONENT_H_

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "cyber/common/mutex.h"
#include "cyber/component/component_base.h"
#include "cyber/component/component_registry.h"

namespace cyber {

// The "no message" type: Component<> is Component<NullType> (Cyber RT's
// name; user code never names it).
struct NullType {};

namespace component_internal {
// How many channels a Component<M0, Ms...> reads (Cyber RT allows up to 4).
// Not a member: in a user's component class, a member of its base hides a
// name of the user's own namespace, so a public constant here named like
// the robot's (`kChannels`) would silently take its place in Proc().
template <typename... Ms>
inline constexpr size_t kChannelCount = sizeof...(Ms);
}  // namespace component_internal

template <typename M0 = NullType, typename... Ms>
class Component : public ComponentBase {
 public:
  static_assert(component_internal::kChannelCount<M0, Ms...> <= 4,
                "a Component reads at most 4 channels");

  virtual bool Proc(const std::shared_ptr<M0>& m0,
                    const std::shared_ptr<Ms>&... ms) = 0;

  using ComponentBase::Initialize;
  absl::Status Initialize(const dag::ComponentSpec& spec,
                          const ComponentContext& context) override {
    absl::Status s = SetUpFrom(spec, context);
    if (!s.ok()) return s;
    s = CheckReaderCount(spec);
    if (!s.ok()) return s;
    if (!RunInit()) {
      return absl::FailedPreconditionError(absl::StrCat(
          spec.where.ToString(), ": component \"", name(), "\" (",
          class_name(), "): Init() returned false"));
    }
    // The other channels first, so a message written on them before the
    // first channel's reader exists is not missed for the first fusion.
    s = CreateLatestReaders(spec, std::index_sequence_for<Ms...>());
    if (!s.ok()) return s;
    const dag::ReaderConfig& reader = spec.readers.front();
    auto created = node()->template TryCreateReader<M0>(
        ReaderConfigOf(reader),
        [this](const std::shared_ptr<const M0>& msg) { OnFirstChannel(msg); });
    if (!created.ok()) return Located(reader, created.status());
    reader_ = *std::move(created);
    return absl::OkStatus();
  }

  void Shutdown() override {
    if (this->shut_down_.exchange(true)) return;
    if (reader_) reader_->Shutdown();  // synchronous: no Proc() after this
    // The other channels' readers and every reader Init() created.
    if (this->node()) this->node()->Shutdown();
    Clear();
  }

  ComponentStats Stats() const override {
    ComponentStats s = this->BaseStats();
    if (reader_) s.dropped = reader_->stats().dropped_overflow;
    s.unfused = unfused_.load(std::memory_order_relaxed);
    return s;
  }

 private:
  using Latest = std::tuple<std::shared_ptr<const Ms>...>;

  absl::Status CheckReaderCount(const dag::ComponentSpec& spec) const {
    constexpr size_t channels = component_internal::kChannelCount<M0, Ms...>;
    const size_t n = spec.readers.size();
    if (n == channels) return absl::OkStatus();
    // Point at the first entry it cannot use, or at the component.
    const dag::SourceLocation& where =
        n > channels ? spec.readers[channels].where : spec.where;
    return absl::InvalidArgumentError(absl::StrCat(
        where.ToString(), ": component \"", spec.name, "\" (", spec.class_name,
        "): readers: ", n, n == 1 ? " entry" : " entries", ", but the class reads ",
        channels, channels == 1 ? " channel" : " channels",
        " (one readers entry per Component<...> message type, the first "
        "triggers Proc())"));
  }

  // The transport's reader configuration of a dag `readers` entry.
  static ReaderConfig ReaderConfigOf(const dag::ReaderConfig& reader) {
    ReaderConfig config;
    config.channel_name = reader.channel;
    config.pending_queue_size = static_cast<uint32_t>(
        std::min<size_t>(reader.pending_queue_size, UINT32_MAX));
    config.qos_profile = reader.qos;
    return config;
  }

  static absl::Status Located(const dag::ReaderConfig& reader,
                              const absl::Status& status) {
    return absl::Status(status.code(), absl::StrCat(reader.where.ToString(), ": ",
                                                    status.message()));
  }

  template <size_t... I>
  absl::Status CreateLatestReaders(const dag::ComponentSpec& spec,
                                   std::index_sequence<I...>) {
    absl::Status s;
    // In channel order; stops at the first failure.
    ((s.ok() ? void(s = CreateLatestReader<I>(spec.readers[I + 1])) : void()), ...);
    return s;
  }

  // Channel I + 1: keeps its latest message for the next fusion.
  template <size_t I>
  absl::Status CreateLatestReader(const dag::ReaderConfig& reader) {
    using M = std::tuple_element_t<I, std::tuple<Ms...>>;
    auto created = node()->template TryCreateReader<M>(
        ReaderConfigOf(reader), [this](const std::shared_ptr<const M>& msg) {
          MutexLock lock(&latest_mu_);
          std::get<I>(latest_) = msg;
        });
    if (!created.ok()) return Located(reader, created.status());
    return absl::OkStatus();  // the node owns it; Shutdown() stops it
  }

  void OnFirstChannel(const std::shared_ptr<const M0>& msg) {
    if (this->shut_down_.load(std::memory_order_acquire)) return;
    Latest latest;
    if constexpr (sizeof...(Ms) > 0) {
      MutexLock lock(&latest_mu_);
      latest = latest_;
    }
    const bool ready = std::apply(
        [](const auto&... m) { return (true && ... && (m != nullptr)); }, latest);
    if (!ready) {
      unfused_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    // Counted, and a throw caught and logged, by RunProc.
    this->RunProc([&] {
      return std::apply(
          [&](const auto&... m) {
            return Proc(std::const_pointer_cast<M0>(msg), std::const_pointer_cast<Ms>(m)...);
          },
          latest);
    });
  }

  std::shared_ptr<Reader<M0>> reader_;
  mutable Mutex latest_mu_;
  Latest latest_ ABSL_GUARDED_BY(latest_mu_);
  std::atomic<uint64_t> unfused_{0};
};

// A component that reads no channel: Init() only (see the header comment).
template <>
class Component<> : public ComponentBase {
 public:
  using ComponentBase::Initialize;
  absl::Status Initialize(const dag::ComponentSpec& spec,
                          const ComponentContext& context) override {
    absl::Status s = SetUpFrom(spec, context);
    if (!s.ok()) return s;
    if (!spec.readers.empty()) {
      const size_t n = spec.readers.size();
      return absl::InvalidArgumentError(absl::StrCat(
          spec.readers.front().where.ToString(), ": component \"", spec.name,
          "\" (", spec.class_name, "): readers: ", n, n == 1 ? " entry" : " entries",
          ", but the class reads no channel (a Component<> has no Proc(); it "
          "starts its own work in Init())"));
    }
    init_called_ = true;
    if (!RunInit()) {
      return absl::FailedPreconditionError(absl::StrCat(
          spec.where.ToString(), ": component \"", name(), "\" (",
          class_name(), "): Init() returned false"));
    }
    return absl::OkStatus();
  }

  void Shutdown() override {
    if (shut_down_.exchange(true)) return;
    // Readers and writers Init() created; its timers and tasks are
    // Clear()'s to stop. Clear() runs if Init() did (even if it returned
    // false, it may have started something), not for a refused entry.
    if (node()) node()->Shutdown();
    if (init_called_) Clear();
  }

  ComponentStats Stats() const override {
    ComponentStats s = BaseStats();  // the counts stay 0: there is no Proc()
    s.has_proc = false;
    return s;
  }

 private:
  bool init_called_ = false;  // launcher thread only
};

}  // namespace cyber

#endif  // CYBER_COMPONENT_COMPONENT_H_
