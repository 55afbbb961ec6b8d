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
// A channel written on purpose for nobody (an alarm output, a channel for
// another process) is declared in the writer's dag entry,
// `unread_outputs: "/alarm"`, and is then not warned about. A declared
// channel that the component does not write (after its Init()) is a
// warning: a typo, or a declaration left behind. A declared channel that
// does have a reader is not: the same dag may run alone (nobody reads the
// alarm) or beside one that reads it (a monitor), and a warning there would
// make strict mode refuse a valid combination.
// The reading side of a graph split across processes is declared the same
// way, in the reader's entry: `remote_inputs: "/sensor/imu"` (written by
// another mainboard; DDS discovery has not happened when Start() checks,
// so the launcher cannot see the writer). A declared remote input that the
// component does not read is a warning, as above.
// Services likewise: a service that a component's client calls and that
// nobody in this process serves is a warning, suggesting the served
// service whose name is nearest (a typo: "did you mean "/planning/route"?",
// cyber/common/nearest_name.h), unless the caller's entry declares it
// served by another process (`remote_services: "/planning/route"`); a
// declared remote service the component does not call is a warning. A
// service served and called by nobody here is not (a server may be there
// for other processes).
//
// Strict mode (set_strict(true): mainboard --strict_graph, cyber_graph_test
// by default) turns those warnings into an error, so CI fails on a graph
// mistake instead of printing it: Start() initializes every component as
// usual, then, if there is any warning, stops them all again and returns
// FailedPrecondition "strict graph: ..." listing every warning (they are
// not logged separately). What Load() warns about (a module_library that
// could not be loaded but whose classes are linked in) is not a channel
// graph mistake and does not fail strict mode.
//
// Errors are returned, not logged: the caller shows each once (mainboard
// prints it, cyber::GraphTest logs it).
//
// Threads: one thread drives a Launcher; Stats(), FinalStats() and
// ChannelWarnings() may be called from any.

#ifndef CYBER_MAINBOARD_LAUNCHER_H_
#define CYBER_MAINBOARD_LAUNCHER_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cyber/common/mutex.h"
#include "cyber/component/component_base.h"
#include "cyber/dag/dag_config.h"
#include "cyber/common/runtime_scope.h"
#include "cyber/transport/service_registry.h"

namespace cyber {

class Launcher {
 public:
  explicit Launcher(ComponentContext context = ComponentContext());
  ~Launcher();  // Stop()
  Launcher(const Launcher&) = delete;
  Launcher& operator=(const Launcher&) = delete;

  absl::Status Load(const std::vector<std::string>& dag_paths);
  // Strict mode (see above); off by default. REQUIRES: before Start().
  void set_strict(bool strict) { strict_ = strict; }
  bool strict() const { return strict_; }
  // Runs in Start() after every component's Init() and before the graph
  // check, with the components' runtime current: what feeds the graph from
  // outside (SimulatedGraph's replay of a recording) makes its writers
  // there, once the readers have fixed the channels' types, and the check
  // sees them. An error stops the components again and is Start()'s.
  // REQUIRES: before Start().
  void set_after_init(std::function<absl::Status()> after_init) {
    after_init_ = std::move(after_init);
  }
  absl::Status Start();
  void Stop();
  // Stops one running component as Stop() does (its timer or readers
  // synchronously, then Clear()): fault injection in graph tests ("the GPS
  // driver dies at t"). It stays listed in Stats() with its counts, and
  // Stop() later skips it. Not concurrently with Stop().
  // Errors: NotFound naming the component and the running ones.
  absl::Status StopComponent(const std::string& name);

  // The component `name` of the last Start() as a T (its class, or a base
  // of it: dynamic_cast), for tests and tools that look inside a graph:
  //   absl::StatusOr<Planner*> planner = launcher.Find<Planner>("planner");
  // Lifetime: the pointer is valid until the component is destroyed, by
  // Stop() or the launcher's destructor; one stopped by StopComponent() is
  // still found (and valid), its Proc() no longer called. Threads: on the
  // real clock the component's routines (Proc(), its timers and tasks) may
  // touch its state at any time, so read what they write through atomics
  // or under the component's own lock; on simulated time nothing runs
  // between SimulatedGraph::Run*() calls. Not concurrently with Stop().
  // Errors: NotFound naming the running components; InvalidArgument naming
  // the component's actual class if it is not a T.
  template <typename T>
  absl::StatusOr<T*> Find(const std::string& name) const;

  // The running components' statistics, in start order (empty when none
  // runs). A call in flight when this is taken is not counted yet.
  std::vector<ComponentStats> Stats() const;
  // The statistics of the components the last Stop() stopped, taken after
  // each had stopped (so every call they made is counted), in start order.
  // Empty before the first Stop() with components to stop.
  std::vector<ComponentStats> FinalStats() const;
  // The servers and clients of the services those components' nodes made,
  // with their counts, taken at the same moment (ServiceRegistry::Report;
  // mainboard prints them with ServiceTable). Empty when none.
  std::vector<transport_internal::ServiceEndpointReport> FinalServices() const;
  // One message per channel that the components of the last successful
  // Start() write and nobody reads, or read and nobody writes (each also
  // logged with AWARN at start), sorted by channel. Empty if none.
  std::vector<std::string> ChannelWarnings() const;
  const std::vector<dag::Graph>& graphs() const { return graphs_; }

  // What a Stop() or StopComponent() running on another thread has not
  // finished, for a watchdog that reports a stuck shutdown (mainboard's
  // --shutdown_deadline, SimulatedGraph::Options::stuck_after). Each
  // Shutdown() runs under a timer::ScopedStopCaller naming the component,
  // so a timer Stop() stuck inside it names it too.
  struct StopProgress {
    // Every component the stop stops, in start order, with its statistics
    // so far (final for those stopped already).
    std::vector<ComponentStats> stats;
    // Those whose Shutdown() has not returned yet, in start order; the last
    // is the one in progress (Stop() goes in reverse order).
    std::vector<std::string> not_stopped;
  };
  // Empty when no stop runs.
  StopProgress StopInProgress() const;
  // StopInProgress().not_stopped.size() without the statistics: cheap
  // enough for a watch that polls whether a stop moves on.
  size_t ComponentsLeftToStop() const;

  // One line, for a terminal; failures only when there are some:
  //   "imu 100.0/100 Hz p99 0.06 ms ovr 0 | fusion 990 msgs drop 0 fail 330
  //   (330 threw) | loop (no Proc)"
  static std::string StatusLine(const std::vector<ComponentStats>& stats);
  // A table with a header and a row per component, columns separated by
  // spaces: component, class, procs, failed (returned false or threw), rate
  // Hz, config Hz, p99 ms, overruns, dropped, early, threw, missed (periods
  // a timer component skipped because a call came too late to make them:
  // why procs can fall short of rate x time without an overrun). A column
  // that does not apply to the kind of component shows `-`: the rates, p99,
  // overruns, early and missed for message components, dropped for timer
  // components, all counts for a Component<>. Under each component, a row
  // per timer its Init() made (ComponentStats::timers), named
  // "<component>/<timer>", class `Timer` (or `Timer(oneshot)`): procs are
  // its calls, failed and threw those that threw, config Hz its rate; the
  // achieved rate and dropped are `-`, and p99 unless the timer keeps
  // percentiles.
  static std::string SummaryTable(const std::vector<ComponentStats>& stats);

 private:
  absl::Status ResolveClasses();
  // The running components (their nodes carry their names), each with
  // where its dag entry is and the lists that entry declares, and the bus
  // they run on (null when none has a node): what both checks below read.
  struct Declarations {
    struct Declared {
      const std::vector<std::string>* unread_outputs = nullptr;
      const std::vector<std::string>* remote_inputs = nullptr;
      const std::vector<std::string>* remote_services = nullptr;
    };
    ChannelBus* bus = nullptr;
    std::map<std::string, std::string> where;  // component -> its location
    std::map<std::string, Declared> lists;       // component -> its entry's
    // Whether `node`'s entry lists `name` in its `list`.
    bool Has(const std::string& node,
             const std::vector<std::string>* Declared::*list,
             const std::string& name) const;
  };
  Declarations RunningDeclarations() const;
  // Messages for the unmatched channels of the running components.
  std::vector<std::string> CheckChannels() const;
  // Messages for the services the running components call that nobody
  // serves, and for their remote_services that they do not call.
  std::vector<std::string> CheckServices() const;
  // Find(): the component named `name` (NotFound naming the running ones),
  // and the error for one that is not a `wanted`.
  absl::StatusOr<ComponentBase*> FindComponent(const std::string& name) const;
  static absl::Status NotA(const ComponentBase& component, const std::type_info& wanted);
  // component->Shutdown(), named for stuck timer stops, counted as done.
  void ShutDownTracked(ComponentBase* component);

  const ComponentContext context_;
  // What the components' Init(), Clear() and shutdown run in: the scope of
  // the context's runtime, or none (the process runtime's parts, by the
  // rule of cyber/common/runtime_scope.h) when the context names none.
  const RuntimeScope* const scope_;
  std::vector<dag::Graph> graphs_;
  bool loaded_ = false;
  bool strict_ = false;
  std::function<absl::Status()> after_init_;
  // mu_ protects the following state.
  mutable Mutex mu_;
  std::vector<std::unique_ptr<ComponentBase>> components_ ABSL_GUARDED_BY(mu_);
  std::vector<ComponentStats> final_stats_ ABSL_GUARDED_BY(mu_);
  std::vector<transport_internal::ServiceEndpointReport> final_services_
      ABSL_GUARDED_BY(mu_);
  std::vector<std::string> channel_warnings_ ABSL_GUARDED_BY(mu_);
  // The components of the stop in progress (start order), valid while it
  // runs, of which the last `shut_down_` have stopped.
  std::vector<ComponentBase*> stopping_ ABSL_GUARDED_BY(mu_);
  size_t shut_down_ ABSL_GUARDED_BY(mu_) = 0;
};

template <typename T>
absl::StatusOr<T*> Launcher::Find(const std::string& name) const {
  static_assert(std::is_base_of<ComponentBase, T>::value,
                "Launcher::Find<T>: T must be a component class");
  absl::StatusOr<ComponentBase*> found = FindComponent(name);
  if (!found.ok()) return found.status();
  if (T* typed = dynamic_cast<T*>(*found)) return typed;
  return NotA(**found, typeid(T));
}

}  // namespace cyber

#endif  // CYBER_MAINBOARD_LAUNCHER_H_
