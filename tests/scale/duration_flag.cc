#include "tests/scale/duration_flag.h"

#include "absl/strings/numbers.h"
#include "cyber/common/log.h"

namespace cyber {
namespace scale {

bool ParseDurationFlag(const char* tool, const char* flag,
                       const std::string& text, absl::Duration* out) {
  if (absl::ParseDuration(text, out)) return true;
  double seconds = 0;
  if (absl::SimpleAtod(text, &seconds)) {
    *out = absl::Seconds(seconds);
    return true;
  }
  AERROR << tool << ": flag --" << flag << ": \"" << text
         << "\" is not a duration (try 60s, 500ms or 2m)";
  return false;
}

}  // namespace scale
}  // namespace cyber
