// Launcher: turns graph (.dag) files into running components.
//
// Why a class apart from main(): the example tests and the mainboard binary
// launch graphs the same way, and every check happens before anything runs.
// Load() parses every graph, checks them together (duplicate names across
// files), and resolves every class — among the classes linked into this
// binary, or by dlopen()ing the module's `module_library` — so a bad graph
// (syntax error, unknown class, interval 0 or too large, missing file,
// duplicate name) is refused with a message naming file, line and field,
// before a single component exists. Start() then creates and initializes the
// components in file order; if one fails, those already started are shut
// down again. Stop() shuts them down in reverse order, each synchronously.
//
// Threads: one thread drives a Launcher; Stats() may be called from any.

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

  std::vector<ComponentStats> Stats() const;
  const std::vector<dag::Graph>& graphs() const { return graphs_; }

  // One line, for a terminal: "imu 100.0/100 Hz p99 0.06 ms ovr 0 | ...".
  static std::string StatusLine(const std::vector<ComponentStats>& stats);
  // A table with a row per component.
  static std::string SummaryTable(const std::vector<ComponentStats>& stats);

 private:
  absl::Status ResolveClasses();

  const ComponentContext context_;
  std::vector<dag::Graph> graphs_;
  bool loaded_ = false;
  mutable Mutex mu_;
  std::vector<std::unique_ptr<ComponentBase>> components_ ABSL_GUARDED_BY(mu_);
};

}  // namespace cyber

#endif  // CYBER_MAINBOARD_LAUNCHER_H_
