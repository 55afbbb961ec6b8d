// LoanInlet: a SharedBytes channel's receiving end in one process — turns a
// sample from another process (loan_reference.h) into a SharedBytes: inline
// bytes are copied out of the sample (it is valid only during the handler);
// a loan is pinned in the writer's segment and read in place, the pin held
// until the last reader drops the message.
//
// Why per channel: the segments a channel's readers map are its writers'.
// The inlet keeps the last 16 segments it mapped open (a writer that
// restarts brings a new one; a message still held keeps its own segment
// mapped after the inlet lets go of it).
//
// Threads: thread-safe (the transport calls it from its threads).

#ifndef CYBER_TRANSPORT_LOAN_LOAN_INLET_H_
#define CYBER_TRANSPORT_LOAN_LOAN_INLET_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cyber/common/mutex.h"
#include "cyber/transport/loan/loan_segment.h"
#include "cyber/transport/loan/shared_bytes.h"

namespace cyber {
namespace loan {

struct LoanInletStats {
  uint64_t loaned = 0;   // read in place
  uint64_t inlined = 0;  // copied out of the sample
  uint64_t overwritten = 0;  // the slot was reused before it was pinned
  uint64_t refused = 0;  // other errors (another host, no segment, bad reference)
};

class LoanInlet {
 public:
  explicit LoanInlet(std::string channel) : channel_(std::move(channel)) {}

  // Errors name the channel and the reason (another host, a segment that is
  // gone, a reused slot: DataLoss, a malformed reference).
  absl::StatusOr<std::shared_ptr<const SharedBytes>> Resolve(absl::string_view wire);
  LoanInletStats stats() const;

 private:
  absl::StatusOr<std::shared_ptr<LoanMapping>> MappingFor(const std::string& segment);

  const std::string channel_;
  mutable Mutex mu_;
  std::deque<std::shared_ptr<LoanMapping>> mappings_ ABSL_GUARDED_BY(mu_);
  LoanInletStats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace loan
}  // namespace cyber

#endif  // CYBER_TRANSPORT_LOAN_LOAN_INLET_H_
