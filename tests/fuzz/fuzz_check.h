// FUZZ_CHECK: the fuzzers' assertion. On failure it prints what was expected
// and what happened, then aborts, which libFuzzer reports as a crash and
// saves the input (and which fails the replay test, see fuzz_replay_main.cc).
//
//   FUZZ_CHECK(fired_at >= deadline) << "timer " << id << " fired early";
//
// Why not CHECK (glog) or gtest: the fuzzers turn glog's logging down to
// keep the expected error paths quiet, and a fuzz target has no test
// framework around it. Why abort and not exit: libFuzzer treats a deadly
// signal as a finding; an exit code it would not.
//
// Threads: may be used from any thread (each failure writes one message).

#ifndef TESTS_FUZZ_FUZZ_CHECK_H_
#define TESTS_FUZZ_FUZZ_CHECK_H_

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

namespace cyber {
namespace fuzz {

// Collects the message of one failed check; aborts when it goes away.
class CheckFailure {
 public:
  CheckFailure(const char* file, int line, const char* condition) {
    stream_ << file << ":" << line << ": FUZZ_CHECK failed: " << condition << ": ";
  }
  CheckFailure(const CheckFailure&) = delete;
  CheckFailure& operator=(const CheckFailure&) = delete;
  ~CheckFailure() {
    const std::string message = stream_.str();
    std::fprintf(stderr, "%s\n", message.c_str());
    std::fflush(stderr);
    std::abort();
  }
  std::ostream& stream() { return stream_; }

 private:
  std::ostringstream stream_;
};

// True if `message` starts with "<source>:<line>:<column>: " (line and
// column >= 1): the location every parser error of this project leads with
// (graph files, scheduler confs).
inline bool StartsWithLocation(const std::string& message,
                               const std::string& source) {
  if (message.compare(0, source.size(), source) != 0) return false;
  size_t i = source.size();
  for (int part = 0; part < 2; ++part) {
    if (i >= message.size() || message[i] != ':') return false;
    ++i;
    const size_t digits = i;
    while (i < message.size() && message[i] >= '0' && message[i] <= '9') ++i;
    if (i == digits || message[digits] == '0') return false;
  }
  return message.compare(i, 2, ": ") == 0;
}

}  // namespace fuzz
}  // namespace cyber

// A loop, not an if/else, so that `if (x) FUZZ_CHECK(y) << z;` nests as
// written; it never repeats, the failure aborts at the end of the statement.
#define FUZZ_CHECK(condition) \
  while (!(condition))        \
  ::cyber::fuzz::CheckFailure(__FILE__, __LINE__, #condition).stream()

#endif  // TESTS_FUZZ_FUZZ_CHECK_H_
