#include "tests/scale/timeout_load.h"

#include <pthread.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "cyber/common/log.h"
#include "tests/scale/thread_roles.h"

namespace cyber {
namespace scale {

namespace {

// Slot states. A slot is armed in one of the two "awaiting" states; the
// callback moves it to kFired, the answer (after Stop()) to kCancelled, the
// final Stop() to kRetired.
enum SlotState : uint8_t {
  kIdle,
  kAwaitingAnswer,   // will be answered (cancelled) before its deadline
  kAwaitingTimeout,  // lost request: must fire
  kFired,
  kCancelled,
  kRetired,
};

// An unanswered timeout not fired this long after its deadline when the run
// ends counts as lost. Far beyond any lateness a working timer shows (one
// tick plus dispatch), yet short against the run.
constexpr absl::Duration kLostAfter = absl::Seconds(5);

// How far a request thread may fall behind before answers are planned sooner
// than drawn (see AnswerCalendar::Add).
constexpr absl::Duration kCalendarSlack = absl::Seconds(30);

int64_t ToNs(Instant t) { return absl::ToInt64Nanoseconds(t.SinceEpoch()); }
Instant FromNs(int64_t ns) { return Instant::FromEpoch(absl::Nanoseconds(ns)); }

// Pending answers of one request thread, in buckets of `step`: bucket b holds
// the answers due in (origin + (b - 1) * step, origin + b * step] and is
// handled once the clock has reached origin + b * step. Entries name the
// slot and the request (generation) they answer.
class AnswerCalendar {
 public:
  struct Entry {
    uint32_t slot;
    uint32_t generation;
  };

  AnswerCalendar(Instant origin, absl::Duration step, absl::Duration span)
      : origin_(origin),
        step_(step),
        buckets_(static_cast<size_t>(absl::Ceil(span, step) / step) + 2) {}

  // An answer due already goes to the next bucket handled. One due beyond the
  // span as seen from a lagging thread (done_ far behind the clock) goes to
  // the last bucket of the span: answered sooner than planned, and counted.
  void Add(Instant due, Entry entry) {
    int64_t b = BucketOf(due);
    if (b <= done_) b = done_ + 1;
    const int64_t last = done_ + static_cast<int64_t>(buckets_.size()) - 1;
    if (b > last) {
      b = last;
      ++clamped_;
    }
    buckets_[static_cast<size_t>(b) % buckets_.size()].push_back(entry);
  }
  uint64_t clamped() const { return clamped_; }

  // Calls fn(entry) for every entry due by `now`, bucket by bucket (fn may
  // Add). Returns the instant of the oldest non-empty bucket handled, or
  // Instant::InfiniteFuture() if none.
  template <typename Fn>
  Instant HandleDue(Instant now, Fn fn) {
    const int64_t last = absl::IDivDuration(now - origin_, step_, &unused_);
    Instant oldest = Instant::InfiniteFuture();
    for (int64_t b = done_ + 1; b <= last; ++b) {
      std::vector<Entry>& bucket =
          buckets_[static_cast<size_t>(b) % buckets_.size()];
      done_ = b;  // before fn: an Add() due now lands in the next bucket
      if (bucket.empty()) continue;
      if (oldest.IsInfiniteFuture()) oldest = BucketInstant(b);
      scratch_.swap(bucket);
      // Free the buffer the bucket got in the swap: otherwise every bucket
      // of the ring ends up holding a buffer of peak size.
      std::vector<Entry>().swap(bucket);
      for (const Entry& e : scratch_) fn(e);
      scratch_.clear();
    }
    return oldest;
  }

  // When the next bucket comes due.
  Instant NextDue() const { return BucketInstant(done_ + 1); }

 private:
  int64_t BucketOf(Instant t) const {
    absl::Duration rem;
    const int64_t q = absl::IDivDuration(t - origin_, step_, &rem);
    return rem > absl::ZeroDuration() ? q + 1 : q;
  }
  Instant BucketInstant(int64_t b) const { return origin_ + step_ * b; }

  const Instant origin_;
  const absl::Duration step_;
  std::vector<std::vector<Entry>> buckets_;
  std::vector<Entry> scratch_;
  int64_t done_ = 0;  // the last bucket handled
  uint64_t clamped_ = 0;
  absl::Duration unused_;
};

}  // namespace

struct TimeoutLoad::Slot {
  std::unique_ptr<Timer> timer;
  absl::Duration delay;
  // Written by the request thread before Schedule(), read by the callback
  // (ordered by the timer's locks; atomics so that no reader relies on it).
  std::atomic<int64_t> armed_at_ns{0};
  std::atomic<uint8_t> state{kIdle};
  uint32_t generation = 0;  // request thread only
};

struct TimeoutLoad::Requester {
  std::thread thread;
  Mutex mu;
  // Slots whose timeout fired, to be re-armed by this thread.
  std::vector<uint32_t> fired ABSL_GUARDED_BY(mu);
};

TimeoutLoad::TimeoutLoad(const TimeoutLoadOptions& options, Clock* clock,
                         const MeasurementWindow* window)
    : options_(options), clock_(clock), window_(window) {}

TimeoutLoad::~TimeoutLoad() {
  Stop();
  if (slots_ != nullptr) {
    for (int64_t i = 0; i < options_.timeouts; ++i) slots_[i].timer.reset();
    slots_.reset();
  }
}

absl::Status TimeoutLoad::CreateTimers() {
  slots_.reset(new Slot[static_cast<size_t>(options_.timeouts)]);
  std::mt19937_64 rng(options_.seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  // Inverse CDF of the density proportional to d on [lo, hi]:
  // d = sqrt(lo^2 + u (hi^2 - lo^2)).
  const double lo = absl::ToDoubleSeconds(options_.min_delay);
  const double hi = absl::ToDoubleSeconds(options_.max_delay);
  for (int64_t i = 0; i < options_.timeouts; ++i) {
    Slot& slot = slots_[i];
    const double d = std::sqrt(lo * lo + unit(rng) * (hi * hi - lo * lo));
    // Whole microseconds: the wheel rounds to 2 ms ticks anyway.
    slot.delay = absl::Trunc(absl::Seconds(d), absl::Microseconds(1));
    TimerOptions o;
    o.name = absl::StrCat("timeout-", i);
    o.period = slot.delay;
    o.oneshot = true;
    const uint32_t index = static_cast<uint32_t>(i);
    o.event_callback = [this, index](const TimerEvent& e) { OnFired(index, e); };
    slot.timer = std::make_unique<Timer>();
    absl::Status status = slot.timer->Configure(std::move(o));
    if (!status.ok()) return status;
  }
  for (int t = 0; t < options_.threads; ++t) {
    requesters_.push_back(std::make_unique<Requester>());
  }
  return absl::OkStatus();
}

void TimeoutLoad::Start() {
  for (int t = 0; t < options_.threads; ++t) {
    requesters_[static_cast<size_t>(t)]->thread =
        std::thread([this, t] { RequestLoop(t); });
  }
}

void TimeoutLoad::RequestLoop(int index) {
  pthread_setname_np(pthread_self(),
                     absl::StrCat(kRequestThreadPrefix, index).substr(0, 15).c_str());
  Requester& me = *requesters_[static_cast<size_t>(index)];
  std::mt19937_64 rng(options_.seed * 7919 + static_cast<uint64_t>(index) + 1);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  // Spans the latest answer plus kCalendarSlack of generator lag.
  AnswerCalendar calendar(
      clock_->Now(), options_.step,
      options_.max_delay * options_.max_answer_fraction + kCalendarSlack);

  // A new request on `i`: arm its timeout, and plan its answer (or none).
  auto start_request = [&](uint32_t i) {
    Slot& s = slots_[i];
    ++s.generation;
    const bool answered = unit(rng) < options_.cancel_fraction;
    s.state.store(answered ? kAwaitingAnswer : kAwaitingTimeout,
                  std::memory_order_relaxed);
    const Instant now = clock_->Now();
    s.armed_at_ns.store(ToNs(now), std::memory_order_relaxed);
    const absl::Status status = s.timer->Schedule();
    if (!status.ok()) {
      s.state.store(kIdle, std::memory_order_relaxed);
      schedule_errors_.fetch_add(1, std::memory_order_relaxed);
      AERROR_EVERY(10000) << "timer_scale_run: " << status;
      return;
    }
    live_.fetch_add(1, std::memory_order_relaxed);
    armed_.fetch_add(1, std::memory_order_relaxed);
    if (answered) {
      const absl::Duration answer_after =
          s.delay * (unit(rng) * options_.max_answer_fraction);
      calendar.Add(now + answer_after, {i, s.generation});
    }
  };

  const uint32_t n = static_cast<uint32_t>(options_.timeouts);
  const uint32_t stride = static_cast<uint32_t>(options_.threads);
  for (uint32_t i = static_cast<uint32_t>(index); i < n; i += stride) {
    if (stopping_.load(std::memory_order_relaxed)) return;
    start_request(i);
  }

  std::vector<uint32_t> fired;
  while (!stopping_.load(std::memory_order_relaxed)) {
    const Instant now = clock_->Now();
    const Instant oldest = calendar.HandleDue(now, [&](const AnswerCalendar::Entry& e) {
      Slot& s = slots_[e.slot];
      if (s.generation != e.generation) return;  // fired and re-armed since
      s.timer->Stop();  // the answer: synchronous cancel
      uint8_t expected = kAwaitingAnswer;
      if (s.state.compare_exchange_strong(expected, kCancelled)) {
        cancelled_.fetch_add(1, std::memory_order_relaxed);
        live_.fetch_sub(1, std::memory_order_relaxed);
        start_request(e.slot);
      }
      // Otherwise it fired first: its callback queued the slot for us.
    });
    {
      MutexLock lock(&me.mu);
      fired.swap(me.fired);
    }
    for (uint32_t i : fired) {
      // Stop() first: it waits until the callback's run has fully ended, so
      // the new request starts from a timer with nothing in flight (and the
      // stale-call check in OnFired() stays exact).
      slots_[i].timer->Stop();
      start_request(i);
    }
    fired.clear();
    if (!oldest.IsInfiniteFuture()) {
      const Instant done = clock_->Now();
      if (window_->Contains(done)) lag_.Record(done - oldest);
      const int64_t lag_ns = absl::ToInt64Nanoseconds(done - oldest);
      int64_t seen = max_lag_ns_.load(std::memory_order_relaxed);
      while (lag_ns > seen &&
             !max_lag_ns_.compare_exchange_weak(seen, lag_ns,
                                                std::memory_order_relaxed)) {
      }
    }
    clock_->SleepUntil(calendar.NextDue());
  }
  answers_clamped_.fetch_add(calendar.clamped());
}

void TimeoutLoad::OnFired(uint32_t index, const TimerEvent& event) {
  Slot& s = slots_[index];
  const Instant armed_at = FromNs(s.armed_at_ns.load(std::memory_order_relaxed));
  const Instant deadline = armed_at + s.delay;
  // The timer counts its delay from inside Schedule(), after armed_at: a call
  // for the current arming expects no earlier than `deadline`. An earlier
  // expected time belongs to a previous arming, which was stopped (answered,
  // or after firing) before this one began.
  if (event.expected_time < deadline) {
    fired_after_cancel_.fetch_add(1, std::memory_order_relaxed);
    AERROR_EVERY(1000) << "timer_scale_run: timeout-" << index
                       << " ran for an arming that had been stopped (expected "
                       << event.expected_time << ", current deadline "
                       << deadline << ")";
    return;
  }
  if (event.actual_time < deadline || event.actual_time < event.expected_time) {
    early_.fetch_add(1, std::memory_order_relaxed);
    AERROR_EVERY(1000) << "timer_scale_run: timeout-" << index
                       << " fired early: at " << event.actual_time
                       << ", deadline " << deadline << ", expected "
                       << event.expected_time;
  }
  uint8_t state = s.state.load(std::memory_order_relaxed);
  const bool awaiting = state == kAwaitingAnswer || state == kAwaitingTimeout;
  if (!awaiting || !s.state.compare_exchange_strong(state, kFired)) {
    if (state == kFired) {
      duplicate_.fetch_add(1, std::memory_order_relaxed);
    } else {
      fired_after_cancel_.fetch_add(1, std::memory_order_relaxed);
    }
    AERROR_EVERY(1000) << "timer_scale_run: timeout-" << index
                       << " ran in state " << static_cast<int>(state)
                       << " (3: fired already, 4: cancelled, 5: retired)";
    return;
  }
  (state == kAwaitingAnswer ? fired_before_answer_ : fired_unanswered_)
      .fetch_add(1, std::memory_order_relaxed);
  live_.fetch_sub(1, std::memory_order_relaxed);
  if (window_->Contains(event.actual_time)) {
    lateness_.Record(event.actual_time - deadline);
  }
  Requester& owner =
      *requesters_[index % static_cast<uint32_t>(options_.threads)];
  MutexLock lock(&owner.mu);
  owner.fired.push_back(index);
}

void TimeoutLoad::Stop() {
  if (stopped_ || slots_ == nullptr) return;
  stopped_ = true;
  stopping_.store(true);
  for (auto& r : requesters_) {
    if (r->thread.joinable()) r->thread.join();
  }
  const Instant now = clock_->Now();
  // Nobody answers from here on, so every armed timeout would fire at its
  // deadline (some 10^5 per second at the default sizes) while this loop
  // stops them one by one. Stopping them in deadline order stays ahead of
  // the deadlines, so the end of the run does not flood the scheduler.
  std::vector<std::pair<int64_t, uint32_t>> order;
  order.reserve(static_cast<size_t>(options_.timeouts));
  for (int64_t i = 0; i < options_.timeouts; ++i) {
    const Slot& s = slots_[i];
    if (s.timer == nullptr) break;  // CreateTimers() failed here
    const int64_t deadline_ns =
        s.armed_at_ns.load(std::memory_order_relaxed) +
        absl::ToInt64Nanoseconds(s.delay);
    order.emplace_back(deadline_ns, static_cast<uint32_t>(i));
  }
  std::sort(order.begin(), order.end());
  uint64_t lost = 0;
  uint64_t withdrawn = 0;
  uint64_t timer_early = 0;
  uint64_t refusals = 0;
  for (const auto& [deadline_ns, i] : order) {
    Slot& s = slots_[i];
    s.timer->Stop();  // synchronous: no call for this slot after this
    const uint8_t state = s.state.exchange(kRetired);
    if (state == kAwaitingAnswer || state == kAwaitingTimeout) {
      ++withdrawn;
      live_.fetch_sub(1, std::memory_order_relaxed);
      const Instant deadline = FromNs(deadline_ns);
      if (state == kAwaitingTimeout && deadline + kLostAfter < now) {
        ++lost;
        AERROR_EVERY(1000) << "timer_scale_run: timeout-" << i
                           << " never fired; deadline " << deadline
                           << ", now " << now;
      }
    }
    const TimerStatistics st = s.timer->GetStatistics();
    timer_early += st.early_fires;
    refusals += st.dispatch_refusals;
  }
  lost_.store(lost);
  withdrawn_at_end_.store(withdrawn);
  timer_early_fires_.store(timer_early);
  timer_dispatch_refusals_.store(refusals);
}

absl::Duration TimeoutLoad::TakeMaxLag() {
  return absl::Nanoseconds(max_lag_ns_.exchange(0));
}

TimeoutCounters TimeoutLoad::counters() const {
  TimeoutCounters c;
  c.armed = armed_.load();
  c.cancelled = cancelled_.load();
  c.fired_unanswered = fired_unanswered_.load();
  c.fired_before_answer = fired_before_answer_.load();
  c.fired = c.fired_unanswered + c.fired_before_answer;
  c.schedule_errors = schedule_errors_.load();
  c.live = live_.load();
  c.early = early_.load();
  c.fired_after_cancel = fired_after_cancel_.load();
  c.duplicate = duplicate_.load();
  c.lost = lost_.load();
  c.timer_early_fires = timer_early_fires_.load();
  c.timer_dispatch_refusals = timer_dispatch_refusals_.load();
  c.withdrawn_at_end = withdrawn_at_end_.load();
  c.answers_clamped = answers_clamped_.load();
  return c;
}

}  // namespace scale
}  // namespace cyber
