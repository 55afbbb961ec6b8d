// LineChannel: the line protocol between a benchmark's orchestrating
// process and its child processes — lines read from a file descriptor with
// a deadline, and "key=value" fields in them.
//
// Why lines on pipes: the children's stdin and stdout are all the two ends
// need (a child reports "ready", "warm", "result k=v ..."; the orchestrator
// says "go", "report ..."), and a child whose orchestrator died sees EOF on
// its stdin and exits cleanly, leaving no DDS shared memory behind.
//
// Threads: a LineReader is used by one thread.

#ifndef TESTS_TRANSPORT_BENCH_LINE_CHANNEL_H_
#define TESTS_TRANSPORT_BENCH_LINE_CHANNEL_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "absl/time/time.h"

namespace cyber {
namespace transport_bench {

class LineReader {
 public:
  // Reads `fd`; does not own it.
  explicit LineReader(int fd) : fd_(fd) {}

  // The next line without its newline; nullopt on EOF, error or when
  // `timeout` passes first.
  std::optional<std::string> ReadLine(absl::Duration timeout);
  // Lines until one starts with `prefix` (others are skipped: a library may
  // print on stdout too); nullopt as above.
  std::optional<std::string> WaitForLine(const std::string& prefix, absl::Duration timeout);
  bool eof() const { return eof_; }

 private:
  const int fd_;
  bool eof_ = false;
  std::string buffer_;
};

// Writes `line` and a newline to stdout and flushes.
void Say(const std::string& line);

// The "key=value" words of `line` (other words ignored).
std::map<std::string, std::string> ParseFields(const std::string& line);
// The field `key` as an integer; `fallback` when absent or malformed.
int64_t FieldInt(const std::map<std::string, std::string>& fields, const std::string& key,
                 int64_t fallback = -1);

}  // namespace transport_bench
}  // namespace cyber

#endif  // TESTS_TRANSPORT_BENCH_LINE_CHANNEL_H_
