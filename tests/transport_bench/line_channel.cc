#include "tests/transport_bench/line_channel.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"

namespace cyber {
namespace transport_bench {

std::optional<std::string> LineReader::ReadLine(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  for (;;) {
    const size_t nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return line;
    }
    if (eof_) return std::nullopt;  // an unterminated last line is dropped
    // Polls at least once, so a zero timeout still reads what is there.
    const absl::Duration left = std::max(deadline - absl::Now(), absl::ZeroDuration());
    pollfd p{fd_, POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(absl::Ceil(left, absl::Milliseconds(1)))));
    if (ready < 0 && errno == EINTR) {
      if (left == absl::ZeroDuration()) return std::nullopt;
      continue;
    }
    if (ready < 0) {
      eof_ = true;
      continue;
    }
    if (ready == 0) return std::nullopt;  // poll waited out the deadline
    char buf[4096];
    const ssize_t n = read(fd_, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      eof_ = true;
      continue;
    }
    buffer_.append(buf, static_cast<size_t>(n));
  }
}

std::optional<std::string> LineReader::WaitForLine(const std::string& prefix,
                                                   absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  for (;;) {
    std::optional<std::string> line = ReadLine(deadline - absl::Now());
    if (!line.has_value()) return std::nullopt;
    if (absl::StartsWith(*line, prefix)) return line;
  }
}

void Say(const std::string& line) {
  std::fputs(line.c_str(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

std::map<std::string, std::string> ParseFields(const std::string& line) {
  std::map<std::string, std::string> fields;
  for (absl::string_view word : absl::StrSplit(line, ' ', absl::SkipEmpty())) {
    const size_t eq = word.find('=');
    if (eq == absl::string_view::npos) continue;
    fields[std::string(word.substr(0, eq))] = std::string(word.substr(eq + 1));
  }
  return fields;
}

int64_t FieldInt(const std::map<std::string, std::string>& fields, const std::string& key,
                 int64_t fallback) {
  auto it = fields.find(key);
  int64_t v = 0;
  if (it == fields.end() || !absl::SimpleAtoi(it->second, &v)) return fallback;
  return v;
}

}  // namespace transport_bench
}  // namespace cyber
