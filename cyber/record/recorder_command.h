// cyber_recorder's subcommands, in Cyber RT's spellings, over Recorder,
// Player, RecordingWriter and McapRecover:
//
//   record  -a | -c CH... [-k CH...] [-o FILE.mcap] [-i SECONDS] [-m MB]
//           [--compression zstd|lz4|none] [--duration SECONDS]
//           [--queue_bytes N]
//   play    -f FILE [-r RATE] [-b BEGIN] [-e END] [-s SECONDS] [-l]
//           [-d SECONDS] [-c CH...] [-k CH...] [--wait_for_readers SECONDS]
//   info    FILE (or -f FILE)
//   split   -f FILE -o OUT.mcap [-b BEGIN] [-e END] [-c CH...] [-k CH...]
//           [--compression zstd|lz4|none]
//   recover -f FILE -o OUT.mcap
//
// BEGIN and END are seconds from the recording's first message ("12.5")
// or an RFC 3339 time ("2026-11-28T10:00:00Z"). Flags may repeat (-c a -c
// b) and come in any order; an unknown flag, a missing value or a bad
// number is an InvalidArgument naming it.
//
// record and play need the domain (RunTool joins it); info, split and
// recover read files only.
//
// Threads: called from main().

#ifndef CYBER_RECORD_RECORDER_COMMAND_H_
#define CYBER_RECORD_RECORDER_COMMAND_H_

#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cyber/graph/domain_graph.h"
#include "cyber/inspect/channel_command.h"  // StopFn

namespace cyber {
namespace record {

extern const char kRecorderUsage[];

struct RecorderArgs {
  std::string command;  // record, play, info, split, recover
  std::string file;     // -f, or info's operand
  std::string output;   // -o
  bool all = false;
  std::vector<std::string> channels, exclude;
  std::optional<absl::Duration> split_duration;  // -i
  uint64_t split_bytes = 0;                      // -m (MiB)
  std::string compression = "zstd";
  std::optional<absl::Duration> duration;  // record --duration
  uint64_t queue_bytes = uint64_t{512} << 20;  // record --queue_bytes: what it may hold
  double rate = 1.0;
  std::optional<std::string> begin, end;  // -b, -e as typed
  absl::Duration start_offset = absl::ZeroDuration();
  bool loop = false;
  absl::Duration delay = absl::ZeroDuration();
  absl::Duration wait_for_readers = absl::Seconds(3);
  bool keys = true;  // play: read keys when stdin is a terminal
};

absl::StatusOr<RecorderArgs> ParseRecorderArgs(const std::vector<std::string>& args);

bool NeedsDomain(const RecorderArgs& args);

// record, play: on the joined domain until done or `stop`.
absl::Status RunOnDomain(const RecorderArgs& args, graph::DomainGraph& graph, std::ostream& out,
                         const inspect::StopFn& stop);
// info, split, recover.
absl::Status RunOnFiles(const RecorderArgs& args, std::ostream& out);

// BEGIN/END as typed, against a recording whose first message is at
// `first_ns`: ns since the epoch. InvalidArgument naming `flag`.
absl::StatusOr<uint64_t> ParseRecordingTime(const std::string& flag, const std::string& text,
                                            uint64_t first_ns);

}  // namespace record
}  // namespace cyber

#endif  // CYBER_RECORD_RECORDER_COMMAND_H_
