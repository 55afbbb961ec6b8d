// LockstepTransport: what a process on lockstep simulated time puts between
// its runtime and the real transport (RemoteTransport decorator).
//
// Out: every message is sent stamped with the process's simulated instant
// (PublishAt: the DDS source timestamp carries it, as ns since the
// simulation's epoch mapped onto the Unix epoch), and counted per channel.
// In: a message from another process is not handed to the runtime when it
// arrives, but queued and counted (arrived); DeliverDue(T, through), called
// by the lockstep member when it runs to instant T, hands over every queued
// message whose send instant is at or before T and that arrived `through`th
// or earlier, in one order: by instant, then by writing process (its name),
// then in the order that process sent them, across its channels (the order
// they arrive in). So a message is delivered at the instant it was sent,
// and one process's messages of an instant in the order it sent them, as
// within one process, however the member's runs at that instant split
// them. A process that reads from two or more processes is run with the
// `through` its grant gives (what had arrived when the step before
// completed), so their messages of one instant are handed over together,
// in writer order, in every run (docs/lockstep.md, "One order for
// everything"). Arrivals are announced (on_arrival) so that the member
// reports again; delivered messages are counted per channel.
//
// Threads: every method is thread-safe. Handlers run on the thread that
// calls DeliverDue, never under this object's lock.

#ifndef CYBER_LOCKSTEP_LOCKSTEP_TRANSPORT_H_
#define CYBER_LOCKSTEP_LOCKSTEP_TRANSPORT_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "cyber/common/mutex.h"
#include "cyber/lockstep/lockstep.pb.h"
#include "cyber/transport/remote_transport.h"

namespace cyber {
namespace lockstep {

class LockstepTransport final : public RemoteTransport {
 public:
  // `now_ns`: the process's simulated instant (ns since the simulation's
  // epoch, >= 0), read when a message is sent.
  LockstepTransport(std::shared_ptr<RemoteTransport> inner, std::function<int64_t()> now_ns);
  ~LockstepTransport() override;

  // Messages are handed over at DeliverDue only (a loan segment's doorbell
  // must not bypass it).
  bool ControlsDeliveryTime() const override { return true; }

  // Called (on a transport thread) after each arrival. Returns once no
  // call of the listener it replaces is in progress (so what that listener
  // reaches may go); never call it from the listener, nor from anything a
  // delivery of this transport runs.
  void SetArrivalListener(std::function<void()> on_arrival);
  // Hands over every queued message sent at or before `instant_ns` that
  // arrived `through`th or earlier (arrivals are numbered from 1), in
  // (instant, writer, sequence) order; returns how many.
  size_t DeliverDue(int64_t instant_ns, uint64_t through = UINT64_MAX);
  // Per channel: sent to, arrived from and delivered from other processes;
  // with `matched_readers`, also the processes whose readers each writer
  // has matched (what the join needs; it costs a walk over the inner
  // transport's statistics, so the reports of steps leave it out).
  // `arrivals`, when given: how many messages had arrived, taken with the
  // counts.
  std::vector<ChannelCount> Counts(bool matched_readers = true, uint64_t* arrivals = nullptr) const;
  // The earliest send instant among queued messages; -1: none.
  int64_t EarliestQueued() const;
  // A digest of every message handed over so far, in the order handed
  // over: its instant, writer, channel, sequence and bytes (FNV-1a, 64
  // bits, as 16 hex digits). Two runs handed the same messages over in the
  // same order when their digests are equal. `delivered`: how many.
  std::string DeliveryDigest(uint64_t* delivered = nullptr) const;

  // RemoteTransport
  absl::StatusOr<std::shared_ptr<RemotePublisher>> Publisher(const RemoteEndpoint& endpoint) override;
  absl::StatusOr<std::unique_ptr<RemoteSubscription>> Subscribe(const RemoteEndpoint& endpoint,
                                                                SampleHandler handler) override;
  uint64_t AddPeerLostListener(std::function<void(const RemotePeer&, bool crashed)> listener) override {
    return inner_->AddPeerLostListener(std::move(listener));
  }
  void RemovePeerLostListener(uint64_t id) override { inner_->RemovePeerLostListener(id); }
  std::vector<RemotePeer> RemoteWriters(const std::string& channel) const override {
    return inner_->RemoteWriters(channel);
  }
  std::vector<RemoteChannelStats> ChannelStats() const override { return inner_->ChannelStats(); }
  std::vector<RemotePeer> LostPeers() const override { return inner_->LostPeers(); }
  RemotePeer self() const override { return inner_->self(); }
  bool linked() const override { return inner_->linked(); }
  // Also drops the messages still queued (their instants never came).
  void Shutdown() override;

  // Shared with the publishers and subscriptions it hands out, which may
  // outlive it.
  struct State;

 private:
  void DropQueued();

  const std::shared_ptr<RemoteTransport> inner_;
  const std::shared_ptr<State> state_;
};

}  // namespace lockstep
}  // namespace cyber

#endif  // CYBER_LOCKSTEP_LOCKSTEP_TRANSPORT_H_
