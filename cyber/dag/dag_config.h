// Graph (.dag) files: which module libraries the launcher loads and which
// components it creates from them, read from Cyber RT dag files.
//
// Why plain structs: the launcher and the components should not see
// protobuf. The schema (dag.proto) exists so that dag files written for
// Cyber RT load unchanged; this layer parses a file once, checks every value,
// and hands out types with meaning (an absl::Duration interval, resolved file
// paths) instead of raw messages.
//
// Why strict: a graph is read once at start-up, and a mistake in it is
// cheapest to fix right then. Every problem is an error whose message starts
// with "file:line:column:" and names the field and the value, e.g.
//   dags/perception.dag:12:13: timer component "lidar_poll": interval 0
//   must be positive
// Nothing is clamped or skipped. Errors are returned, not logged: the
// caller shows each once (mainboard prints it; cyber::GraphTest logs it).
// What is checked:
//   - syntax, unknown fields and unknown enum values (protobuf's message);
//   - at least one module_config, and every module has at least one
//     component or timer component;
//   - every component has a non-empty class_name and config.name, and names
//     are unique (timer or not) within a file; CheckGraphs() extends this
//     across the files a launcher loads together;
//   - a timer component's interval is set and positive: exactly the
//     periods a Timer accepts (1 ms runs at 1 kHz exactly), checked and
//     worded by the same function (timer/period_rules.h);
//   - a reader has a non-empty channel and a pending_queue_size of at least
//     1 (a component without readers is allowed);
//   - every unread_outputs (remote_inputs) entry is a non-empty channel
//     name, listed once per component (whether the component writes
//     (reads) it is the launcher's check, once it runs:
//     cyber/mainboard/launcher.h); every remote_services entry likewise a
//     service name (whether the component calls it: the launcher's check);
//   - config_file_path and flag_file_path, when non-empty, name existing
//     regular files (NotFound otherwise).
// What is not checked here: module_library (kept as written; the launcher
// decides whether to dlopen it) and whether a class_name is registered
// (only the launcher knows, after loading the library).
//
// Where config_file_path / flag_file_path are looked up, in this order (the
// first existing regular file wins):
//   1. an absolute path: as written, nowhere else;
//   2. the current directory: under `bazel run` and `bazel test`, the
//      workspace root in the binary's runfiles (files given as `data`);
//   3. the directory of the dag file (`source`);
//   4. $BUILD_WORKING_DIRECTORY when set: the directory `bazel run` was
//      typed in, so a path relative to the user's shell is found too.
// The error lists every path tried, each with its place. The struct holds
// the absolute path that was found, so a later chdir does not change what
// it names. An empty path means "not given", as in Cyber RT.
//
// Locations (`where`) are those of the block's field name, e.g. the line of
// `components {`. If a field is written with list syntax (`components: [
// {...}, {...} ]`), protobuf keeps no position per element, and each
// element of that field is located at its first field instead.
//
// A reader's qos_profile (Cyber's field and enum names) becomes its
// ChannelQos between processes (cyber/transport/channel_qos.h): history,
// depth (at least 1), reliability and durability map one to one, as does
// data_sharing_max_bytes (ours, not Cyber's); mps is accepted and ignored.
// Without qos_profile, ChannelQos's defaults.
//
// Example (no threads, no files):
//   absl::StatusOr<Graph> g = ParseGraph(R"(
//       module_config {
//         module_library: "libplanning.so"
//         timer_components {
//           class_name: "Planner"
//           config { name: "planner" interval: 100 }
//         }
//       })", "inline.dag");
//   // g->modules[0].timer_components[0].interval == absl::Milliseconds(100)
//
// Threads: every function here is reentrant and may be called from any
// thread; nothing is shared. ParseGraph and LoadGraphFile read the current
// directory and $BUILD_WORKING_DIRECTORY (for relative paths), so they race
// with a concurrent chdir or setenv.

#ifndef CYBER_DAG_DAG_CONFIG_H_
#define CYBER_DAG_DAG_CONFIG_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cyber/transport/channel_qos.h"
#include "absl/time/time.h"

namespace cyber {
namespace dag {

// A place in a dag file. line and column are 1-based; 0 means unknown.
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;

  // "file:line:column", or "file" when the line is unknown.
  std::string ToString() const;
};

struct ReaderConfig {
  std::string channel;  // non-empty
  size_t pending_queue_size = 1;  // >= 1
  ChannelQos qos;  // between processes
  SourceLocation where;  // of the `readers` block
};

// A component driven by messages on its readers' channels.
struct ComponentSpec {
  std::string class_name;  // non-empty; not checked against any registry
  std::string name;        // non-empty, unique across the checked graphs
  std::vector<ReaderConfig> readers;  // may be empty
  // Channels written on purpose with no reader in the graph (dag.proto):
  // non-empty, each once, in file order.
  std::vector<std::string> unread_outputs;
  // Channels read that another process writes (dag.proto): likewise.
  std::vector<std::string> remote_inputs;
  // Services called that another process serves (dag.proto): likewise.
  std::vector<std::string> remote_services;
  std::string config_file_path;  // empty, or an existing file (resolved)
  std::string flag_file_path;    // empty, or an existing file (resolved)
  SourceLocation where;          // of the `components` block
};

// A component driven by a periodic timer.
struct TimerComponentSpec {
  std::string class_name;
  std::string name;
  absl::Duration interval;  // > 0 (whole milliseconds)
  std::vector<std::string> unread_outputs;  // as in ComponentSpec
  std::vector<std::string> remote_inputs;   // as in ComponentSpec
  std::vector<std::string> remote_services;  // as in ComponentSpec
  std::string config_file_path;
  std::string flag_file_path;
  SourceLocation where;  // of the `timer_components` block
};

// One module_config: a library and the components created from it, in file
// order. At least one component or timer component.
struct ModuleSpec {
  std::string module_library;  // as written (possibly empty)
  SourceLocation where;        // of the `module_config` block
  std::vector<ComponentSpec> components;
  std::vector<TimerComponentSpec> timer_components;
};

// One dag file: at least one module, in file order.
struct Graph {
  std::string path;  // the `source` / path it was read from
  std::vector<ModuleSpec> modules;
};


// Parses protobuf text in Cyber RT's dag format and validates it. `source`
// names the text in errors and is the dag file's path for resolving relative
// file paths (its directory; "." if it has none).
// Errors: InvalidArgument; NotFound for a missing config_file_path or
// flag_file_path (naming the field, the value and every place tried).
absl::StatusOr<Graph> ParseGraph(const std::string& text,
                                 const std::string& source);

// Reads the dag file at `path` and parses it as above. Errors: NotFound for a
// missing file, other read failures by errno (PermissionDenied, ...), each
// naming the path; then as ParseGraph.
absl::StatusOr<Graph> LoadGraphFile(const std::string& path);

// Checks what no single file can: that component names (timer or not) are
// unique across all of `graphs`, as the launcher runs them in one process.
// Errors: InvalidArgument at the later definition, naming the name and both
// locations.
absl::Status CheckGraphs(const std::vector<Graph>& graphs);

}  // namespace dag
}  // namespace cyber

#endif  // CYBER_DAG_DAG_CONFIG_H_
