// Runs check_mcap.js (Foxglove's @mcap/core under Node) over a recording a
// test made: the reference reader, not ours, says whether the file is
// valid MCAP whose summary agrees with its data and whose messages decode
// with their schemas. Found through the test's runfiles and
// CYBER_NPM_MODULES (set by .bazelrc.generated).
//
// Threads: a free function; it runs a child process and waits for it.

#ifndef CYBER_RECORD_MCAP_TESTING_FOXGLOVE_MCAP_CHECK_H_
#define CYBER_RECORD_MCAP_TESTING_FOXGLOVE_MCAP_CHECK_H_

#include <string>

#include "absl/status/statusor.h"

namespace cyber {
namespace record {
namespace testing {

// The checker's "OK {json}" line, or Internal with its "FAIL: ..." output.
// `truncated`: the file's writer was killed; only complete records count.
absl::StatusOr<std::string> CheckWithFoxgloveMcap(const std::string& path,
                                                  bool truncated = false);

}  // namespace testing
}  // namespace record
}  // namespace cyber

#endif  // CYBER_RECORD_MCAP_TESTING_FOXGLOVE_MCAP_CHECK_H_
