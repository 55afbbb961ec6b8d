#include "cyber/lockstep/lockstep_process.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace cyber {
namespace lockstep {

LockstepProcess::LockstepProcess(std::shared_ptr<RemoteTransport> real, std::function<int64_t()> now_ns)
    : real_(real), transport_(std::make_shared<LockstepTransport>(std::move(real), std::move(now_ns))) {}

LockstepProcess::~LockstepProcess() {
  transport_->SetArrivalListener(nullptr);
  member_.reset();
}

absl::Status LockstepProcess::Join(MemberOptions options, SimulationHooks hooks) {
  if (!hooks.run_until || !hooks.next_event_ns) {
    return absl::InvalidArgumentError(absl::StrCat("lockstep process \"", options.process,
                                                   "\": the hooks run_until and next_event_ns are required"));
  }
  if (member_ != nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("lockstep process \"", options.process, "\" has joined already"));
  }
  hooks_ = std::move(hooks);
  MemberHooks m;
  m.run_until = [this](int64_t t, uint64_t through) { RunTo(t, through); };
  m.next_event_ns = [this] {
    const int64_t own = hooks_.next_event_ns();
    const int64_t queued = transport_->EarliestQueued();
    if (own < 0) return queued;
    if (queued < 0) return own;
    return std::min(own, queued);
  };
  // Matched readers matter to the join only: once granted, the reports
  // leave them out.
  m.counts = [this](uint64_t* arrivals) {
    return transport_->Counts(/*matched_readers=*/!granted_.load(), arrivals);
  };
  m.on_stop = [this](const std::string& why) {
    if (hooks_.on_stop) hooks_.on_stop(why);
  };
  absl::StatusOr<std::unique_ptr<LockstepMember>> member =
      LockstepMember::Start(real_, std::move(options), std::move(m));
  if (!member.ok()) return member.status();
  member_ = *std::move(member);
  LockstepMember* raw = member_.get();
  transport_->SetArrivalListener([raw] { raw->Poke(); });
  // A message that arrived while the member started, after a DONE it may
  // already have sent, poked no one: poke once (run again at the same
  // instant and report again: harmless when nothing came).
  raw->Poke();
  return absl::OkStatus();
}

std::string LockstepProcess::WaitForStop() {
  return member_ != nullptr ? member_->WaitForStop() : std::string("never joined");
}

void LockstepProcess::RunTo(int64_t instant_ns, uint64_t through) {
  granted_.store(true);
  hooks_.run_until(instant_ns);
  if (through != kDeliverAll) {
    // Gathering: what had arrived when the step before completed, at once;
    // what arrives later waits for the next step's `through`.
    if (transport_->DeliverDue(instant_ns, through) > 0) hooks_.run_until(instant_ns);
    return;
  }
  while (transport_->DeliverDue(instant_ns) > 0) hooks_.run_until(instant_ns);
}

}  // namespace lockstep
}  // namespace cyber
