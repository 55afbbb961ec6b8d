#include "examples/timeout_watchdog/watchdog_components.h"

#include <utility>
#include <vector>

#include "cyber/common/log.h"
#include "cyber/component/component_registry.h"

namespace timeout_watchdog {

std::atomic<uint64_t> RequestClient::sent{0};
std::atomic<uint64_t> RequestClient::answered{0};
std::atomic<uint64_t> RequestClient::lost_timed_out{0};
std::atomic<uint64_t> RequestClient::late_answers{0};
std::atomic<uint64_t> RequestClient::raced{0};
std::atomic<uint64_t> RequestClient::violations{0};
std::atomic<uint64_t> HeartbeatSource::outages{0};
std::atomic<uint64_t> Watchdog::fired{0};
std::atomic<uint64_t> Watchdog::rearmed{0};
std::atomic<uint64_t> Watchdog::stalls{0};

namespace {

constexpr char kRequestChannel[] = "/rpc/request";
constexpr char kResponseChannel[] = "/rpc/response";
constexpr char kHeartbeatChannel[] = "/sensor/heartbeat";
constexpr char kAlarmChannel[] = "/watchdog/timeout";

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
  return Take(node()->TryCreateWriter<Request>(kRequestChannel), &writer_) &&
         Take(node()->TryCreateReader<Response>(
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
      fate_[id] = Fate::kPending;
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
    Fate& fate = fate_[id];
    if (fate == Fate::kTimedOut) {
      ++late_answers;  // the timeout was right: this answer is late
      return;
    }
    if (fate != Fate::kPending) {
      ++violations;  // answered twice
      return;
    }
    fate = Fate::kCancelling;
    timeout = std::move(pending_[id]);
    pending_.erase(id);
  }
  // Synchronous, outside our lock: when it returns the timeout is not
  // running and never will.
  timeout->Stop();
  cyber::MutexLock lock(&mu_);
  Fate& fate = fate_[id];
  if (fate == Fate::kCancelling) {
    fate = Fate::kCancelled;
    ++answered;
  }  // else it fired just before the cancel took effect (counted in raced)
}

void RequestClient::OnTimeout(uint64_t id) {
  std::unique_ptr<cyber::Timer> timeout;  // destroyed from its own callback
  cyber::MutexLock lock(&mu_);
  Fate& fate = fate_[id];
  switch (fate) {
    case Fate::kPending:
      fate = Fate::kTimedOut;
      timeout = std::move(pending_[id]);
      pending_.erase(id);
      if (id % kLostEvery == 0) ++lost_timed_out;
      return;
    case Fate::kCancelling:  // fired before the answer's Stop() returned
      fate = Fate::kTimedOut;
      ++raced;
      return;
    case Fate::kCancelled:  // fired after Stop() returned: a broken timer
    case Fate::kTimedOut:   // fired twice
      ++violations;
      return;
  }
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
  return Take(node()->TryCreateWriter<Response>(kResponseChannel), &writer_);
}

bool EchoServer::Proc(const std::shared_ptr<Request>& request) {
  if (request->id % kLostEvery == 0) return true;  // lost on purpose
  auto response = std::make_shared<Response>();
  response->id = request->id;
  return writer_->Write(std::move(response));
}

// --- HeartbeatSource ---------------------------------------------------------

bool HeartbeatSource::Init() {
  return Take(node()->TryCreateWriter<Heartbeat>(kHeartbeatChannel), &writer_);
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
  if (!Take(node()->TryCreateWriter<WatchdogAlarm>(kAlarmChannel), &alarm_writer_)) {
    return false;
  }
  cyber::TimerOptions o;
  o.name = name() + "_quiet";
  o.period = kWatchdogTimeout;
  o.oneshot = true;
  o.callback = [this] {
    quiet_ = true;
    ++fired;
    auto alarm = std::make_shared<WatchdogAlarm>();
    alarm->last_seq = last_seq_.load();
    alarm_writer_->Write(std::move(alarm));
    AWARN << "watchdog \"" << name() << "\": " << kHeartbeatChannel
          << " quiet for " << kWatchdogTimeout;
  };
  timer_ = std::make_unique<cyber::Timer>(std::move(o));
  return timer_->Schedule().ok();
}

bool Watchdog::Proc(const std::shared_ptr<Heartbeat>& beat) {
  const cyber::Instant now = timer_->clock()->Now();
  if (beat->seq == last_seq_.load() + 1 &&
      now - last_receive_ >= kWatchdogTimeout) {
    ++stalls;
  }
  last_receive_ = now;
  last_seq_ = beat->seq;
  if (quiet_.exchange(false)) ++rearmed;
  // Restart the countdown from now (Schedule() alone would keep the old
  // deadline of a running oneshot). Reset() never waits for a running call.
  return timer_->Reset().ok();
}

void Watchdog::Clear() { timer_.reset(); }

CYBER_REGISTER_COMPONENT(RequestClient)
CYBER_REGISTER_COMPONENT(EchoServer)
CYBER_REGISTER_COMPONENT(HeartbeatSource)
CYBER_REGISTER_COMPONENT(Watchdog)

}  // namespace timeout_watchdog
