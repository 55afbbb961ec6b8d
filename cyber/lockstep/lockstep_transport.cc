#include "cyber/lockstep/lockstep_transport.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "cyber/common/log.h"

namespace cyber {
namespace lockstep {

// One subscription's handler; its lock is held while the handler runs, so
// closing it waits for a call in progress.
struct Subscriber {
  std::string channel;
  RemoteTransport::SampleHandler handler;
  Mutex call_mu;
  bool closed ABSL_GUARDED_BY(call_mu) = false;
};

struct Queued {
  int64_t instant_ns = 0;
  std::string writer;  // the sending process's name: the same in every run
  uint64_t sequence = 0;
  // Arrival order. One process's messages arrive in the order it sent them
  // (one sending thread per step, one listening thread per participant),
  // on every channel: the same in every run.
  uint64_t arrival = 0;
  std::string payload;
  Correlation correlation;
  SampleOrigin origin;  // sender: null (the peer record is not kept)
  std::shared_ptr<Subscriber> to;
};

struct LockstepTransport::State {
  std::function<int64_t()> now_ns;
  Mutex mu;
  std::function<void()> on_arrival ABSL_GUARDED_BY(mu);
  int arrivals_calling ABSL_GUARDED_BY(mu) = 0;  // on_arrival calls in progress
  uint64_t arrivals ABSL_GUARDED_BY(mu) = 0;
  CondVar arrival_returned;
  std::map<std::string, ChannelCount> counts ABSL_GUARDED_BY(mu);
  std::vector<Queued> queue ABSL_GUARDED_BY(mu);
  // FNV-1a, 64 bits, over the deliveries in order (DeliveryDigest()).
  uint64_t digest ABSL_GUARDED_BY(mu) = 1469598103934665603ull;
  uint64_t delivered ABSL_GUARDED_BY(mu) = 0;

  void Delivered(const Queued& q) {
    MutexLock lock(&mu);
    CountLocked(q.to->channel, What::kDelivered);
    ++delivered;
    auto mix = [this](const void* data, size_t n) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
      const unsigned char* p = static_cast<const unsigned char*>(data);
      for (size_t i = 0; i < n; ++i) {
        digest ^= p[i];
        digest *= 1099511628211ull;
      }
    };
    mix(&q.instant_ns, sizeof(q.instant_ns));
    mix(q.writer.c_str(), q.writer.size() + 1);
    mix(q.to->channel.c_str(), q.to->channel.size() + 1);
    mix(&q.sequence, sizeof(q.sequence));
    const uint64_t size = q.payload.size();
    mix(&size, sizeof(size));
    // The bytes 8 at a time (a camera image is megabytes), the tail bytewise.
    size_t i = 0;
    for (; i + 8 <= q.payload.size(); i += 8) {
      uint64_t word;
      std::memcpy(&word, q.payload.data() + i, 8);
      digest ^= word;
      digest *= 1099511628211ull;
    }
    mix(q.payload.data() + i, q.payload.size() - i);
  }

  enum class What { kSent, kArrived, kDelivered };
  void CountLocked(const std::string& channel, What what) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    ChannelCount& c = counts[channel];
    c.set_channel(channel);
    switch (what) {
      case What::kSent:
        c.set_writes(true);
        c.set_sent(c.sent() + 1);
        break;
      case What::kArrived:
        c.set_arrived(c.arrived() + 1);
        break;
      case What::kDelivered:
        c.set_received(c.received() + 1);
        break;
    }
  }
  void Count(const std::string& channel, What what) ABSL_LOCKS_EXCLUDED(mu) {
    MutexLock lock(&mu);
    CountLocked(channel, what);
  }
};

namespace {

absl::Time Stamp(int64_t instant_ns) { return absl::UnixEpoch() + absl::Nanoseconds(instant_ns); }

class LockstepPublisher final : public RemotePublisher {
 public:
  LockstepPublisher(std::shared_ptr<RemotePublisher> inner, std::shared_ptr<LockstepTransport::State> state,
                    std::string channel)
      : inner_(std::move(inner)), state_(std::move(state)), channel_(std::move(channel)) {}

  bool Wanted() const override { return inner_->Wanted(); }
  absl::Status Publish(absl::string_view payload, Correlation correlation) override {
    return PublishAt(payload, Stamp(state_->now_ns()), correlation);
  }
  absl::Status PublishMessage(const google::protobuf::MessageLite& message, Correlation correlation) override {
    std::string bytes;
    if (!message.SerializeToString(&bytes)) {
      return absl::InvalidArgumentError(
          absl::StrCat("channel \"", channel_, "\": the message does not serialize; not sent"));
    }
    return Publish(bytes, correlation);
  }
  absl::Status PublishAt(absl::string_view payload, absl::Time source_time, Correlation correlation) override {
    absl::Status s = inner_->PublishAt(payload, source_time, correlation);
    if (s.ok()) {
      state_->Count(channel_, LockstepTransport::State::What::kSent);
    } else {
      // Not counted, so the run goes on without it: what the readers do
      // may now differ from run to run. Said on every failure.
      AERROR << "lockstep: channel \"" << channel_ << "\": a message of instant "
             << absl::FormatDuration(source_time - absl::UnixEpoch())
             << " was not sent (" << s.message() << "); this run is no longer deterministic";
    }
    return s;
  }

 private:
  const std::shared_ptr<RemotePublisher> inner_;
  const std::shared_ptr<LockstepTransport::State> state_;
  const std::string channel_;
};

class LockstepSubscription final : public RemoteSubscription {
 public:
  LockstepSubscription(std::unique_ptr<RemoteSubscription> inner, std::shared_ptr<Subscriber> subscriber)
      : inner_(std::move(inner)), subscriber_(std::move(subscriber)) {}
  ~LockstepSubscription() override {
    inner_.reset();  // no arrival after this
    // What the handler holds goes now, not with the last queued message;
    // destroyed outside the lock (its captures are the caller's objects).
    RemoteTransport::SampleHandler handler;
    {
      MutexLock lock(&subscriber_->call_mu);
      subscriber_->closed = true;  // and no delivery
      handler = std::move(subscriber_->handler);
      subscriber_->handler = nullptr;
    }
  }

 private:
  std::unique_ptr<RemoteSubscription> inner_;
  const std::shared_ptr<Subscriber> subscriber_;
};

}  // namespace

LockstepTransport::LockstepTransport(std::shared_ptr<RemoteTransport> inner, std::function<int64_t()> now_ns)
    : inner_(std::move(inner)), state_(std::make_shared<State>()) {
  state_->now_ns = std::move(now_ns);
}

LockstepTransport::~LockstepTransport() { DropQueued(); }

void LockstepTransport::Shutdown() {
  inner_->Shutdown();
  DropQueued();
}

void LockstepTransport::DropQueued() {
  // A message queued for an instant the run never reached holds its
  // subscriber, whose handler can hold the publisher that holds this
  // state: a cycle, broken here. Destroyed outside the lock.
  std::vector<Queued> dropped;
  MutexLock lock(&state_->mu);
  dropped.swap(state_->queue);
}

void LockstepTransport::SetArrivalListener(std::function<void()> on_arrival) {
  std::function<void()> old;
  {
    MutexLock lock(&state_->mu);
    old = std::exchange(state_->on_arrival, std::move(on_arrival));
    while (state_->arrivals_calling > 0) state_->arrival_returned.Wait(&state_->mu);
  }
}

absl::StatusOr<std::shared_ptr<RemotePublisher>> LockstepTransport::Publisher(const RemoteEndpoint& endpoint) {
  absl::StatusOr<std::shared_ptr<RemotePublisher>> inner = inner_->Publisher(endpoint);
  if (!inner.ok()) return inner.status();
  {
    MutexLock lock(&state_->mu);
    ChannelCount& c = state_->counts[endpoint.channel];
    c.set_channel(endpoint.channel);
    c.set_writes(true);
  }
  return std::make_shared<LockstepPublisher>(*std::move(inner), state_, endpoint.channel);
}

absl::StatusOr<std::unique_ptr<RemoteSubscription>> LockstepTransport::Subscribe(const RemoteEndpoint& endpoint,
                                                                                 SampleHandler handler) {
  auto subscriber = std::make_shared<Subscriber>();
  subscriber->channel = endpoint.channel;
  subscriber->handler = std::move(handler);
  std::shared_ptr<State> state = state_;
  // Samples wait here as bytes until their turn: the inner transport must
  // hand bytes, not parsed messages.
  RemoteEndpoint bytes_endpoint = endpoint;
  bytes_endpoint.prototype = nullptr;
  absl::StatusOr<std::unique_ptr<RemoteSubscription>> inner =
      inner_->Subscribe(bytes_endpoint, [state, subscriber](const RemoteSample& s) {
        Queued q;
        q.instant_ns = s.origin.source_time_ns;  // Stamp()'s inverse
        if (s.origin.sender != nullptr) q.writer = s.origin.sender->process;
        q.sequence = s.origin.sequence;
        q.payload = std::string(s.payload);
        q.correlation = s.correlation;
        q.origin = s.origin;
        q.origin.sender = nullptr;
        q.to = subscriber;
        std::function<void()> on_arrival;
        {
          MutexLock lock(&state->mu);
          q.arrival = ++state->arrivals;
          state->CountLocked(subscriber->channel, State::What::kArrived);
          state->queue.push_back(std::move(q));
          on_arrival = state->on_arrival;
          if (on_arrival) ++state->arrivals_calling;
        }
        if (on_arrival) {
          on_arrival();
          MutexLock lock(&state->mu);
          if (--state->arrivals_calling == 0) state->arrival_returned.SignalAll();
        }
        return true;
      });
  if (!inner.ok()) return inner.status();
  {
    MutexLock lock(&state_->mu);
    ChannelCount& c = state_->counts[endpoint.channel];
    c.set_channel(endpoint.channel);
    c.set_reads(true);
  }
  return std::unique_ptr<RemoteSubscription>(
      new LockstepSubscription(*std::move(inner), std::move(subscriber)));
}

size_t LockstepTransport::DeliverDue(int64_t instant_ns, uint64_t through) {
  std::vector<Queued> due;
  {
    MutexLock lock(&state_->mu);
    auto later = std::stable_partition(
        state_->queue.begin(), state_->queue.end(),
        [instant_ns, through](const Queued& q) { return q.instant_ns <= instant_ns && q.arrival <= through; });
    due.assign(std::make_move_iterator(state_->queue.begin()), std::make_move_iterator(later));
    state_->queue.erase(state_->queue.begin(), later);
  }
  std::sort(due.begin(), due.end(), [](const Queued& a, const Queued& b) {
    return std::tie(a.instant_ns, a.writer, a.arrival) < std::tie(b.instant_ns, b.writer, b.arrival);
  });
  size_t delivered = 0;
  for (const Queued& q : due) {
    RemoteSample s;
    s.payload = q.payload;
    s.correlation = q.correlation;
    s.origin = q.origin;
    bool handed = true;
    {
      MutexLock lock(&q.to->call_mu);
      if (!q.to->closed) handed = q.to->handler(s);
    }
    if (!handed) {
      AERROR << "lockstep: channel \"" << q.to->channel << "\": a message from " << q.writer
             << " (sequence " << q.sequence << ") does not parse as the channel's type; dropped";
    }
    // Counted either way (a closed reader's too): the coordinator balances
    // what arrived against what was sent.
    state_->Delivered(q);
    ++delivered;
  }
  return delivered;
}

std::vector<ChannelCount> LockstepTransport::Counts(bool matched_readers, uint64_t* arrivals) const {
  std::map<std::string, std::vector<std::string>> matched;
  if (matched_readers) {
    for (const RemoteChannelStats& s : inner_->ChannelStats()) {
      for (const RemotePeer& p : s.remote_readers) matched[s.channel].push_back(p.process);
    }
  }
  MutexLock lock(&state_->mu);
  if (arrivals != nullptr) *arrivals = state_->arrivals;
  std::vector<ChannelCount> out;
  for (const auto& [name, c] : state_->counts) {
    out.push_back(c);
    if (c.writes()) {
      for (const std::string& p : matched[name]) out.back().add_matched_readers(p);
    }
  }
  return out;
}

std::string LockstepTransport::DeliveryDigest(uint64_t* delivered) const {
  MutexLock lock(&state_->mu);
  if (delivered != nullptr) *delivered = state_->delivered;
  char out[17];
  std::snprintf(out, sizeof(out), "%016llx", static_cast<unsigned long long>(state_->digest));
  return out;
}

int64_t LockstepTransport::EarliestQueued() const {
  MutexLock lock(&state_->mu);
  int64_t earliest = -1;
  for (const Queued& q : state_->queue) {
    if (earliest < 0 || q.instant_ns < earliest) earliest = q.instant_ns;
  }
  return earliest;
}

}  // namespace lockstep
}  // namespace cyber
