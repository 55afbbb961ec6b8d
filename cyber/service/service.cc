#include "cyber/service/service.h"

#include <exception>
#include <utility>
#include <vector>

#include "boost/context/fiber.hpp"  // forced_unwind, which must pass through
#include "cyber/common/log.h"

namespace cyber {
namespace transport_internal {

namespace {

SerialDeliveryBase::Options RequestsOptions(const NodeContext& context,
                                            const std::string& service) {
  SerialDeliveryBase::Options o;
  o.name = absl::StrCat("node \"", context.node->name, "\": service \"", service, "\"");
  o.handler = "the serving routine";  // (Invoke catches the callback's throws)
  o.routine = "serving";
  o.scheduler = context.scheduler.get();
  o.route = context.route;
  o.items_per_slice = ServiceCore::kRequestsPerSlice;
  return o;
}

}  // namespace

ServiceCore::ServiceCore(const NodeContext& context, std::string service,
                         Handler handler)
    : node_(context.node),
      service_(std::move(service)),
      scheduler_(context.scheduler),
      registry_(context.registry),
      remote_(context.remote),
      handler_(std::move(handler)),
      requests_(RequestsOptions(context, service_),
                [this](Job& job) { Serve(&job); }) {}

ServiceCore::~ServiceCore() {
  // Only reached without Shutdown() when creation failed half-way; a queued
  // request of a client of this process still gets its answer.
  std::vector<Job> left;
  requests_.Close(&left);
  for (Job& job : left) {
    Answer(&job, absl::UnavailableError(absl::StrCat(Server(), " is gone: destroyed")));
  }
}

std::string ServiceCore::Prefix() const {
  return absl::StrCat("node \"", node_->name, "\": service \"", service_, "\"");
}

std::string ServiceCore::Server() const {
  return absl::StrCat("the server (node \"", node_->name, "\")");
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
  job.from = sample.correlation;
  Enqueue(std::move(job));
  return true;
}

bool ServiceCore::is_shut_down() const { return requests_.stopped(); }

bool ServiceCore::Submit(std::shared_ptr<const void> request,
                         std::shared_ptr<ReplyTo> reply) {
  Job job;
  job.request = std::move(request);
  job.reply = std::move(reply);
  return Enqueue(std::move(job));
}

bool ServiceCore::Enqueue(Job job) {
  if (job.reply == nullptr) {
    MutexLock lock(&mu_);
    ++stats_.remote_requests;
  }
  return requests_.Add(std::move(job), shared_from_this());
}

void ServiceCore::Serve(Job* job) {
  // If the routine unwinds (cancelled at a suspension point inside the
  // callback: the scheduler is stopping), the request in hand is answered
  // and counted; requests_ is left able to serve again.
  struct Unwind {
    ServiceCore* core;
    Job* job;
    bool answered = false;
    ~Unwind() {
      if (answered) return;
      {
        MutexLock lock(&core->mu_);
        ++core->stats_.dropped_shutdown;
      }
      core->Answer(job, absl::UnavailableError(absl::StrCat(
                            core->Server(),
                            " is gone: its scheduler is shutting down "
                            "while the request was being served")));
    }
  } unwind{this, job};
  ServiceOutcome outcome = Invoke(*job);
  unwind.answered = true;
  // Answered while still the running handler: a Shutdown() waiting for
  // this request returns after its response is out.
  Answer(job, std::move(outcome));
}

ServiceOutcome ServiceCore::Invoke(const Job& job) {
  std::string what;
  try {
    ServiceOutcome outcome = handler_(job.request);
    if (outcome.ok()) return outcome;
    what = std::string(outcome.status().message());
  } catch (const scheduler::RoutineCancelled&) {
    throw;  // the scheduler is stopping: Serve answers as it unwinds
  } catch (const boost::context::detail::forced_unwind&) {
    throw;  // Boost's own unwinding must pass through
  } catch (const std::exception& e) {
    what = absl::StrCat("the service callback threw: ", e.what());
  } catch (...) {
    what = "the service callback threw a non-std::exception";
  }
  {
    MutexLock lock(&mu_);
    ++stats_.callback_errors;
  }
  AERROR_EVERY(100) << Prefix() << ": " << what
                    << (job.reply == nullptr
                            ? " (the client in another process is not told: "
                              "it times out)"
                            : "");
  return absl::InternalError(absl::StrCat(Server(), " failed: ", what));
}

void ServiceCore::Answer(Job* job, ServiceOutcome outcome) {
  if (job->reply != nullptr) {
    if (outcome.ok()) {
      MutexLock lock(&mu_);
      ++stats_.responses;
    }
    std::exchange(job->reply, nullptr)->Reply(std::move(outcome));
    return;
  }
  if (!outcome.ok()) return;  // logged and counted by Invoke
  std::shared_ptr<RemotePublisher> outlet;
  EncodeFn encode = nullptr;
  {
    MutexLock lock(&mu_);
    outlet = outlet_;
    encode = encode_response_;
  }
  std::string bytes;
  absl::Status sent;
  if (outlet == nullptr || encode == nullptr) {
    sent = absl::FailedPreconditionError("no link to other processes");
  } else if (!encode(outcome->get(), &bytes)) {
    sent = absl::InvalidArgumentError(
        "the response does not serialize (a required field is missing?)");
  } else {
    Correlation to = job->from;
    to.kind = Correlation::Kind::kResponse;
    sent = outlet->Publish(bytes, to);
  }
  uint64_t failures = 0;
  {
    MutexLock lock(&mu_);
    if (sent.ok()) {
      ++stats_.responses;
      return;
    }
    failures = ++stats_.send_failures;
  }
  AERROR_EVERY(100) << Prefix() << ": response to client " << job->from.client
                    << " (request " << job->from.sequence
                    << ") not sent: " << sent.message() << " (" << failures
                    << " so far)";
}

ServiceStats ServiceCore::stats() const {
  const SerialDeliveryStats queue = requests_.stats();
  MutexLock lock(&mu_);
  ServiceStats s = stats_;
  s.requests = queue.added;
  s.dropped_shutdown += queue.dropped_stopped;
  s.dispatch_refusals = queue.dispatch_refusals;
  s.pending = queue.pending;
  return s;
}

void ServiceCore::Shutdown(const NodeEndpoint::ShutdownPeers* peers) {
  // Refuses requests from now on; the queued ones are answered outside any
  // lock, before the wait.
  std::vector<Job> dropped;
  requests_.Close(&dropped);
  registry_->Unregister(service_, this);
  for (Job& job : dropped) {
    Answer(&job, absl::UnavailableError(absl::StrCat(
                     Server(), " is gone: shut down with the request pending")));
  }
  // Wait out a running callback, unless we are that callback (or it is
  // among `peers`).
  if (peers == nullptr) {
    requests_.AwaitIdle();
  } else {
    requests_.AwaitIdleExcept(
        [peers](const scheduler::CRoutine* r) { return peers->Contains(r); });
  }
}

}  // namespace transport_internal
}  // namespace cyber
