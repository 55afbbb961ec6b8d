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
// Each publish is handed over once. A DDS sample only confirms a publish
// its segment's doorbell handles (one after the doorbell's first, published
// before the doorbell ended); any other sample is handed over by Resolve: one that DDS brings after the doorbell's first
// although published before it (two threads publishing on one writer), or
// one published after its doorbell ended. What a segment's doorbell handled
// is remembered after its mapping is let go (the last 256 segments), so a
// late sample never hands a publish over twice.
//
// A doorbell thread ends with the inlet (Stop), when its writer is gone, or
// when its segment's mapping is let go: the inlet maps about 16 segments
// and lets go of one whose writer is gone first, else the least recently
// used; that doorbell first hands over what was published until then (the
// sample that made room waits for it). A reader that
// falls more than 64 publishes behind the ring, or whose slot was written
// again before it pinned it, counts the messages lost; it never reads one
// half-written. A reference to a segment of another channel is refused;
// the refusal is remembered per segment (the last 16), so a writer that
// keeps sending on the wrong channel costs a lookup per sample, not a
// mapping.
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
#include <utility>

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
  uint64_t let_go = 0;   // segments unmapped to stay within 16 mapped
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
  // Ends the doorbell threads (waits for them; from `deliver` itself, the
  // calling one ends when `deliver` returns) and `deliver`'s use by them:
  // from then on Resolve returns every message for its caller to hand over
  // (a Resolve already running may still hand its own over). A publish a
  // sample confirmed just before and its doorbell had not reached is not
  // handed over: Stop is for the channel's end.
  void Stop();
  LoanInletStats stats() const;

 private:
  // One segment this inlet has seen: its mapping (while kept) and its
  // doorbell.
  struct Watched {
    explicit Watched(std::string name) : segment(std::move(name)) {}
    const std::string segment;
    // The inlet's mu_ guards `mapping` (null: let go, or not opened yet).
    std::shared_ptr<LoanMapping> mapping;
    // Nobody holds `mu` while waiting for the doorbell thread (which takes
    // it once, to say it ended): waits are on `ended_cv`.
    Mutex mu;
    CondVar ended_cv;
    // The publish the doorbell starts after (it handles every later one
    // while it runs); 0: no doorbell (yet).
    uint64_t start ABSL_GUARDED_BY(mu) = 0;
    bool started ABSL_GUARDED_BY(mu) = false;  // the thread was made
    bool ended ABSL_GUARDED_BY(mu) = false;    // ... and is done
    std::thread thread ABSL_GUARDED_BY(mu);  // until someone joins it
    std::shared_ptr<LoanMapping> rung ABSL_GUARDED_BY(mu);  // the thread's
    // The doorbell handled every publish in (start, through]; final once
    // `ended`.
    std::atomic<uint64_t> through{0};
    // Set under `mu`; `drain` never turns on once `stop` is set.
    std::atomic<bool> stop{false};
    std::atomic<bool> drain{false};  // hand over what is published first
    // A Resolve claimed `start` and has not started the thread yet: not let
    // go meanwhile (the publishes it confirms would have nobody).
    std::atomic<bool> starting{false};
    // The doorbell ended because its writer is gone: let go of first.
    std::atomic<bool> writer_gone{false};
  };

  // The segment's record (made if new) and its mapping (opened if let go).
  absl::StatusOr<std::pair<std::shared_ptr<Watched>, std::shared_ptr<LoanMapping>>> Find(
      const std::string& segment);
  void Watch(std::shared_ptr<Watched> watched, std::shared_ptr<LoanMapping> mapping,
             LoanReference first);
  // Asks `watched`'s doorbell to stop (after handing over what is
  // published by then, when `drain`); Join waits until it has (not when
  // called on the doorbell thread itself).
  static void Signal(const std::shared_ptr<Watched>& watched, bool drain);
  static void Join(const std::shared_ptr<Watched>& watched);
  std::shared_ptr<const SharedBytes> PinToMessage(const std::shared_ptr<LoanMapping>& mapping,
                                                  LoanReference reference,
                                                  absl::Status* error);

  const std::string channel_;
  const Deliver deliver_;
  mutable Mutex mu_;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  // Least recently used first; about 16 of them have a mapping (more for
  // a moment while one is let go, or while one is being started).
  std::deque<std::shared_ptr<Watched>> watched_ ABSL_GUARDED_BY(mu_);
  // Segments of another channel, and why they were refused; oldest first.
  // A segment's channel never changes (its name is never reused), so a
  // refusal stays true.
  static constexpr size_t kRefusedRemembered = 16;
  std::deque<std::pair<std::string, absl::Status>> refused_ ABSL_GUARDED_BY(mu_);
  LoanInletStats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace loan
}  // namespace cyber

#endif  // CYBER_TRANSPORT_LOAN_LOAN_INLET_H_
