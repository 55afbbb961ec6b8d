#include "cyber/lockstep/member.h"

#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "cyber/common/log.h"
#include "cyber/lockstep/inline_scope.h"
#include "cyber/lockstep/topics.h"

namespace cyber {
namespace lockstep {

absl::StatusOr<std::unique_ptr<LockstepMember>> LockstepMember::Start(
    std::shared_ptr<RemoteTransport> transport, MemberOptions options, MemberHooks hooks) {
  if (options.process.empty()) {
    return absl::InvalidArgumentError("lockstep member: option process is empty; give the process's name");
  }
  if (!hooks.run_until || !hooks.next_event_ns || !hooks.counts || !hooks.on_stop) {
    return absl::InvalidArgumentError(absl::StrCat("lockstep member \"", options.process,
                                                   "\": every hook (run_until, next_event_ns, counts, "
                                                   "on_stop) is required"));
  }
  if (transport == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("lockstep member \"", options.process, "\": no transport"));
  }
  std::unique_ptr<LockstepMember> m(
      new LockstepMember(std::move(transport), std::move(options), std::move(hooks)));
  absl::StatusOr<std::shared_ptr<RemotePublisher>> out =
      m->transport_->Publisher(ReportEndpoint(m->options_.process));
  if (!out.ok()) return out.status();
  m->reports_ = *std::move(out);
  LockstepMember* self = m.get();
  absl::StatusOr<std::unique_ptr<RemoteSubscription>> in = m->transport_->Subscribe(
      GrantEndpoint(m->options_.process), [self](const RemoteSample& s) {
        Grant g;
        if (!g.ParseFromArray(s.payload.data(), static_cast<int>(s.payload.size()))) return false;
        self->OnGrant(g, s.origin.sender);
        return true;
      });
  if (!in.ok()) return in.status();
  m->grants_ = *std::move(in);
  {
    MutexLock lock(&m->lost_link_->mu);
    m->lost_link_->member = self;
  }
  std::shared_ptr<LostLink> link = m->lost_link_;
  m->lost_listener_ = m->transport_->AddPeerLostListener([link](const RemotePeer& peer, bool) {
    MutexLock lock(&link->mu);
    if (link->member != nullptr) link->member->OnPeerLost(peer);
  });
  m->thread_ = std::thread([self] { self->Run(); });
  return m;
}

LockstepMember::LockstepMember(std::shared_ptr<RemoteTransport> transport, MemberOptions options,
                               MemberHooks hooks)
    : transport_(std::move(transport)), options_(std::move(options)), hooks_(std::move(hooks)) {}

LockstepMember::~LockstepMember() {
  grants_.reset();  // no OnGrant after this
  if (lost_listener_ != 0) transport_->RemovePeerLostListener(lost_listener_);
  {
    MutexLock lock(&lost_link_->mu);
    lost_link_->member = nullptr;  // no OnPeerLost after this
  }
  bool leave = false;
  uint64_t step = 0;
  int64_t instant = 0;
  {
    MutexLock lock(&mu_);
    quit_ = true;
    leave = !stopped_.has_value();
    step = step_;
    instant = instant_ns_;
    changed_.SignalAll();
    // A step running on a transport's thread (a poke) ends first.
    while (running_) changed_.Wait(&mu_);
  }
  if (thread_.joinable()) thread_.join();
  if (leave) Send(Report::LEAVE, step, instant);
}

void LockstepMember::OnGrant(const Grant& grant, const RemotePeer* sender) {
  {
    MutexLock lock(&mu_);
    if (run_id_ != 0 && grant.run_id() != run_id_) return;  // another run's
    if (sender != nullptr && coordinator_.empty()) coordinator_ = sender->process;
    const uint64_t newest = pending_ ? pending_->step() : step_;
    if (grant.step() < newest || (grant.step() == newest && !grant.stop())) return;  // seen
    pending_ = grant;
    if (!ClaimInline()) return;
  }
  RunInline();
}

void LockstepMember::OnPeerLost(const RemotePeer& peer) {
  MutexLock lock(&mu_);
  if (coordinator_.empty() || peer.process != coordinator_ || stopped_.has_value()) return;
  Grant stop;
  stop.set_run_id(run_id_);
  stop.set_step((pending_ ? pending_->step() : step_) + 1);
  stop.set_instant_ns(instant_ns_);
  stop.set_stop(true);
  stop.set_failed(true);
  stop.set_why(absl::StrCat("the lockstep coordinator (", peer.ToString(), ") was lost before the end"));
  pending_ = stop;
  changed_.Signal();
}

void LockstepMember::Poke() {
  {
    MutexLock lock(&mu_);
    poked_ = true;
    if (!ClaimInline()) return;
  }
  RunInline();
}

bool LockstepMember::failed() const {
  MutexLock lock(&mu_);
  return failed_;
}

uint64_t LockstepMember::step() const {
  MutexLock lock(&mu_);
  return step_;
}

std::string LockstepMember::WaitForStop() {
  MutexLock lock(&mu_);
  while (!stopped_.has_value()) stopped_cv_.Wait(&mu_);
  return *stopped_;
}

void LockstepMember::Send(Report::Kind kind, uint64_t step, int64_t instant_ns) {
  Report r;
  r.set_kind(kind);
  r.set_process(options_.process);
  r.set_host(options_.host);
  r.set_pid(options_.pid);
  r.set_clock("simulated");
  {
    MutexLock lock(&mu_);
    r.set_run_id(run_id_);
  }
  r.set_step(step);
  r.set_reached_ns(instant_ns);
  if (kind == Report::DONE || kind == Report::JOIN) {
    uint64_t arrivals = 0;
    for (ChannelCount& c : hooks_.counts(&arrivals)) *r.add_channels() = std::move(c);
    r.set_arrivals(arrivals);
  }
  // After the counts: a message they count that is not delivered yet is
  // in the next event (the coordinator must not see it arrived, and no
  // event left at this instant).
  if (kind == Report::DONE) r.set_next_event_ns(hooks_.next_event_ns());
  absl::Status s = reports_->PublishMessage(r);
  if (!s.ok()) {
    AERROR << "lockstep member \"" << options_.process << "\": report of step " << step
           << " not sent: " << s.message();
  }
}

bool LockstepMember::Due(const Grant& grant) const {
  for (const std::string& p : grant.due()) {
    if (p == options_.process) return true;
  }
  return false;
}

// Takes the next piece of work, REQUIRES mu_ held and running_ claimed
// by the caller: the newest grant, else a poke's run again at the current
// instant. Returns false when there is none.
bool LockstepMember::TakeWork(Work* work) {
  work->grant.reset();
  if (pending_) {
    work->grant = std::exchange(pending_, std::nullopt);
    run_id_ = work->grant->run_id();
  } else if (!(poked_ && step_ > 0)) {
    return false;
  }
  poked_ = false;
  if (work->grant && !work->grant->stop()) {
    step_ = work->grant->step();
    instant_ns_ = work->grant->instant_ns();
    auto through = work->grant->deliver_through().find(options_.process);
    through_ = through == work->grant->deliver_through().end() ? kDeliverAll : through->second;
  }
  work->step = step_;
  work->instant_ns = instant_ns_;
  work->through = through_;
  return true;
}

void LockstepMember::RunStep(const Work& work) {
  // What this step sends to a member of this process may be delivered on
  // this thread: that member must not run its step nested in this one.
  const InlineScope inside;
  if (work.grant && !Due(*work.grant)) {
    // Nothing of its own at this instant and nothing from others yet: it
    // owes no report (the coordinator keeps its last); a message of this
    // instant pokes it.
    const int64_t next = hooks_.next_event_ns();
    if (next < 0 || next > work.instant_ns) return;
  }
  hooks_.run_until(work.instant_ns, work.through);
  Send(Report::DONE, work.step, work.instant_ns);
}

bool LockstepMember::ClaimInline() {
  // A step running (here or on the member thread) takes this work in its
  // loop before it ends: nothing to wake.
  if (running_) return false;
  if (quit_ || step_ == 0 || stopped_.has_value() || (pending_ && pending_->stop()) || InlineScope::active()) {
    changed_.Signal();  // the member thread's: the join, the stop, or work nested in a step
    return false;
  }
  running_ = true;
  return true;
}

void LockstepMember::ReleaseRunning() {
  running_ = false;
  // Only the member thread (a stop to send) and the destructor (waiting for
  // running_) need to know; waking the member thread after every step would
  // cost a wake-up per step for nothing.
  if (quit_ || (pending_ && pending_->stop())) changed_.SignalAll();
}

void LockstepMember::RunInline() {
  for (;;) {
    Work work;
    {
      MutexLock lock(&mu_);
      if (quit_ || (pending_ && pending_->stop()) || !TakeWork(&work)) {
        ReleaseRunning();
        return;
      }
    }
    RunStep(work);
  }
}

void LockstepMember::Run() {
  auto next_join = std::chrono::steady_clock::now();
  for (;;) {
    Work work;
    bool join = false;
    {
      MutexLock lock(&mu_);
      for (;;) {
        if (quit_) return;
        if (!running_) {
          if (TakeWork(&work)) break;
          if (step_ == 0 && std::chrono::steady_clock::now() >= next_join) {
            join = true;
            break;
          }
        }
        if (step_ == 0) {
          changed_.WaitUntil(&mu_, next_join);
        } else {
          changed_.Wait(&mu_);
        }
      }
      running_ = true;
    }
    if (join) {  // not joined yet: say so (again)
      Send(Report::JOIN, 0, 0);
      next_join = std::chrono::steady_clock::now() + absl::ToChronoNanoseconds(options_.join_repeat);
    } else if (work.grant && work.grant->stop()) {
      hooks_.on_stop(work.grant->why());
      Send(Report::LEAVE, work.grant->step(), work.grant->instant_ns());
      MutexLock lock(&mu_);
      stopped_ = work.grant->why();
      failed_ = work.grant->failed();
      running_ = false;
      stopped_cv_.SignalAll();
      changed_.SignalAll();
      return;
    } else {
      RunStep(work);
    }
    MutexLock lock(&mu_);
    ReleaseRunning();
  }
}

}  // namespace lockstep
}  // namespace cyber
