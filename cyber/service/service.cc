#include "cyber/service/service.h"

#include <exception>
#include <utility>

#include "boost/context/fiber.hpp"  // forced_unwind, which must pass through
#include "cyber/common/log.h"

namespace cyber {
namespace transport_internal {

ServiceCore::ServiceCore(const NodeContext& context, std::string service,
                         Handler handler)
    : node_(context.node),
      service_(std::move(service)),
      scheduler_(context.scheduler),
      route_(context.route),
      registry_(context.registry),
      remote_(context.remote),
      handler_(std::move(handler)) {}

ServiceCore::~ServiceCore() {
  // Only reached without Shutdown() when creation failed half-way; a queued
  // request of a client of this process still gets its answer.
  std::deque<Job> left;
  {
    MutexLock lock(&mu_);
    left.swap(queue_);
  }
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
    const std::string& request_type, const std::string& response_type,
    DecodeFn decode_request, EncodeFn encode_response) {
  RemoteEndpoint out;
  out.channel = ResponseChannel(service_);
  out.type_name = response_type;
  out.qos = ResponseQos();
  out.node = node_->name;
  absl::StatusOr<std::shared_ptr<RemotePublisher>> outlet = remote_->Publisher(out);
  if (!outlet.ok()) {
    return absl::Status(outlet.status().code(),
                        absl::StrCat(Prefix(), ": ", outlet.status().message()));
  }
  {
    MutexLock lock(&mu_);
    outlet_ = *std::move(outlet);
    encode_response_ = encode_response;
  }
  RemoteEndpoint in;
  in.channel = RequestChannel(service_);
  in.type_name = request_type;
  in.qos = RequestQos();
  in.node = node_->name;
  // The handler holds the core: the subscription (kept by the handle) is
  // destroyed by Shutdown() or the handle, and waits for a call in progress.
  std::shared_ptr<ServiceCore> self = shared_from_this();
  absl::StatusOr<std::unique_ptr<RemoteSubscription>> inlet = remote_->Subscribe(
      in, [self, decode_request](const RemoteSample& sample) {
        return self->OnRemoteSample(sample, decode_request);
      });
  if (!inlet.ok()) {
    return absl::Status(inlet.status().code(),
                        absl::StrCat(Prefix(), ": ", inlet.status().message()));
  }
  return inlet;
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

bool ServiceCore::is_shut_down() const {
  MutexLock lock(&mu_);
  return shut_down_;
}

bool ServiceCore::Submit(std::shared_ptr<const void> request,
                         std::shared_ptr<ReplyTo> reply) {
  Job job;
  job.request = std::move(request);
  job.reply = std::move(reply);
  return Enqueue(std::move(job));
}

bool ServiceCore::Enqueue(Job job) {
  uint64_t generation = 0;
  {
    MutexLock lock(&mu_);
    ++stats_.requests;
    if (job.reply == nullptr) ++stats_.remote_requests;
    if (shut_down_) {
      ++stats_.dropped_shutdown;
      return false;
    }
    queue_.push_back(std::move(job));
    if (drain_in_flight_) return true;  // the running drain picks it up
    drain_in_flight_ = true;
    generation = ++drain_generation_;
  }
  ScheduleDrain(generation);
  return true;
}

void ServiceCore::ScheduleDrain(uint64_t generation) {
  auto task = std::make_shared<DrainTask>(shared_from_this(), generation);
  const bool accepted = scheduler_->Dispatch(
      [task] {
        task->started = true;
        task->core->Drain();
      },
      route_, nullptr);
  task.reset();  // if refused, this was the last reference: ReleaseDrain ran
  if (accepted) return;
  uint64_t refusals = 0;
  size_t pending = 0;
  {
    MutexLock lock(&mu_);
    refusals = ++stats_.dispatch_refusals;
    pending = queue_.size();
  }
  ReleaseDrain(generation);
  AERROR_EVERY(100) << Prefix() << ": scheduler \"" << scheduler_->name()
                    << "\" refused the serving routine (refusals so far: "
                    << refusals << "); " << pending
                    << " request(s) stay queued until the next request";
}

void ServiceCore::ReleaseDrain(uint64_t generation) {
  MutexLock lock(&mu_);
  if (drain_in_flight_ && drain_generation_ == generation) {
    drain_in_flight_ = false;
  }
}

void ServiceCore::Drain() {
  const scheduler::CRoutine* const self = scheduler::CRoutine::Current();
  // The request being served. Declared before `unwind`, so it is still there
  // when `unwind` answers it.
  Job current;
  // If the routine unwinds (cancelled at a suspension point inside the
  // callback: the scheduler is stopping), the request in hand is answered
  // and the service is left able to serve again.
  struct Unwind {
    ServiceCore* core;
    Job* current;
    bool serving = false;  // `current`'s callback runs
    bool finished = false;
    ~Unwind() {
      if (finished) return;
      {
        MutexLock lock(&core->mu_);
        core->callback_running_ = false;
        core->callback_routine_ = nullptr;
        core->drain_in_flight_ = false;
        if (serving) ++core->stats_.dropped_shutdown;
        core->callback_idle_.WakeAll();
      }
      if (serving) {
        core->Answer(current, absl::UnavailableError(absl::StrCat(
                                  core->Server(),
                                  " is gone: its scheduler is shutting down "
                                  "while the request was being served")));
      }
    }
  } unwind{this, &current};

  int in_slice = 0;
  for (;;) {
    bool yield = false;
    {
      MutexLock lock(&mu_);
      if (callback_running_) {
        callback_running_ = false;
        callback_routine_ = nullptr;
        callback_idle_.WakeAll();
      }
      if (shut_down_ || queue_.empty()) {
        drain_in_flight_ = false;
        unwind.finished = true;
        return;
      }
      if (in_slice == kRequestsPerSlice) {
        yield = true;
      } else {
        current = std::move(queue_.front());
        queue_.pop_front();
        callback_running_ = true;
        callback_routine_ = self;
      }
    }
    if (yield) {
      in_slice = 0;
      scheduler::CRoutine::Yield();
      continue;
    }
    unwind.serving = true;
    ServiceOutcome outcome = Invoke(current);
    unwind.serving = false;
    // Answered while still marked running: a Shutdown() waiting for this
    // request returns after its response is out.
    Answer(&current, std::move(outcome));
    current = Job();
    ++in_slice;
  }
}

ServiceOutcome ServiceCore::Invoke(const Job& job) {
  std::string what;
  try {
    ServiceOutcome outcome = handler_(job.request);
    if (outcome.ok()) return outcome;
    what = std::string(outcome.status().message());
  } catch (const scheduler::RoutineCancelled&) {
    throw;  // the scheduler is stopping: Drain's unwinding answers
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
  MutexLock lock(&mu_);
  ServiceStats s = stats_;
  s.pending = queue_.size();
  return s;
}

void ServiceCore::Shutdown() {
  std::deque<Job> dropped;  // answered outside the lock
  {
    MutexLock lock(&mu_);
    if (!shut_down_) {
      shut_down_ = true;
      stats_.dropped_shutdown += queue_.size();
      dropped.swap(queue_);
    }
  }
  registry_->Unregister(service_, this);
  for (Job& job : dropped) {
    Answer(&job, absl::UnavailableError(absl::StrCat(
                     Server(), " is gone: shut down with the request pending")));
  }
  MutexLock lock(&mu_);
  // Wait out a running callback, unless we are that callback.
  const scheduler::CRoutine* const caller = scheduler::CRoutine::Current();
  while (callback_running_ &&
         (caller == nullptr || caller != callback_routine_)) {
    callback_idle_.Wait(&mu_);
  }
}

}  // namespace transport_internal
}  // namespace cyber
