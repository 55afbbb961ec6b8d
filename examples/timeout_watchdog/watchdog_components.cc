#include "examples/timeout_watchdog/watchdog_components.h"

#include <utility>
#include <vector>

#include "cyber/common/log.h"
#include "cyber/component/component_registry.h"

namespace timeout_watchdog {

std::atomic<uint64_t> RequestClient::sent{0};
std::atomic<uint64_t> RequestClient::answered{0};
std::atomic<uint64_t> RequestClient::timed_out{0};
std::atomic<uint64_t> RequestClient::wrong{0};
std::atomic<uint64_t> HeartbeatSource::outages{0};
std::atomic<uint64_t> Watchdog::fired{0};
std::atomic<uint64_t> Watchdog::rearmed{0};

namespace {

constexpr char kRequestChannel[] = "/rpc/request";
constexpr char kResponseChannel[] = "/rpc/response";
constexpr char kHeartbeatChannel[] = "/sensor/heartbeat";

template <typename T>
bool Take(absl::StatusOr<T> result, T* out) {
  if (!result.ok()) {
    AERROR << result.status().message();
    return false;
  }
  *out = *std::move(result);
  return true;
}

}  // namespace

// --- RequestClient -----------------------------------------------------------

bool RequestClient::Init() {
  return Take(node()->CreateWriter<Request>(kRequestChannel), &writer_) &&
         Take(node()->CreateReader<Response>(
                  kResponseChannel,
                  [this](const std::shared_ptr<const Response>& r) { OnResponse(r->id); },
                  /*pending_queue_size=*/4096),
              &reader_);
}

bool RequestClient::Proc() {
  for (int i = 0; i < kRequestsPerCall; ++i) {
    const uint64_t id = ++next_id_;
    cyber::TimerOptions o;
    o.name = "request_timeout";
    o.period = kRequestTimeout;
    o.oneshot = true;
    o.callback = [this, id] { OnTimeout(id); };
    auto timeout = std::make_unique<cyber::Timer>(std::move(o));
    {
      cyber::MutexLock lock(&mu_);
      // Armed before the request leaves, so an answer always finds it.
      if (!timeout->Schedule().ok()) return false;
      pending_.emplace(id, std::move(timeout));
    }
    auto request = std::make_shared<Request>();
    request->id = id;
    ++sent;
    if (!writer_->Write(std::move(request))) return false;
  }
  return true;
}

void RequestClient::OnResponse(uint64_t id) {
  std::unique_ptr<cyber::Timer> timeout;
  {
    cyber::MutexLock lock(&mu_);
    auto it = pending_.find(id);
    if (it == pending_.end()) {
      ++wrong;  // answered after its timeout fired
      return;
    }
    timeout = std::move(it->second);
    pending_.erase(it);
  }
  timeout->Stop();  // synchronous, outside our lock: it will not fire now
  ++answered;
}

void RequestClient::OnTimeout(uint64_t id) {
  std::unique_ptr<cyber::Timer> timeout;
  {
    cyber::MutexLock lock(&mu_);
    auto it = pending_.find(id);
    if (it == pending_.end()) {
      ++wrong;  // fired although the answer had cancelled it
      return;
    }
    timeout = std::move(it->second);  // destroyed below, from its own callback
    pending_.erase(it);
  }
  if (id % kLostEvery != 0) ++wrong;  // an answered request should not time out
  ++timed_out;
}

void RequestClient::Clear() {
  std::map<uint64_t, std::unique_ptr<cyber::Timer>> pending;
  {
    cyber::MutexLock lock(&mu_);
    pending.swap(pending_);
  }
  pending.clear();  // each destructor stops its timer
}

// --- EchoServer --------------------------------------------------------------

bool EchoServer::Init() {
  return Take(node()->CreateWriter<Response>(kResponseChannel), &writer_);
}

bool EchoServer::Proc(const std::shared_ptr<Request>& request) {
  if (request->id % kLostEvery == 0) return true;  // lost on purpose
  auto response = std::make_shared<Response>();
  response->id = request->id;
  return writer_->Write(std::move(response));
}

// --- HeartbeatSource ---------------------------------------------------------

bool HeartbeatSource::Init() {
  return Take(node()->CreateWriter<Heartbeat>(kHeartbeatChannel), &writer_);
}

bool HeartbeatSource::Proc() {
  // 100 calls per second at 10 ms; quiet for the first 30 of each 100.
  const uint64_t phase = seq_++ % 100;
  if (phase == 0) ++outages;
  if (phase < 30) return true;
  auto beat = std::make_shared<Heartbeat>();
  beat->seq = seq_;
  return writer_->Write(std::move(beat));
}

// --- Watchdog ----------------------------------------------------------------

bool Watchdog::Init() {
  cyber::TimerOptions o;
  o.name = name() + "_quiet";
  o.period = kWatchdogTimeout;
  o.oneshot = true;
  o.callback = [this] {
    quiet_ = true;
    ++fired;
    AWARN << "watchdog \"" << name() << "\": " << kHeartbeatChannel
          << " quiet for " << kWatchdogTimeout;
  };
  timer_ = std::make_unique<cyber::Timer>(std::move(o));
  return timer_->Schedule().ok();
}

bool Watchdog::Proc(const std::shared_ptr<Heartbeat>&) {
  if (quiet_.exchange(false)) ++rearmed;
  // Restart the countdown: Stop() then Schedule() counts from now.
  timer_->Stop();
  return timer_->Schedule().ok();
}

void Watchdog::Clear() { timer_.reset(); }

CYBER_REGISTER_COMPONENT(RequestClient)
CYBER_REGISTER_COMPONENT(EchoServer)
CYBER_REGISTER_COMPONENT(HeartbeatSource)
CYBER_REGISTER_COMPONENT(Watchdog)

}  // namespace timeout_watchdog
