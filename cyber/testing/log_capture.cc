#include "cyber/testing/log_capture.h"

namespace cyber {
namespace test {

constexpr std::chrono::seconds LogCapture::kWaitLimit;

LogCapture::LogCapture(google::LogSeverity severity) : severity_(severity) {
  google::AddLogSink(this);
}

LogCapture::~LogCapture() { google::RemoveLogSink(this); }

std::vector<std::string> LogCapture::lines() const {
  MutexLock lock(&mu_);
  return lines_;
}

std::vector<std::string> LogCapture::Containing(absl::string_view part) const {
  MutexLock lock(&mu_);
  return ContainingLocked(part);
}

std::vector<std::string> LogCapture::WaitFor(absl::string_view part, size_t n) const {
  const auto deadline = std::chrono::steady_clock::now() + kWaitLimit;
  MutexLock lock(&mu_);
  std::vector<std::string> found = ContainingLocked(part);
  while (found.size() < n && std::chrono::steady_clock::now() < deadline) {
    added_.WaitUntil(&mu_, deadline);
    found = ContainingLocked(part);
  }
  return found;
}

void LogCapture::send(google::LogSeverity severity, const char* /*full_filename*/,
                      const char* /*base_filename*/, int /*line*/,
                      const struct ::tm* /*tm_time*/, const char* message,
                      size_t message_len) {
  if (severity != severity_) return;
  MutexLock lock(&mu_);
  lines_.emplace_back(message, message_len);
  added_.SignalAll();
}

std::vector<std::string> LogCapture::ContainingLocked(absl::string_view part) const {
  std::vector<std::string> found;
  for (const std::string& line : lines_) {
    if (absl::string_view(line).find(part) != absl::string_view::npos) found.push_back(line);
  }
  return found;
}

}  // namespace test
}  // namespace cyber
