// CommandLine: the argument parsing the three programs share, in Cyber
// RT's spellings — a subcommand, its operands and short or long flags in
// any order: `cyber_channel echo /sensor/imu -n 3 -f accel.x`,
// `cyber_service call /map/lookup 'x: 1' --timeout 2s` (also
// `--timeout=2s`).
//
// Why not gflags: gflags takes flags process-wide and before operands by
// convention, and rejects the subcommand-first order these tools have
// used for years; a table of the flags a subcommand takes is all that is
// needed, and an unknown one is an error naming it.
//
// Threads: pure functions.

#ifndef CYBER_INSPECT_COMMAND_LINE_H_
#define CYBER_INSPECT_COMMAND_LINE_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace cyber {
namespace inspect {

struct CommandLine {
  std::vector<std::string> operands;         // in order, the subcommand first
  std::map<std::string, std::string> values;  // "-n" -> "3"; a switch -> ""
  bool help = false;                          // -h or --help anywhere

  bool Has(const std::string& flag) const { return values.count(flag) > 0; }
};

// How long a subcommand waits for a name the user typed (a channel, node,
// service) that is not in the graph yet: its process's announcement may
// still be on its way on a loaded machine. Only an error waits that long.
inline constexpr absl::Duration kLookupPatience = absl::Seconds(1);

// `value_flags` take a value ("-n 3", "--timeout=1s"); `switches` none.
// InvalidArgument naming an unknown flag or a flag without its value.
absl::StatusOr<CommandLine> ParseCommandLine(const std::vector<std::string>& args,
                                             const std::set<std::string>& value_flags,
                                             const std::set<std::string>& switches);

// The value of `flag` as a count > 0 (or `fallback` when absent);
// InvalidArgument naming the flag and the value.
absl::StatusOr<int64_t> PositiveCount(const CommandLine& line, const std::string& flag,
                                      int64_t fallback);
// The value of `flag` as a duration ("1s", "250ms", or seconds "1.5") > 0.
absl::StatusOr<absl::Duration> PositiveDuration(const CommandLine& line, const std::string& flag,
                                                absl::Duration fallback);

}  // namespace inspect
}  // namespace cyber

#endif  // CYBER_INSPECT_COMMAND_LINE_H_
