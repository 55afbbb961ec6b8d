// The timeout/watchdog graph (timeout_watchdog.dag): how robot modules use
// oneshot timers.
//
//   RequestClient (timer, 2 ms): sends 4 requests per call (2,000/s) on
//       /rpc/request and arms a 200 ms oneshot timeout per request; the
//       answer on /rpc/response cancels it. A timeout that fires means the
//       request was lost.
//   EchoServer (component, reads /rpc/request): answers every request except
//       each 10th one, which it "loses" on purpose.
//   Heartbeat (timer, 10 ms): publishes on /sensor/heartbeat, but goes quiet
//       for 300 ms at the start of every second (a simulated sensor outage).
//   Watchdog (component, reads /sensor/heartbeat): each heartbeat re-arms a
//       50 ms oneshot; when the channel goes quiet it fires once (publishing
//       a WatchdogAlarm on /watchdog/timeout), and re-arms when the
//       heartbeats come back.
//
// Counters are exposed for the example's test, which checks that every lost
// request timed out once and that no timeout ever ran after its cancellation
// (Stop()) had returned, or twice.

#ifndef EXAMPLES_TIMEOUT_WATCHDOG_WATCHDOG_COMPONENTS_H_
#define EXAMPLES_TIMEOUT_WATCHDOG_WATCHDOG_COMPONENTS_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>

#include "absl/base/thread_annotations.h"
#include "cyber/common/mutex.h"
#include "cyber/component/component.h"
#include "cyber/component/timer_component.h"
#include "timer/timer.h"

namespace timeout_watchdog {

struct Request {
  uint64_t id = 0;
};
struct Response {
  uint64_t id = 0;
};
struct Heartbeat {
  uint64_t seq = 0;
};
// Published by the Watchdog on /watchdog/timeout when the heartbeats stop.
struct WatchdogAlarm {
  uint64_t last_seq = 0;  // the last heartbeat seen (0: none yet)
};

inline constexpr int kRequestsPerCall = 4;
inline constexpr uint64_t kLostEvery = 10;  // the server drops id % 10 == 0
inline constexpr absl::Duration kRequestTimeout = absl::Milliseconds(200);
inline constexpr absl::Duration kWatchdogTimeout = absl::Milliseconds(50);

class RequestClient : public cyber::TimerComponent {
 public:
  bool Init() override;
  bool Proc() override;
  void Clear() override;

  // For the test.
  static std::atomic<uint64_t> sent;
  static std::atomic<uint64_t> answered;       // answer came, timeout cancelled
  static std::atomic<uint64_t> lost_timed_out; // a lost request's timeout fired
  static std::atomic<uint64_t> late_answers;   // answered after its timeout
                                               // fired (an overloaded machine)
  static std::atomic<uint64_t> raced;          // timeout fired while the answer
                                               // was cancelling it (both legal)
  static std::atomic<uint64_t> violations;     // fired after Stop() returned,
                                               // or fired twice: must be 0

 private:
  void OnResponse(uint64_t id);
  void OnTimeout(uint64_t id);

  std::shared_ptr<cyber::Writer<Request>> writer_;
  std::shared_ptr<cyber::Reader<Response>> reader_;
  uint64_t next_id_ = 0;
  cyber::Mutex mu_;
  // Outstanding requests and their timeout timers.
  std::map<uint64_t, std::unique_ptr<cyber::Timer>> pending_ ABSL_GUARDED_BY(mu_);
  // What happened to each request so far.
  enum class Fate { kPending, kCancelling, kCancelled, kTimedOut };
  std::map<uint64_t, Fate> fate_ ABSL_GUARDED_BY(mu_);
};

class EchoServer : public cyber::Component<Request> {
 public:
  bool Init() override;
  bool Proc(const std::shared_ptr<Request>& request) override;

 private:
  std::shared_ptr<cyber::Writer<Response>> writer_;
};

class HeartbeatSource : public cyber::TimerComponent {
 public:
  bool Init() override;
  bool Proc() override;

  static std::atomic<uint64_t> outages;  // quiet periods started

 private:
  std::shared_ptr<cyber::Writer<Heartbeat>> writer_;
  uint64_t seq_ = 0;
};

class Watchdog : public cyber::Component<Heartbeat> {
 public:
  bool Init() override;
  bool Proc(const std::shared_ptr<Heartbeat>& beat) override;
  void Clear() override;

  static std::atomic<uint64_t> fired;    // channel went quiet
  static std::atomic<uint64_t> rearmed;  // heartbeats came back after firing
  // Consecutive heartbeats (no outage between) received at least
  // kWatchdogTimeout apart: the machine held the source or the delivery up
  // that long, and the watchdog was right to fire.
  static std::atomic<uint64_t> stalls;

 private:
  std::unique_ptr<cyber::Timer> timer_;
  std::shared_ptr<cyber::Writer<WatchdogAlarm>> alarm_writer_;
  std::atomic<bool> quiet_{false};
  std::atomic<uint64_t> last_seq_{0};
  cyber::Instant last_receive_;  // Proc() only: calls never overlap
};

}  // namespace timeout_watchdog

#endif  // EXAMPLES_TIMEOUT_WATCHDOG_WATCHDOG_COMPONENTS_H_
