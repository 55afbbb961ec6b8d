#include "tests/transport_bench/roles.h"

#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tests/transport_bench/child_side.h"
#include "tests/transport_bench/line_channel.h"
#include "tests/transport_bench/receive_log.h"
#include "tests/transport_bench/wire_stamp.h"

namespace cyber {
namespace transport_bench {
namespace {

constexpr absl::Duration kWarmUpEvery = absl::Milliseconds(10);
constexpr int64_t kSkipAfterPeriods = 10;
constexpr int64_t kStdinCheckEveryNs = 100'000'000;  // a sending source looks at stdin

// Sleeps until `deadline_ns` on CLOCK_MONOTONIC.
void SleepUntil(int64_t deadline_ns) {
  timespec ts;
  ts.tv_sec = deadline_ns / 1'000'000'000;
  ts.tv_nsec = deadline_ns % 1'000'000'000;
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
    if (StopRequested()) return;
  }
}

// Reads stdin until EOF (or a stop signal): the orchestrator's "exit".
void WaitForEof(LineReader* in) {
  while (!in->eof() && !StopRequested()) in->ReadLine(absl::Milliseconds(100));
}

}  // namespace

int RunSink(const SinkRole& role) {
  LineReader in(STDIN_FILENO);
  ReceiveLog log(role.max_samples);
  absl::StatusOr<std::unique_ptr<MessageSink>> sink = StartSink(role.path, &log);
  if (!sink.ok()) {
    Say(absl::StrCat("error ", sink.status().ToString()));
    return 1;
  }
  Say(absl::StrCat("ready ", (*sink)->address()));
  while (log.warm_ups() < role.warm_up_messages && log.received() == 0) {
    in.ReadLine(absl::Milliseconds(1));
    if (in.eof() || StopRequested()) return 0;
  }
  const ReceiveSummary first = log.Summarize();
  Say(absl::StrCat("warm first_arrival_ns=", first.first_arrival_ns,
                   " first_seq=", first.first_seq));
  int64_t expect = -1;
  while (expect < 0) {
    std::optional<std::string> line = in.ReadLine(absl::Milliseconds(100));
    if (in.eof() || StopRequested()) return 0;
    if (line.has_value() && absl::StartsWith(*line, "report")) {
      expect = FieldInt(ParseFields(*line), "expect", 0);
    }
  }
  // Until everything expected arrived, or nothing did for `quiet`.
  uint64_t seen = log.received();
  absl::Time last_progress = absl::Now();
  while (log.received() < static_cast<uint64_t>(expect) &&
         absl::Now() - last_progress < role.quiet && !StopRequested()) {
    absl::SleepFor(absl::Milliseconds(5));
    if (log.received() != seen) {
      seen = log.received();
      last_progress = absl::Now();
    }
  }
  Say(absl::StrCat("result ", log.Summarize().ToFields(), " ", (*sink)->Counters()));
  WaitForEof(&in);
  return 0;
}

int RunSource(const SourceRole& role) {
  LineReader in(STDIN_FILENO);
  absl::StatusOr<std::unique_ptr<MessageSource>> made = StartSource(role.path);
  if (!made.ok()) {
    Say(absl::StrCat("error ", made.status().ToString()));
    return 1;
  }
  MessageSource& source = **made;
  Say("ready");
  if (role.wait_for_go) {
    for (;;) {
      source.Send(0);
      std::optional<std::string> line = in.ReadLine(kWarmUpEvery);
      if (in.eof() || StopRequested()) return 0;
      if (line.has_value() && *line == "go") break;
    }
  }
  const int64_t period_ns =
      role.rate_hz > 0 ? static_cast<int64_t>(1e9 / role.rate_hz) : 0;
  const int64_t progress_ns = absl::ToInt64Nanoseconds(role.progress_every);
  const int64_t start = MonotonicNs();
  const int64_t end = start + absl::ToInt64Nanoseconds(role.duration);
  int64_t next = start;
  int64_t next_progress = progress_ns > 0 ? start + progress_ns : INT64_MAX;
  int64_t next_stdin_check = start;
  uint64_t seq = 0;
  uint64_t refused = 0;
  uint64_t late_slots = 0;
  int64_t now = start;
  while (now < end && !StopRequested()) {
    if (period_ns > 0) {
      if (now - next > kSkipAfterPeriods * period_ns) {
        const int64_t skipped = (now - next) / period_ns;
        late_slots += static_cast<uint64_t>(skipped);
        next += skipped * period_ns;
      }
      SleepUntil(next);
      next += period_ns;
    }
    if (!source.Send(++seq)) ++refused;
    now = MonotonicNs();
    if (now >= next_progress) {
      next_progress += progress_ns;
      Say(absl::StrCat("progress attempted=", seq));
    }
    if (now >= next_stdin_check) {  // an orchestrator gone, or one asking to stop
      next_stdin_check = now + kStdinCheckEveryNs;
      in.ReadLine(absl::ZeroDuration());
      if (in.eof()) return 0;
    }
  }
  Say(absl::StrCat("sent attempted=", seq, " sent=", seq - refused, " refused=", refused,
                   " last_seq=", seq, " elapsed_ns=", now - start,
                   " late_slots=", late_slots, " ", source.Counters()));
  WaitForEof(&in);
  return 0;
}

}  // namespace transport_bench
}  // namespace cyber
