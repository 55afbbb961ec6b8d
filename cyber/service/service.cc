#include "cyber/service/service.h"

#include <algorithm>
#include <exception>
#include <optional>
#include <utility>
#include <vector>

#include "boost/context/fiber.hpp"  // forced_unwind, which must pass through
#include "cyber/common/log.h"
#include "cyber/time/steady_clock.h"

namespace cyber {
namespace transport_internal {

namespace {

SerialDeliveryBase::Options RequestsOptions(const NodeContext& context,
                                            const std::string& service,
                                            const ServiceOptions& options) {
  SerialDeliveryBase::Options o;
  o.name = absl::StrCat("node \"", context.node->name, "\": service \"", service, "\"");
  o.handler = "the serving routine";  // (Invoke catches the callback's throws)
  o.routine = "serving";
  o.scheduler = context.scheduler.get();
  o.route = context.route;
  o.items_per_slice = ServiceCore::kRequestsPerSlice;
  o.lanes = options.concurrency;
  o.capacity = options.queue_depth;
  o.overflow = options.when_full == ServiceOptions::WhenFull::kDropOldest
                   ? SerialDeliveryBase::Options::Overflow::kDropOldest
                   : SerialDeliveryBase::Options::Overflow::kRefuseNewest;
  return o;
}

// The answer's correlation: `kind` to the job's client and request.
Correlation AnswerTo(const PendingRequest::Job& job, Correlation::Kind kind) {
  Correlation to;
  to.kind = kind;
  to.client = job.client;
  to.sequence = job.sequence;
  return to;
}

// What a failure frame carries (the client makes its status of it).
Correlation FailureTo(const PendingRequest::Job& job, const absl::Status& status) {
  Correlation to = AnswerTo(job, Correlation::Kind::kFailure);
  to.status = static_cast<uint32_t>(status.code());
  return to;
}

}  // namespace

// --- PendingRequest -----------------------------------------------------------

PendingRequest::PendingRequest(std::shared_ptr<ServiceCore> core, Job job)
    : core_(std::move(core)), deadline_(job.deadline()), job_(std::move(job)) {}

PendingRequest::~PendingRequest() {
  if (Claim()) {
    core_->Answer(&job_,
                  absl::InternalError(absl::StrCat(
                      core_->Server(),
                      " dropped the request without an answer (its responder was "
                      "destroyed unanswered)")),
                  ServiceCore::Ending::kAbandoned);
  }
  core_->Forget(this);
}

absl::Status PendingRequest::ServerError(absl::string_view what) const {
  return absl::InternalError(absl::StrCat(core_->Server(), " ", what));
}

absl::Status PendingRequest::Answer(ServiceOutcome outcome) {
  if (!Claim()) {
    uint64_t n = 0;
    {
      MutexLock lock(&core_->mu_);
      n = ++core_->stats_.double_answers;
    }
    absl::Status refused = absl::FailedPreconditionError(absl::StrCat(
        core_->Prefix(), ": the request was answered already (or the service shut "
                         "down and told its client); this answer is not sent"));
    AWARN_EVERY(100) << refused.message() << " (" << n << " so far)";
    return refused;
  }
  const ServiceCore::Ending ending =
      outcome.ok() ? ServiceCore::Ending::kResponse : ServiceCore::Ending::kError;
  core_->Answer(&job_, std::move(outcome), ending);
  return absl::OkStatus();
}

// --- ServiceCore ----------------------------------------------------------------

ServiceCore::ServiceCore(const NodeContext& context, std::string service,
                         Handler handler, DeferredHandler deferred,
                         const ServiceOptions& options)
    : node_(context.node),
      service_(std::move(service)),
      scheduler_(context.scheduler),
      registry_(context.registry),
      remote_(context.remote),
      handler_(std::move(handler)),
      deferred_(std::move(deferred)),
      options_(options),
      requests_(RequestsOptions(context, service_, options_), [this](Job& job) {
        if (deferred_) {
          ServeDeferred(&job);
        } else {
          Serve(&job);
        }
      }) {}

ServiceCore::~ServiceCore() {
  // Only reached without Shutdown() when creation failed half-way; a queued
  // request of a client of this process still gets its answer.
  std::vector<Job> left;
  requests_.Close(&left);
  for (Job& job : left) {
    Answer(&job, absl::UnavailableError(absl::StrCat(Server(), " is gone: destroyed")),
           Ending::kClosed);
  }
}

absl::Status ServiceCore::CheckOptions(const std::string& node, const std::string& service,
                                       const ServiceOptions& options) {
  auto bad = [&](absl::string_view field, const auto& value, absl::string_view range) {
    return absl::InvalidArgumentError(
        absl::StrCat("node \"", node, "\": CreateService \"", service, "\": ServiceOptions::",
                     field, " is ", value, "; it must be in ", range));
  };
  if (options.concurrency < 1 || options.concurrency > ServiceOptions::kMaxConcurrency) {
    return bad("concurrency", options.concurrency,
               absl::StrCat("[1, ", ServiceOptions::kMaxConcurrency, "]"));
  }
  if (options.queue_depth < 1 || options.queue_depth > ServiceOptions::kMaxQueueDepth) {
    return bad("queue_depth", options.queue_depth,
               absl::StrCat("[1, ", ServiceOptions::kMaxQueueDepth, "]"));
  }
  if (options.when_full != ServiceOptions::WhenFull::kRefuseNewest &&
      options.when_full != ServiceOptions::WhenFull::kDropOldest) {
    return bad("when_full", static_cast<int>(options.when_full),
               "{kRefuseNewest, kDropOldest}");
  }
  return absl::OkStatus();
}

std::string ServiceCore::Prefix() const {
  return absl::StrCat("node \"", node_->name, "\": service \"", service_, "\"");
}

std::string ServiceCore::Server() const {
  return absl::StrCat("the server (node \"", node_->name, "\")");
}

Clock* ServiceCore::clock() const {
  Clock* const c = scheduler_->scope()->clock.load(std::memory_order_acquire);
  return c != nullptr ? c : SteadyClock::Get();
}

absl::StatusOr<std::unique_ptr<RemoteSubscription>> ServiceCore::LinkRemote(
    const ServiceTypes& types) {
  // The handler holds the core: the subscription (kept by the handle) is
  // destroyed by Shutdown() or the handle, and waits for a call in progress.
  std::shared_ptr<ServiceCore> self = shared_from_this();
  const DecodeFn decode = types.decode_request;
  return LinkService(
      remote_.get(), ServiceSide::kServer, service_, node_->name, types, Prefix(),
      [&](std::shared_ptr<RemotePublisher> outlet) {
        MutexLock lock(&mu_);
        outlet_ = std::move(outlet);
        encode_response_ = types.encode_response;
      },
      [self, decode](const RemoteSample& sample) {
        return self->OnRemoteSample(sample, decode);
      });
}

bool ServiceCore::OnRemoteSample(const RemoteSample& sample, DecodeFn decode) {
  if (sample.correlation.kind != Correlation::Kind::kRequest) {
    MutexLock lock(&mu_);
    ++stats_.ignored;
    return true;  // not a request: nothing to parse, nobody to answer
  }
  std::shared_ptr<const void> request =
      decode(sample.payload.data(), sample.payload.size());
  if (request == nullptr) return false;  // the transport counts and names it
  Job job;
  job.request = std::move(request);
  job.client = sample.correlation.client;
  job.sequence = sample.correlation.sequence;
  job.arrived = clock()->Now();
  job.budget_ns = sample.correlation.budget_ns;
  {
    MutexLock lock(&mu_);
    ++stats_.remote_requests;
  }
  Enqueue(std::move(job));
  return true;
}

bool ServiceCore::is_shut_down() const { return requests_.stopped(); }

bool ServiceCore::Submit(std::shared_ptr<const void> request,
                         std::shared_ptr<ReplyTo> reply, const ServiceTiming& sent) {
  Job job;
  job.request = std::move(request);
  job.reply = std::move(reply);
  // Sent on our clock (the usual case in one process): it arrived then.
  job.arrived = sent.clock == clock() ? sent.at : clock()->Now();
  if (sent.budget != absl::InfiniteDuration()) {
    job.budget_ns = std::max<int64_t>(1, ToInt64NanosecondsInline(sent.budget));
  }
  return Enqueue(std::move(job));
}

bool ServiceCore::Enqueue(Job job) {
  std::optional<Job> displaced;
  const SerialDeliveryBase::Admission admission =
      requests_.Offer(job, shared_from_this(), &displaced);
  auto full = [&](const char* which) {
    return absl::ResourceExhaustedError(absl::StrCat(
        Server(), " refused the request: its queue is full (", options_.queue_depth,
        " waiting, ServiceOptions::queue_depth); ", which));
  };
  if (displaced.has_value()) {
    Answer(&*displaced, full("the oldest waiting request is dropped for a newer one"),
           Ending::kDroppedOldest);
  }
  switch (admission) {
    case SerialDeliveryBase::Admission::kQueued:
      return true;
    case SerialDeliveryBase::Admission::kRefusedFull:
      Answer(&job, full("the new request is refused"), Ending::kRefusedFull);
      return true;  // answered
    case SerialDeliveryBase::Admission::kStopped:
      break;
  }
  // Shut down (counted by requests_): a client of this process is told by
  // Submit's caller.
  return false;
}

bool ServiceCore::PastDeadline(const Job& job) const {
  // A client of this process says itself whether it still waits (its
  // timeout fired on the tick at or after the deadline): no clock read.
  if (job.reply != nullptr) return !job.reply->Waiting();
  return job.budget_ns > 0 && clock()->Now() >= job.deadline();
}

bool ServiceCore::SkippedPastDeadline(Job* job) {
  if (!PastDeadline(*job)) return false;
  Answer(job,
         absl::DeadlineExceededError(absl::StrCat(
             Server(), " did not serve the request: its deadline passed while it "
                       "waited in the queue")),
         Ending::kSkipped);
  return true;
}

void ServiceCore::Serve(Job* job) {
  if (SkippedPastDeadline(job)) return;
  // If the routine unwinds (cancelled at a suspension point inside the
  // callback: the scheduler is stopping), the request in hand is answered
  // and counted; requests_ is left able to serve again.
  struct Unwind {
    ServiceCore* core;
    Job* job;
    bool answered = false;
    ~Unwind() {
      if (answered) return;
      core->Answer(job,
                   core->GoneWhileServing(),
                   Ending::kDroppedShutdown);
    }
  } unwind{this, job};
  ServiceOutcome outcome = Invoke(*job);
  unwind.answered = true;
  const Ending ending = outcome.ok() ? Ending::kResponse : Ending::kCallbackError;
  // Answered while still the running handler: a Shutdown() waiting for
  // this request returns after its response is out.
  Answer(job, std::move(outcome), ending);
}

void ServiceCore::ServeDeferred(Job* job) {
  if (SkippedPastDeadline(job)) return;
  std::shared_ptr<const void> request = job->request;
  auto pending = std::make_shared<PendingRequest>(shared_from_this(), std::move(*job));
  bool closed = false;
  {
    MutexLock lock(&mu_);
    closed = closed_;
    outstanding_.insert(pending.get());
  }
  if (closed && pending->Claim()) {
    // Shut down meanwhile (a callback Shutdown() did not wait for).
    Answer(&pending->job_,
           absl::UnavailableError(absl::StrCat(Server(), " is gone: shut down")),
           Ending::kDroppedShutdown);
  }
  // If the routine unwinds inside the callback (the scheduler is
  // stopping), an unanswered request is answered so, not as abandoned.
  struct Unwind {
    ServiceCore* core;
    PendingRequest* pending;
    bool done = false;
    ~Unwind() {
      if (done || !pending->Claim()) return;
      core->Answer(&pending->job_,
                   core->GoneWhileServing(),
                   Ending::kDroppedShutdown);
    }
  } unwind{this, pending.get()};
  const std::optional<std::string> threw =
      RunCallback([&] { deferred_(request, pending); });
  unwind.done = true;
  if (threw.has_value() && pending->Claim()) {
    Answer(&pending->job_, absl::InternalError(absl::StrCat(Server(), " failed: ", *threw)),
           Ending::kCallbackError);
  }
}

std::optional<std::string> ServiceCore::RunCallback(absl::FunctionRef<void()> callback) {
  std::string what;
  try {
    callback();
    return std::nullopt;
  } catch (const scheduler::RoutineCancelled&) {
    throw;  // the scheduler is stopping: the caller's unwinding answers
  } catch (const boost::context::detail::forced_unwind&) {
    throw;  // Boost's own unwinding must pass through
  } catch (const std::exception& e) {
    what = absl::StrCat("the service callback threw: ", e.what());
  } catch (...) {
    what = "the service callback threw a non-std::exception";
  }
  AERROR_EVERY(100) << Prefix() << ": " << what;
  return what;
}

ServiceOutcome ServiceCore::Invoke(const Job& job) {
  ServiceOutcome outcome;
  std::optional<std::string> failed = RunCallback([&] { outcome = handler_(job.request); });
  if (!failed.has_value()) {
    if (outcome.ok()) return outcome;
    failed = std::string(outcome.status().message());
    AERROR_EVERY(100) << Prefix() << ": " << *failed;
  }
  return absl::InternalError(absl::StrCat(Server(), " failed: ", *failed));
}

absl::Status ServiceCore::GoneWhileServing() const {
  return absl::UnavailableError(absl::StrCat(
      Server(), " is gone: its scheduler is shutting down while the request was being served"));
}

void ServiceCore::Answer(Job* job, ServiceOutcome outcome, Ending ending) {
  ServiceTiming answered;
  int64_t took_ns = 0;
  if (ending == Ending::kResponse) {
    answered.clock = clock();
    answered.at = answered.clock->Now();
    took_ns = NanosecondsBetween(job->arrived, answered.at);
  }
  {
    MutexLock lock(&mu_);
    switch (ending) {
      case Ending::kResponse:
        ++stats_.responses;
        latency_.RecordNanoseconds(took_ns);
        break;
      case Ending::kCallbackError: ++stats_.callback_errors; break;
      case Ending::kError: ++stats_.errors; break;
      case Ending::kAbandoned: ++stats_.abandoned; break;
      case Ending::kSkipped: ++stats_.skipped_past_deadline; break;
      case Ending::kRefusedFull: break;    // requests_ counts it
      case Ending::kDroppedOldest: break;  // requests_ counts it
      case Ending::kDroppedShutdown: ++stats_.dropped_shutdown; break;
      case Ending::kClosed: break;  // requests_ counts it
    }
  }
  if (job->reply != nullptr) {
    std::exchange(job->reply, nullptr)->Reply(std::move(outcome), answered);
    return;
  }
  // Its client stopped waiting: nothing to send.
  if (ending == Ending::kSkipped) return;
  std::shared_ptr<RemotePublisher> outlet;
  EncodeFn encode = nullptr;
  {
    MutexLock lock(&mu_);
    outlet = outlet_;
    encode = encode_response_;
  }
  absl::Status sent;
  if (outlet == nullptr || encode == nullptr) {
    sent = absl::FailedPreconditionError("no link to other processes");
  } else if (!outcome.ok()) {
    sent = outlet->Publish(outcome.status().message(),
                           FailureTo(*job, outcome.status()));
  } else {
    std::string bytes;
    if (!encode(outcome->get(), &bytes)) {
      // The client is told why instead of waiting for its timeout.
      const absl::Status bad = absl::InternalError(absl::StrCat(
          Server(), ": the response does not serialize (a required field is missing?)"));
      const absl::Status told = outlet->Publish(bad.message(), FailureTo(*job, bad));
      sent = absl::InvalidArgumentError(absl::StrCat(
          "the response does not serialize (a required field is missing?); the client ",
          told.ok() ? "was told" : "could not be told either"));
    } else {
      sent = outlet->Publish(bytes, AnswerTo(*job, Correlation::Kind::kResponse));
    }
  }
  if (sent.ok()) return;
  uint64_t failures = 0;
  {
    MutexLock lock(&mu_);
    failures = ++stats_.send_failures;
  }
  AERROR_EVERY(100) << Prefix() << ": answer to client " << job->client
                    << " (request " << job->sequence
                    << ") not sent: " << sent.message() << " (" << failures
                    << " so far)";
}

void ServiceCore::Forget(PendingRequest* pending) {
  MutexLock lock(&mu_);
  outstanding_.erase(pending);
}

ServiceStats ServiceCore::stats() const {
  const SerialDeliveryStats queue = requests_.stats();
  const int running = requests_.running();
  MutexLock lock(&mu_);
  ServiceStats s = stats_;
  s.requests = queue.added;
  s.dropped_shutdown = stats_.dropped_shutdown + queue.dropped_stopped;
  s.refused_full = queue.refused_full;
  s.dropped_oldest = queue.dropped_overflow;
  s.dispatch_refusals = queue.dispatch_refusals;
  s.pending = queue.pending;
  // Deferred requests handed over and unanswered, or a callback running.
  size_t unanswered = 0;
  for (const PendingRequest* p : outstanding_) {
    if (!p->answered()) ++unanswered;
  }
  s.in_progress = deferred_ ? unanswered : static_cast<size_t>(running);
  s.latency_p50 = latency_.Percentile(0.5);
  s.latency_p99 = latency_.Percentile(0.99);
  return s;
}

void ServiceCore::Shutdown(const NodeEndpoint::ShutdownPeers* peers) {
  // Refuses requests from now on; the queued ones are answered outside any
  // lock, before the wait.
  std::vector<Job> dropped;
  requests_.Close(&dropped);
  registry_->Unregister(service_, this);
  for (Job& job : dropped) {
    Answer(&job,
           absl::UnavailableError(
               absl::StrCat(Server(), " is gone: shut down with the request pending")),
           Ending::kClosed);
  }
  // Wait out running callbacks, unless we are one of them (or it is among
  // `peers`).
  if (peers == nullptr) {
    requests_.AwaitIdle();
  } else {
    requests_.AwaitIdleExcept(
        [peers](const scheduler::CRoutine* r) { return peers->Contains(r); });
  }
  // The deferred requests nobody answered: their clients are told now.
  std::vector<Job> unanswered;
  {
    MutexLock lock(&mu_);
    closed_ = true;
    for (PendingRequest* p : outstanding_) {
      if (p->Claim()) unanswered.push_back(std::move(p->job_));
    }
  }
  for (Job& job : unanswered) {
    Answer(&job,
           absl::UnavailableError(absl::StrCat(
               Server(), " is gone: shut down before it answered the request")),
           Ending::kDroppedShutdown);
  }
}

}  // namespace transport_internal
}  // namespace cyber
