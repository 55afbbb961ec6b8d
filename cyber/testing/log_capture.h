// Internal to this repository: not part of the API (docs/api.md lists the
// API headers); its Bazel target is visible only inside this repository.
//
// LogCapture: the glog lines of one severity logged while it exists, for a
// test that asserts what the code under test said (a warning naming the
// timer, an error with its running counts, and that nothing else was said).
//
// Why a glog LogSink and not captured stderr: a sink sees each message as
// the code wrote it, without the prefix (time, thread, file:line) and
// whatever --logtostderr or --minloglevel make of it, so a test can compare
// whole lines exactly; and it sees lines from every thread as they are
// logged, so a multi-threaded test can wait for one instead of sleeping.
//
//   cyber::test::LogCapture warnings;               // WARNING lines
//   cyber::test::LogCapture errors(google::GLOG_ERROR);
//   ... code that logs ...
//   EXPECT_EQ(warnings.Containing("timer \"imu_poll\"").size(), 1u);
//   // Another thread logs it, eventually:
//   EXPECT_GE(warnings.WaitFor("Stop() has waited", 2).size(), 2u);
//
// Only the exact severity is kept: a test of WARNING lines is not disturbed
// by an ERROR logged beside them, and vice versa.
//
// Namespace cyber::test (as cyber/common/test_waits.h), not cyber::testing:
// tests inside namespace cyber write gtest's `testing::`, which a
// cyber::testing would hide.
//
// Threads: glog calls the sink on whichever thread logs; every method may
// be called from any thread. Lines are kept in the order they were logged.
// Test-only (//cyber/testing:log_capture is testonly).

#ifndef CYBER_TESTING_LOG_CAPTURE_H_
#define CYBER_TESTING_LOG_CAPTURE_H_

#include <chrono>
#include <cstddef>
#include <ctime>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "cyber/common/mutex.h"
#include "glog/logging.h"

namespace cyber {
namespace test {

class LogCapture : public google::LogSink {
 public:
  // How long WaitFor() waits at most: it only bounds a failing test (a
  // passing one returns as soon as the lines are there).
  static constexpr std::chrono::seconds kWaitLimit{30};

  // Collects the lines logged with exactly `severity` from now until it is
  // destroyed.
  explicit LogCapture(google::LogSeverity severity = google::GLOG_WARNING);
  ~LogCapture() override;
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  // Every line collected so far, oldest first.
  std::vector<std::string> lines() const;

  // The lines collected so far that contain `part`, oldest first.
  std::vector<std::string> Containing(absl::string_view part) const;

  // Containing(part) once it has at least `n` lines, or, if that does not
  // happen within kWaitLimit, as it is then (fewer than `n`: the caller's
  // assertion fails instead of the test hanging).
  std::vector<std::string> WaitFor(absl::string_view part, size_t n) const;

  // google::LogSink: called by glog, on the logging thread.
  void send(google::LogSeverity severity, const char* full_filename,
            const char* base_filename, int line, const struct ::tm* tm_time,
            const char* message, size_t message_len) override;

 private:
  std::vector<std::string> ContainingLocked(absl::string_view part) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const google::LogSeverity severity_;
  mutable Mutex mu_;
  mutable CondVar added_;  // signalled when a line is added
  // mu_ protects the following state.
  std::vector<std::string> lines_ ABSL_GUARDED_BY(mu_);
};

}  // namespace test
}  // namespace cyber

#endif  // CYBER_TESTING_LOG_CAPTURE_H_
