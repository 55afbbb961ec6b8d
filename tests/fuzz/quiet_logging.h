// QuietLogging(): the fuzzers drive every error path on purpose, thousands
// of times a second; each would log an AERROR line. This raises glog's
// threshold to FATAL (a broken invariant, ACHECK, still prints and aborts),
// unless FUZZ_VERBOSE is set in the environment, for reading a replay.
//
// Threads: call once, from LLVMFuzzerInitialize, before other threads log.

#ifndef TESTS_FUZZ_QUIET_LOGGING_H_
#define TESTS_FUZZ_QUIET_LOGGING_H_

#include <cstdlib>

#include "glog/logging.h"

namespace cyber {
namespace fuzz {

// True when FUZZ_VERBOSE is set: fuzzers may then also print a summary of
// what each input did (to check that a seed does what it was written for).
inline bool Verbose() { return std::getenv("FUZZ_VERBOSE") != nullptr; }

inline void QuietLogging() {
  if (Verbose()) return;
  FLAGS_minloglevel = google::GLOG_FATAL;
}

}  // namespace fuzz
}  // namespace cyber

#endif  // TESTS_FUZZ_QUIET_LOGGING_H_
