// LoanInlet: a SharedBytes channel's receiving end in one process — turns a
// sample from another process (loan_reference.h) into a SharedBytes: inline
// bytes are copied out of the sample (it is valid only during the handler);
// a loan is pinned in the writer's segment and read in place, the pin held
// until the last reader drops the message.
//
// The doorbell. Given a `deliver` function, the inlet, once a segment's
// first reference has come through DDS, waits on that segment's doorbell
// (loan_segment.h) on a thread of its own and hands each later publish to
// `deliver` as soon as the writer rings, in publish order; the DDS samples
// of that segment then only confirm what was delivered (Resolve returns
// null for them). This takes a DDS round off every message (on this machine
// ~200 us p50 against a wake-up of ~50 us). Without `deliver` (a lockstep
// run, whose transport decides when each message is handed over), every
// message comes through Resolve, as DDS delivers it.
//
// A doorbell thread ends with the inlet (Stop), when its segment is let go
// (the inlet keeps the last 16 it mapped) or when its writer is gone. A
// reader that falls more than 64 publishes behind the ring, or whose slot
// was written again before it pinned it, counts the messages lost; it never
// reads one half-written.
//
// Why per channel: the segments a channel's readers map are its writers'.
//
// Threads: thread-safe. `deliver` runs on a doorbell thread and must not
// block (Reader::Deliver does not).

#ifndef CYBER_TRANSPORT_LOAN_LOAN_INLET_H_
#define CYBER_TRANSPORT_LOAN_LOAN_INLET_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cyber/common/mutex.h"
#include "cyber/transport/loan/loan_segment.h"
#include "cyber/transport/loan/shared_bytes.h"

namespace cyber {
namespace loan {

struct LoanInletStats {
  uint64_t loaned = 0;     // read in place, pinned by Resolve
  uint64_t doorbell = 0;   // read in place, handed over by a doorbell thread
  uint64_t confirmed = 0;  // DDS samples of what a doorbell handed over
  uint64_t inlined = 0;    // copied out of the sample
  uint64_t overwritten = 0;  // lost: the slot or ring entry was reused first
  uint64_t refused = 0;  // other errors (another host, no segment, bad reference)
};

class LoanInlet {
 public:
  using Deliver = std::function<void(std::shared_ptr<const SharedBytes>)>;

  // `deliver` null: no doorbell.
  LoanInlet(std::string channel, Deliver deliver = nullptr)
      : channel_(std::move(channel)), deliver_(std::move(deliver)) {}
  ~LoanInlet();  // Stop()
  LoanInlet(const LoanInlet&) = delete;
  LoanInlet& operator=(const LoanInlet&) = delete;

  // The message `wire` carries, for the caller to hand over; or null (OK)
  // when the inlet handed it over itself: with `deliver`, every loan (the
  // first of a segment here, then its doorbell thread). Errors name the channel and the reason (another host, a
  // segment that is gone, a reused slot: DataLoss, a malformed reference).
  absl::StatusOr<std::shared_ptr<const SharedBytes>> Resolve(absl::string_view wire);
  // Ends the doorbell threads (waits for them) and `deliver`'s use: from
  // then on Resolve returns every message for its caller to hand over. Not
  // from `deliver`.
  void Stop();
  LoanInletStats stats() const;

 private:
  struct Watched {
    std::shared_ptr<LoanMapping> mapping;
    std::thread thread;  // not joinable: no doorbell thread
    std::atomic<bool> stop{false};
    std::atomic<bool> ended{false};
  };

  absl::StatusOr<std::shared_ptr<Watched>> WatchedFor(const std::string& segment);
  void Watch(std::shared_ptr<Watched> watched, LoanReference first);
  static void End(const std::shared_ptr<Watched>& watched);
  std::shared_ptr<const SharedBytes> PinToMessage(const std::shared_ptr<LoanMapping>& mapping,
                                                  LoanReference reference,
                                                  absl::Status* error);

  const std::string channel_;
  const Deliver deliver_;
  mutable Mutex mu_;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  std::deque<std::shared_ptr<Watched>> mappings_ ABSL_GUARDED_BY(mu_);
  LoanInletStats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace loan
}  // namespace cyber

#endif  // CYBER_TRANSPORT_LOAN_LOAN_INLET_H_
