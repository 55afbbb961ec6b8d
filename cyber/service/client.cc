#include "cyber/service/client.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <random>
#include <utility>

#include "boost/context/fiber.hpp"  // forced_unwind, which must pass through
#include "cyber/common/nearest_name.h"
#include "cyber/common/runtime_scope.h"
#include "cyber/time/current_clock.h"
#include "cyber/time/sleep_on_clock.h"
#include "cyber/time/steady_clock.h"
#include "timer/timer_system_core.h"

namespace cyber {
namespace transport_internal {
namespace {

// How often WaitForService asks again, on the node's runtime clock.
constexpr absl::Duration kServicePoll = absl::Milliseconds(10);
// How often a thread blocked in Call() checks, on real time, whether the
// node's scheduler is stopping (its runtime shutting down: the timeout
// would never fire). Not a timeout: a safety net.
constexpr std::chrono::milliseconds kStoppingPoll{250};

uint64_t RandomClientId() {
  std::random_device rd;
  for (;;) {
    const uint64_t id = (static_cast<uint64_t>(rd()) << 32) ^ rd();
    if (id != 0) return id;
  }
}

}  // namespace

// One request in flight, and the timing-wheel entry of its timeout (as a
// routine is the entry of its SleepFor: no Timer, no allocation to arm).
// Its outcome is decided once, under `mu`, by ClientCore::Finish: whoever
// comes first (response, timeout, server gone, shutdown) decides; the
// others find `decided`. The entry is armed at most once, under `mu`
// while undecided; Finish takes `wheel` under `mu` and cancels it. So an
// armed entry is always an undecided call, which the client's pending_
// holds: the record outlives its arming, as TimerSystemCore requires.
class PendingCall final : public ReplyTo,
                          public timer::ExpiryTargetOf<PendingCall> {
 public:
  PendingCall(std::weak_ptr<ClientCore> client, uint64_t seq, bool to_remote,
              absl::Duration within, ClientCore::Deliver deliver_to,
              bool deliver_as_routine)
      : client(std::move(client)),
        sequence(seq),
        remote(to_remote),
        as_routine(deliver_as_routine),
        timeout(within),
        deliver(std::move(deliver_to)) {}

  std::shared_ptr<PendingCall> Self() {
    return std::static_pointer_cast<PendingCall>(shared_from_this());
  }

  // From the server of this process (its routine, or its Shutdown()).
  void Reply(ServiceOutcome outcome, const ServiceTiming& answered) override {
    std::shared_ptr<ClientCore> core = client.lock();
    if (core == nullptr) return;  // the client is gone: it cancelled us
    ClientCore::Source source = ClientCore::Source::kResponse;
    if (!outcome.ok()) {
      const absl::Status& s = outcome.status();
      source = ClientCore::SourceOf(s.code());
      // The server says what happened to it; the caller's error names the
      // caller's node too.
      outcome = absl::Status(s.code(), absl::StrCat(core->Prefix(), ": ", s.message(),
                                                    " (request ", sequence, ")"));
    }
    core->Finish(Self(), source, std::move(outcome), answered);
  }

  bool Waiting() const override { return !ended.load(std::memory_order_acquire); }

  // The tick thread, with no lock held (timer::ExpiryTarget): the timeout
  // is due. Hands the decision to the client (ClientCore::TimeoutDue).
  void OnExpired(uint32_t arm_seq) {
    {
      MutexLock lock(&mu);
      if (decided || arm_seq != armed_seq) return;  // decided meanwhile
    }
    if (std::shared_ptr<ClientCore> core = client.lock()) core->TimeoutDue(Self());
  }

  const std::weak_ptr<ClientCore> client;
  const uint64_t sequence;
  const bool remote;      // sent to another process
  const bool as_routine;  // `deliver` is user code: run as a routine
  const absl::Duration timeout;
  // When it was sent, on `started_on` (the client's latency).
  const Clock* started_on = nullptr;
  Instant started;

  // mu protects the following state.
  Mutex mu;
  bool decided ABSL_GUARDED_BY(mu) = false;
  // `decided`, readable without the lock (Waiting()).
  std::atomic<bool> ended{false};
  // Read once decided. (Default: UNKNOWN without a message, which
  // allocates nothing.)
  ServiceOutcome outcome ABSL_GUARDED_BY(mu);
  // A routine parked in Call() (woken through its PrivateWait `wait`), or
  // threads blocked there (cv).
  scheduler::CRoutine* routine ABSL_GUARDED_BY(mu) = nullptr;
  uint64_t wait ABSL_GUARDED_BY(mu) = 0;
  CondVar cv;
  // The timer system the timeout is armed on (null: not armed), held so
  // that the entry can always be cancelled, and the arming's sequence.
  std::shared_ptr<timer::TimerSystemCore> wheel ABSL_GUARDED_BY(mu);
  uint32_t armed_seq ABSL_GUARDED_BY(mu) = 0;
  ClientCore::Deliver deliver ABSL_GUARDED_BY(mu);
};

namespace {

SerialDeliveryBase::Options CallbackOptions(const NodeContext& context,
                                            const std::string& service) {
  SerialDeliveryBase::Options o;
  o.name = absl::StrCat("node \"", context.node->name, "\": service \"", service, "\"");
  o.handler = "an AsyncCall callback";
  o.routine = "AsyncCall callback";
  o.scheduler = context.scheduler.get();
  o.route = context.route;
  return o;
}

}  // namespace

ClientCore::ClientCore(const NodeContext& context, std::string service)
    : node_(context.node),
      service_(std::move(service)),
      scheduler_(context.scheduler),
      route_(context.route),
      registry_(context.registry),
      remote_(context.remote),
      id_(RandomClientId()),
      callbacks_(CallbackOptions(context, service_),
                 [](Callback& c) { c.deliver(std::move(c.outcome)); }) {}

ClientCore::~ClientCore() {
  // Shutdown() (the handle's destructor calls it) decides every call; one
  // left here still leaves the wheel before its record can be freed.
  decltype(pending_) left;
  {
    MutexLock lock(&mu_);
    left.swap(pending_);
  }
  for (const auto& entry : left) {
    std::shared_ptr<timer::TimerSystemCore> wheel;
    {
      MutexLock lock(&entry.second->mu);
      wheel = std::move(entry.second->wheel);
    }
    if (wheel != nullptr) wheel->Cancel(entry.second.get());
  }
}

std::string ClientCore::Prefix() const {
  return absl::StrCat("node \"", node_->name, "\": service \"", service_, "\"");
}

absl::StatusOr<std::unique_ptr<RemoteSubscription>> ClientCore::LinkRemote(
    const ServiceTypes& types) {
  // Weak: the transport keeps listeners until removed, and may call one
  // that is being removed.
  std::weak_ptr<ClientCore> weak = weak_from_this();
  const uint64_t listener = remote_->AddPeerLostListener(
      [weak](const RemotePeer& peer, bool crashed) {
        if (std::shared_ptr<ClientCore> core = weak.lock()) {
          core->OnPeerLost(peer, crashed);
        }
      });
  {
    MutexLock lock(&mu_);
    listener_ = listener;
    listening_ = true;
  }
  // The handler holds the core; the subscription is the handle's, destroyed
  // by its Shutdown(), which waits for a call in progress.
  std::shared_ptr<ClientCore> self = shared_from_this();
  const DecodeFn decode = types.decode_response;
  return LinkService(
      remote_.get(), ServiceSide::kClient, service_, node_->name, types, Prefix(),
      [&](std::shared_ptr<RemotePublisher> outlet) {
        outlet_ = std::move(outlet);
        encode_request_ = types.encode_request;
      },
      [self, decode](const RemoteSample& sample) {
        return self->OnRemoteResponse(sample, decode);
      });
}

// --- calls --------------------------------------------------------------------

std::shared_ptr<PendingCall> ClientCore::Start(std::shared_ptr<const void> request,
                                               absl::Duration timeout,
                                               Deliver deliver, bool as_routine,
                                               bool blocks_thread) {
  std::shared_ptr<InProcessServer> local;
  bool remote = false;
  if (request != nullptr) {
    local = registry_->Find(service_);
    remote = local == nullptr && outlet_ != nullptr && outlet_->Wanted();
  }
  auto call = std::make_shared<PendingCall>(
      weak_from_this(), next_sequence_.fetch_add(1, std::memory_order_relaxed) + 1,
      remote, timeout, std::move(deliver), as_routine);
  Source refused = Source::kFailed;
  absl::Status why;
  bool log_refusal = false;
  {
    MutexLock lock(&mu_);
    ++stats_.calls;
    if (shut_down_) {
      why = absl::FailedPreconditionError(
          absl::StrCat(Prefix(), ": the client is shut down"));
    } else if (request == nullptr) {
      why = absl::InvalidArgumentError(absl::StrCat(Prefix(), ": the request is null"));
    } else if (blocks_thread && DrivesClock(clock())) {
      // Blocked here, the thread that moves the node's clock would wait for
      // the server's routine and the timeout, which only it can run. (Not
      // shut down: the node's scheduler, which keeps the clock, is alive.)
      log_refusal = true;
      why = absl::FailedPreconditionError(absl::StrCat(
          Prefix(), ": a blocking Call() on the thread that moves the simulated clock "
                    "(a component's Init() in a simulated graph?) could never end: "
                    "neither the server nor the timeout can run while it blocks; "
                    "the request was not sent; use AsyncCall, or call from a routine "
                    "(Proc(), a timer, a reader, a task)"));
    } else if (local == nullptr && !remote) {
      refused = Source::kNoServer;
      why = absl::UnavailableError(absl::StrCat(
          Prefix(), ": no server (none in this process",
          outlet_ != nullptr ? ", none matched in another" : "", ")"));
    } else if (timeout <= absl::ZeroDuration()) {
      refused = Source::kTimeout;
      why = absl::DeadlineExceededError(
          absl::StrCat(Prefix(), ": timeout ", absl::FormatDuration(timeout),
                       " is not positive; the request was not sent"));
    } else {
      pending_.emplace(call->sequence, call);
    }
  }
  if (refused == Source::kNoServer) {
    // The usual cause is a typo in the name: say which served one it
    // looks like (not under mu_: the registry asks its servers).
    if (std::optional<std::string> near = NearestName(service_, registry_->ServedNames())) {
      why = absl::UnavailableError(
          absl::StrCat(why.message(), "; did you mean \"", *near, "\"?"));
    }
  }
  if (!why.ok()) {
    if (log_refusal) AERROR << why.message();  // a mistake in the caller's code
    Finish(call, refused, why);
    return call;
  }
  // Armed, the call was undecided then (under its lock); otherwise it is
  // looked at here.
  bool armed = false;
  if (timeout != absl::InfiniteDuration()) {
    absl::Status arming = ArmTimeout(call, timeout, &armed);
    if (!arming.ok()) {
      Finish(call, Source::kFailed,
             absl::Status(arming.code(), absl::StrCat(Prefix(), ": the timeout of request ",
                                                      call->sequence, " could not be armed: ",
                                                      arming.message())));
      return call;
    }
  }
  if (!armed) {
    // Decided meanwhile (a Shutdown() cancelled it): nothing to send.
    MutexLock lock(&call->mu);
    if (call->decided) return call;
  }
  // Before the hand-over: a response may be quick.
  requests_sent_.fetch_add(1, std::memory_order_relaxed);
  absl::Status sent;
  // Set by ArmTimeout from the instant it armed at (one clock read less).
  if (call->started_on == nullptr) {
    call->started_on = clock();
    call->started = call->started_on->Now();
  }
  if (local != nullptr) {
    ServiceTiming timing;
    timing.clock = call->started_on;
    timing.at = call->started;
    timing.budget = timeout;
    if (!local->Submit(std::move(request), call, timing)) {
      sent = absl::UnavailableError(
          absl::StrCat(Prefix(), ": the server (node \"", local->node_name(),
                       "\") is gone (shut down)"));
    }
  } else {
    std::string bytes;
    if (!encode_request_(request.get(), &bytes)) {
      sent = absl::InvalidArgumentError(absl::StrCat(
          Prefix(), ": the request does not serialize (a required field is missing?)"));
    } else {
      Correlation c;
      c.kind = Correlation::Kind::kRequest;
      c.client = id_;
      c.sequence = call->sequence;
      // The time the client still waits: a duration, since the server's
      // clock is another.
      if (timeout != absl::InfiniteDuration()) {
        c.budget_ns = std::max<int64_t>(1, absl::ToInt64Nanoseconds(timeout));
      }
      absl::Status published = outlet_->Publish(bytes, c);
      if (!published.ok()) {
        sent = absl::UnavailableError(absl::StrCat(
            Prefix(), ": request ", call->sequence, " not sent: ", published.message()));
      }
    }
  }
  if (!sent.ok()) {
    requests_sent_.fetch_sub(1, std::memory_order_relaxed);
    Finish(call,
           sent.code() == absl::StatusCode::kUnavailable && local != nullptr
               ? Source::kServerGone
               : Source::kFailed,
           sent);
  }
  return call;
}

std::shared_ptr<timer::TimerSystemCore> ClientCore::TimeoutWheel() const {
  // The wheel the node's routines sleep on (CRoutine::SleepFor): its
  // runtime's, on its clock (simulated time for a simulated graph); for a
  // scheduler without one, what a Timer started in its scope binds to (the
  // rule of cyber/common/runtime_scope.h: the process's timer system). The
  // reference holds a process runtime until the wheel itself is held.
  const RuntimeRef runtime(scheduler_->scope(), nullptr);
  timer::TimerSystemCore* const wheel = runtime.part(&RuntimeScope::timers);
  return wheel != nullptr ? wheel->shared_from_this() : nullptr;
}

absl::Status ClientCore::ArmTimeout(const std::shared_ptr<PendingCall>& call,
                                    absl::Duration timeout, bool* armed) {
  std::shared_ptr<timer::TimerSystemCore> wheel = TimeoutWheel();
  Instant now;
  if (wheel == nullptr || !wheel->TryNow(&now)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the timer system",
        wheel != nullptr ? absl::StrCat(" \"", wheel->name(), "\"") : "",
        " of scheduler \"", scheduler_->name(), "\" is shut down"));
  }
  // Beyond the wheel's range (~99 days): never, as an infinite timeout.
  if (timeout > wheel->max_delay()) return absl::OkStatus();
  MutexLock lock(&call->mu);
  if (call->decided) return absl::OkStatus();  // a Shutdown() cancelled it
  // On the tick at or after the deadline (never early), as a oneshot Timer.
  // Armed under the call's lock: OnExpired and Finish, which take it, see
  // the arming.
  absl::StatusOr<timer::TimingWheel::ArmResult> arming =
      wheel->Arm(call.get(), now + timeout);
  if (!arming.ok()) {
    // Out of the wheel's range after rounding: never, as above.
    if (arming.status().code() == absl::StatusCode::kOutOfRange) {
      return absl::OkStatus();
    }
    return arming.status();
  }
  *armed = true;
  call->armed_seq = arming->arm_seq;
  call->started_on = wheel->clock();
  call->started = now;
  call->wheel = std::move(wheel);
  return absl::OkStatus();
}

void ClientCore::TimeoutDue(const std::shared_ptr<PendingCall>& call) {
  // Decided in a routine on the node's route, as a response is: an expiry
  // handed over ahead of its instant (the early hand-over of
  // timer_system_core.h) is held by the scheduler until then, so the timeout is
  // never decided before its deadline. The task is one word (kept inline
  // by std::function); the scheduler holds the call beside it.
  PendingCall* const raw = call.get();
  const bool accepted = scheduler_->Dispatch(
      [raw] {
        if (std::shared_ptr<ClientCore> core = raw->client.lock()) {
          core->TimeOut(raw->Self());
        }
      },
      route_, call);
  if (accepted) return;
  // Refused (the scheduler is full or stopping): decided here, on the tick
  // thread. Finish runs no user code (an AsyncCall callback is dispatched).
  AERROR_EVERY(100) << Prefix() << ": scheduler \"" << scheduler_->name()
                    << "\" refused the timeout of request " << call->sequence
                    << "; deciding it on the tick thread";
  TimeOut(call);
}

void ClientCore::TimeOut(const std::shared_ptr<PendingCall>& call) {
  Finish(call, Source::kTimeout,
         absl::DeadlineExceededError(absl::StrCat(
             Prefix(), ": no response within ", absl::FormatDuration(call->timeout),
             " (request ", call->sequence, ")")));
}

void ClientCore::Finish(const std::shared_ptr<PendingCall>& call, Source source,
                        ServiceOutcome outcome, const ServiceTiming& at) {
  std::shared_ptr<timer::TimerSystemCore> wheel;
  Deliver deliver;
  {
    MutexLock lock(&call->mu);
    if (call->decided) {
      if (source == Source::kResponse) {
        MutexLock core_lock(&mu_);
        ++stats_.late_responses;
      }
      return;
    }
    call->decided = true;
    call->ended.store(true, std::memory_order_release);
    deliver = std::move(call->deliver);
    // Handed over, never shared: the outcome goes with `deliver`, or to the
    // caller waiting in Call(), which takes it from `call`. (An absl::Status
    // with a message counts its references in Debian's Abseil, which TSan
    // cannot see: a copy released on each side reads as a race.)
    if (!deliver) call->outcome = std::move(outcome);
    // The server's instant of answering, when it is on our clock.
    int64_t took_ns = 0;
    if (source == Source::kResponse && call->started_on != nullptr) {
      const Instant now =
          at.clock == call->started_on ? at.at : call->started_on->Now();
      took_ns = NanosecondsBetween(call->started, now);
    }
    {
      // Counted before anyone is woken: a caller reads consistent stats.
      MutexLock core_lock(&mu_);
      pending_.erase(call->sequence);
      switch (source) {
        case Source::kResponse:
          ++stats_.responses;
          latency_.RecordNanoseconds(took_ns);
          break;
        case Source::kRefused: ++stats_.refused; break;
        case Source::kTimeout: ++stats_.timeouts; break;
        case Source::kServerGone: ++stats_.server_gone; break;
        case Source::kNoServer: ++stats_.no_server; break;
        case Source::kCancelled: ++stats_.cancelled; break;
        case Source::kFailed: ++stats_.failed; break;
      }
    }
    wheel = std::move(call->wheel);
    if (call->routine != nullptr) call->routine->WakeWait(call->wait);
    call->cv.SignalAll();
  }
  // Out of the wheel before anything else: `call` (held by the caller)
  // outlives the cancel, and an expiry already on its way finds it decided.
  if (wheel != nullptr) wheel->Cancel(call.get());
  if (!deliver) return;
  if (!call->as_routine) {
    deliver(std::move(outcome));  // a promise: hands over, runs nothing
    return;
  }
  // User code: queued for the callbacks' routine (dropped and counted once
  // the client is shut down: nothing of it runs any more).
  callbacks_.Add(Callback{std::move(deliver), std::move(outcome)}, shared_from_this());
}

bool ClientCore::ParkUntilDecided(PendingCall* call) {
  // A wake-up of the call's own: the routine's notifications (a CreateTask
  // loop's WaitForData) neither end this wait nor are consumed by it, and
  // Finish's wake-up, if it comes after the routine saw the call decided,
  // is ignored. Ended after the lock below is released (destroyed last).
  scheduler::CRoutine::PrivateWait wait;
  MutexLock lock(&call->mu);
  call->routine = wait.routine();
  call->wait = wait.ticket();
  bool cancelled = false;
  while (!call->decided && !cancelled) {
    call->mu.Unlock();
    try {
      // A cancellation point, unlike WaitList's Park(): a stopping scheduler
      // unwinds a routine waiting here.
      wait.Park();
    } catch (const scheduler::RoutineCancelled&) {
      cancelled = true;
    } catch (...) {
      call->mu.Lock();
      call->routine = nullptr;
      throw;
    }
    call->mu.Lock();
  }
  call->routine = nullptr;
  return !cancelled;
}

bool ClientCore::BlockUntilDecided(PendingCall* call) {
  MutexLock lock(&call->mu);
  while (!call->decided) {
    call->cv.WaitUntil(&call->mu, std::chrono::steady_clock::now() + kStoppingPoll);
    if (!call->decided && scheduler_->stopping()) return false;
  }
  return true;
}

ServiceOutcome ClientCore::Call(std::shared_ptr<const void> request,
                                absl::Duration timeout) {
  const bool in_routine = scheduler::CRoutine::Current() != nullptr;
  std::shared_ptr<PendingCall> call = Start(std::move(request), timeout, nullptr,
                                            /*as_routine=*/false,
                                            /*blocks_thread=*/!in_routine);
  if (in_routine) {
    if (!ParkUntilDecided(call.get())) {
      Finish(call, Source::kCancelled,
             absl::CancelledError(absl::StrCat(
                 Prefix(), ": the calling routine was cancelled (its scheduler "
                           "is stopping) while request ",
                 call->sequence, " was pending")));
      throw scheduler::RoutineCancelled();
    }
  } else if (!BlockUntilDecided(call.get())) {
    Finish(call, Source::kCancelled,
           absl::CancelledError(absl::StrCat(
               Prefix(), ": the node's scheduler \"", scheduler_->name(),
               "\" is shutting down with request ", call->sequence, " pending")));
  }
  // Decided: nobody else reads the outcome now.
  MutexLock lock(&call->mu);
  return std::move(call->outcome);
}

void ClientCore::CallAsync(std::shared_ptr<const void> request,
                           absl::Duration timeout, Deliver deliver,
                           bool as_routine) {
  Start(std::move(request), timeout, std::move(deliver), as_routine);
}

// --- other processes -------------------------------------------------------

ClientCore::Source ClientCore::SourceOf(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kUnavailable: return Source::kServerGone;
    case absl::StatusCode::kDeadlineExceeded: return Source::kTimeout;
    case absl::StatusCode::kResourceExhausted: return Source::kRefused;
    default: return Source::kFailed;
  }
}

bool ClientCore::OnRemoteResponse(const RemoteSample& sample, DecodeFn decode) {
  const bool failure = sample.correlation.kind == Correlation::Kind::kFailure;
  if ((sample.correlation.kind != Correlation::Kind::kResponse && !failure) ||
      sample.correlation.client != id_) {
    return true;  // another client's: not ours to parse
  }
  std::shared_ptr<PendingCall> call;
  {
    MutexLock lock(&mu_);
    auto it = pending_.find(sample.correlation.sequence);
    if (it == pending_.end()) {
      ++stats_.late_responses;  // its call ended: dropped
      return true;
    }
    call = it->second;
  }
  if (failure) {
    // The server's own error: its code, its words, and who we are.
    const auto code = static_cast<absl::StatusCode>(sample.correlation.status);
    Finish(call, SourceOf(code),
           absl::Status(code, absl::StrCat(Prefix(), ": ", sample.payload, " (request ",
                                           call->sequence, ")")));
    return true;
  }
  std::shared_ptr<const void> response =
      decode(sample.payload.data(), sample.payload.size());
  if (response == nullptr) {
    Finish(call, Source::kFailed,
           absl::DataLossError(absl::StrCat(
               Prefix(), ": the response to request ", call->sequence, " (",
               sample.payload.size(), " bytes) does not parse")));
    return false;  // the transport counts it and names the sender
  }
  Finish(call, Source::kResponse, std::move(response));
  return true;
}

void ClientCore::OnPeerLost(const RemotePeer& peer, bool crashed) {
  std::vector<std::shared_ptr<PendingCall>> remote_calls;
  {
    MutexLock lock(&mu_);
    for (const auto& entry : pending_) {
      if (entry.second->remote) remote_calls.push_back(entry.second);
    }
  }
  if (remote_calls.empty()) return;
  // The transport forgets a lost peer's endpoints before telling us.
  if (!remote_->RemoteWriters(ResponseChannel(service_)).empty()) return;
  const absl::Status gone = absl::UnavailableError(absl::StrCat(
      Prefix(), ": the server is gone: no process serves it any more (",
      peer.ToString(),
      crashed ? " stopped answering and was declared dead" : " left", ")"));
  for (const auto& call : remote_calls) Finish(call, Source::kServerGone, gone);
}

bool ClientCore::ServiceIsReady() const {
  if (registry_->Find(service_) != nullptr) return true;
  return outlet_ != nullptr && outlet_->Wanted() &&
         !remote_->RemoteWriters(ResponseChannel(service_)).empty();
}

Clock* ClientCore::clock() const {
  Clock* const c = scheduler_->scope()->clock.load(std::memory_order_acquire);
  return c != nullptr ? c : SteadyClock::Get();
}

bool ClientCore::WaitForService(absl::Duration timeout) {
  // Shut down first: the node's scheduler (and its clock) may be gone.
  if (is_shut_down()) return false;
  Clock* const c = clock();
  const Instant deadline = timeout == absl::InfiniteDuration()
                               ? Instant::InfiniteFuture()
                               : c->Now() + timeout;
  for (;;) {
    if (is_shut_down()) return false;
    if (ServiceIsReady()) return true;
    const Instant now = c->Now();
    // The thread that moves a simulated clock cannot wait on it.
    if (now >= deadline || DrivesClock(c)) return false;
    SleepOnClock(c, std::min(now + kServicePoll, deadline));
  }
}

// --- shutdown and queries ----------------------------------------------------

void ClientCore::Shutdown(const NodeEndpoint::ShutdownPeers* peers) {
  std::vector<std::shared_ptr<PendingCall>> pending;
  uint64_t listener = 0;
  bool remove_listener = false;
  {
    MutexLock lock(&mu_);
    shut_down_ = true;
    for (const auto& entry : pending_) pending.push_back(entry.second);
    remove_listener = std::exchange(listening_, false);
    listener = listener_;
  }
  // Callbacks not yet started are dropped, and so are those of the calls
  // cancelled below (both counted).
  callbacks_.Close();
  if (remove_listener) remote_->RemovePeerLostListener(listener);
  for (const auto& call : pending) {
    Finish(call, Source::kCancelled,
           absl::CancelledError(absl::StrCat(Prefix(),
                                             ": the client was shut down with request ",
                                             call->sequence, " pending")));
  }
  // Wait out a running callback, unless it is the caller (or among
  // `peers`).
  if (peers == nullptr) {
    callbacks_.AwaitIdle();
  } else {
    callbacks_.AwaitIdleExcept(
        [peers](const scheduler::CRoutine* r) { return peers->Contains(r); });
  }
}

bool ClientCore::is_shut_down() const {
  MutexLock lock(&mu_);
  return shut_down_;
}

ClientStats ClientCore::stats() const {
  const SerialDeliveryStats callbacks = callbacks_.stats();
  MutexLock lock(&mu_);
  ClientStats s = stats_;
  s.requests_sent = requests_sent_.load(std::memory_order_relaxed);
  s.pending = pending_.size();
  s.callbacks_dropped = callbacks.dropped_stopped;
  s.callback_exceptions = callbacks.handler_exceptions;
  s.latency_p50 = latency_.Percentile(0.5);
  s.latency_p99 = latency_.Percentile(0.99);
  return s;
}

}  // namespace transport_internal
}  // namespace cyber
