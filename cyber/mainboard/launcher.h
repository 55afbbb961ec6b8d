// Launcher: turns graph (.dag) files into running components.
//
// Why a class apart from main(): the example tests and the mainboard binary
// launch graphs the same way, and every check happens before anything runs.
// Load() parses every graph, checks them together (duplicate names across
// files), and resolves every class — among the classes linked into this
// binary, or by dlopen()ing the module's `module_library` — so a bad graph
// (syntax error, unknown class, interval 0 or too large, missing file,
// duplicate name) is refused with a message naming file, line and field,
// before a single component exists. A `module_library` whose classes are all
// linked in already is not loaded; if it could not be (the file is missing,
// unreadable or not an ELF file) that is a warning naming file:line, not an
// error (it is how tests link their components).
//
// Order: Start() creates and initializes the components in file order — the
// files in the order given, and in each file the `components` and
// `timer_components` entries in the order they appear, whichever their kind.
// If one fails, those already started are shut down again. Stop() shuts them
// down in reverse order, each synchronously.
//
// Graph mistakes that are not errors are warnings: once every component is
// initialized (writers are created in Init()), Start() looks at the channels
// the components use and warns (AWARN) about every channel that one of them
// writes and nobody reads, or reads and nobody writes — typically a typo in
// a channel name. ChannelWarnings() keeps those messages for a summary.
//
// Threads: one thread drives a Launcher; Stats(), FinalStats() and
// ChannelWarnings() may be called from any.

#ifndef CYBER_MAINBOARD_LAUNCHER_H_
#define CYBER_MAINBOARD_LAUNCHER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "cyber/common/mutex.h"
#include "cyber/component/component_base.h"
#include "cyber/dag/dag_config.h"

namespace cyber {

class Launcher {
 public:
  explicit Launcher(ComponentContext context = ComponentContext());
  ~Launcher();  // Stop()
  Launcher(const Launcher&) = delete;
  Launcher& operator=(const Launcher&) = delete;

  absl::Status Load(const std::vector<std::string>& dag_paths);
  absl::Status Start();
  void Stop();
  // Stops one running component as Stop() does (its timer or readers
  // synchronously, then Clear()): fault injection in graph tests ("the GPS
  // driver dies at t"). It stays listed in Stats() with its counts, and
  // Stop() later skips it. Not concurrently with Stop().
  // Errors: NotFound naming the component and the running ones.
  absl::Status StopComponent(const std::string& name);

  // The running components' statistics, in start order (empty when none
  // runs). A call in flight when this is taken is not counted yet.
  std::vector<ComponentStats> Stats() const;
  // The statistics of the components the last Stop() stopped, taken after
  // each had stopped (so every call they made is counted), in start order.
  // Empty before the first Stop() with components to stop.
  std::vector<ComponentStats> FinalStats() const;
  // One message per channel that the components of the last successful
  // Start() write and nobody reads, or read and nobody writes (each also
  // logged with AWARN at start), sorted by channel. Empty if none.
  std::vector<std::string> ChannelWarnings() const;
  const std::vector<dag::Graph>& graphs() const { return graphs_; }

  // One line, for a terminal: "imu 100.0/100 Hz p99 0.06 ms ovr 0 | ...".
  static std::string StatusLine(const std::vector<ComponentStats>& stats);
  // A table with a row per component.
  static std::string SummaryTable(const std::vector<ComponentStats>& stats);

 private:
  absl::Status ResolveClasses();
  // Messages for the unmatched channels of the running components.
  std::vector<std::string> CheckChannels() const;

  const ComponentContext context_;
  std::vector<dag::Graph> graphs_;
  bool loaded_ = false;
  // mu_ protects the following state.
  mutable Mutex mu_;
  std::vector<std::unique_ptr<ComponentBase>> components_ ABSL_GUARDED_BY(mu_);
  std::vector<ComponentStats> final_stats_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> channel_warnings_ ABSL_GUARDED_BY(mu_);
};

}  // namespace cyber

#endif  // CYBER_MAINBOARD_LAUNCHER_H_
