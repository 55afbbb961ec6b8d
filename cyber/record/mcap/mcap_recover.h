// McapRecover: rewrites a recording whose writer did not close it (killed
// with -9, power lost) into a complete file: every complete record of the
// damaged file, in order, in new chunks, with message indexes, a summary
// and the footer. What was cut off is said, not guessed at.
//
// Threads: a free function.

#ifndef CYBER_RECORD_MCAP_MCAP_RECOVER_H_
#define CYBER_RECORD_MCAP_MCAP_RECOVER_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "cyber/record/mcap/mcap_writer.h"

namespace cyber {
namespace record {

struct RecoverReport {
  uint64_t messages = 0;
  uint64_t channels = 0;
  // Bytes of `in` that were kept and dropped (an incomplete last record).
  uint64_t bytes_kept = 0;
  uint64_t bytes_dropped = 0;
  std::optional<std::string> truncated;  // what was cut off, where
};

// Reads `in` (complete or not), writes `out`. NotFound / the OS's error
// naming the path; DataLoss when not even the header is readable.
absl::StatusOr<RecoverReport> McapRecover(const std::string& in, const std::string& out,
                                          const McapWriterOptions& options);

}  // namespace record
}  // namespace cyber

#endif  // CYBER_RECORD_MCAP_MCAP_RECOVER_H_
