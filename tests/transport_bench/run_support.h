// What both orchestrators (transport_bench, transport_soak) need around a
// run: duration flags and the machine's load.
//
// Threads: free functions.

#ifndef TESTS_TRANSPORT_BENCH_RUN_SUPPORT_H_
#define TESTS_TRANSPORT_BENCH_RUN_SUPPORT_H_

#include <string>

#include "absl/time/time.h"

namespace cyber {
namespace transport_bench {

// `text` ("10s", "500ms", "10m") as a positive duration; otherwise prints
// an error naming `tool`, --`flag` and the text, and exits with status 2.
absl::Duration PositiveDurationFlag(const char* tool, const char* flag, const std::string& text);

// The 1, 5 and 15 minute load averages ("0.51 1.59 2.78").
std::string LoadAverage();

}  // namespace transport_bench
}  // namespace cyber

#endif  // TESTS_TRANSPORT_BENCH_RUN_SUPPORT_H_
