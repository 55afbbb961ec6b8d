// Duration flags of the scale tools ("60s", "500ms", "2m", or plain seconds):
// gflags has no absl::Duration type, so they are strings parsed here, with
// an error that names the tool, the flag and the text.

#ifndef TESTS_SCALE_DURATION_FLAG_H_
#define TESTS_SCALE_DURATION_FLAG_H_

#include <string>

#include "absl/time/time.h"

namespace cyber {
namespace scale {

// Parses `text` (the value of --`flag` of `tool`) into `*out`; on failure
// logs the error (AERROR) and returns false.
bool ParseDurationFlag(const char* tool, const char* flag,
                       const std::string& text, absl::Duration* out);

}  // namespace scale
}  // namespace cyber

#endif  // TESTS_SCALE_DURATION_FLAG_H_
