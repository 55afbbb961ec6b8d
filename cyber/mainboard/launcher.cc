#include "cyber/mainboard/launcher.h"

#include <dlfcn.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cyber/common/log.h"
#include "cyber/component/component_registry.h"
#include "cyber/transport/channel_bus.h"
#include "scheduler/default_scheduler.h"
#include "timer/ambient_timer_system.h"

namespace cyber {

namespace {

// Marks the calling thread as running the graph's code (components' Init(),
// Clear() and shutdown): a Timer made without a TickDriver, Time::Now(),
// Rate, cyber::Async and scheduler::Instance() use the context's timer
// system and scheduler (when it names them), as the components' routines
// do. Without it, a Clear() that removes a task its Init() created would
// look for it on the process scheduler.
class GraphCode {
 public:
  explicit GraphCode(const ComponentContext& context) {
    if (context.timer_driver != nullptr) {
      timers_.emplace(context.timer_driver->front_end().get());
    }
    if (context.scheduler != nullptr) scheduler_.emplace(context.scheduler);
  }

 private:
  std::optional<timer::ScopedAmbientTimerSystem> timers_;
  std::optional<scheduler::ScopedAmbientScheduler> scheduler_;
};

absl::Status Logged(absl::Status s) {
  if (!s.ok()) AERROR << s.message();
  return s;
}

// Why `library` could not be loaded, as far as can be told without loading
// it (loading runs its static initializers, which would register its
// classes a second time); "" if nothing is wrong or it cannot be told.
std::string LibraryProblem(const std::string& library) {
  if (void* handle = dlopen(library.c_str(), RTLD_LAZY | RTLD_NOLOAD)) {
    dlclose(handle);  // loaded already
    return "";
  }
  // A bare name is searched along the library path by dlopen; not checked.
  if (library.find('/') == std::string::npos) return "";
  std::ifstream in(library, std::ios::binary);
  if (!in.is_open()) {
    return absl::StrCat("cannot open shared object file: ", std::strerror(errno));
  }
  char magic[4] = {};
  in.read(magic, sizeof(magic));
  if (in.gcount() != 4 || std::memcmp(magic, "\x7f" "ELF", 4) != 0) {
    return "invalid ELF header (not a shared object)";
  }
  return "";
}

// One component entry of a module, of either kind.
struct Entry {
  const dag::ComponentSpec* component = nullptr;
  const dag::TimerComponentSpec* timer = nullptr;
  const dag::SourceLocation& where() const {
    return component != nullptr ? component->where : timer->where;
  }
};

// The module's components and timer components in the order the file lists
// them (by location; entries without one keep their order, components first).
std::vector<Entry> InFileOrder(const dag::ModuleSpec& module) {
  std::vector<Entry> entries;
  for (const auto& c : module.components) entries.push_back(Entry{&c, nullptr});
  for (const auto& t : module.timer_components) entries.push_back(Entry{nullptr, &t});
  std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return std::make_tuple(a.where().line, a.where().column) <
           std::make_tuple(b.where().line, b.where().column);
  });
  return entries;
}

// `"a" (x.dag:2:3), node "b"`: components with where they are defined,
// other nodes by name.
std::string Participants(const std::vector<std::string>& nodes,
                         const std::map<std::string, std::string>& ours) {
  std::vector<std::string> parts;
  for (const std::string& n : nodes) {
    auto it = ours.find(n);
    parts.push_back(it != ours.end()
                        ? absl::StrCat("component \"", n, "\" (", it->second, ")")
                        : absl::StrCat("node \"", n, "\""));
  }
  return absl::StrJoin(parts, ", ");
}

}  // namespace

Launcher::Launcher(ComponentContext context) : context_(context) {}

Launcher::~Launcher() { Stop(); }

absl::Status Launcher::Load(const std::vector<std::string>& dag_paths) {
  if (dag_paths.empty()) {
    return Logged(absl::InvalidArgumentError(
        "launcher: no graph files given (use -d file.dag)"));
  }
  std::vector<dag::Graph> graphs;
  for (const std::string& path : dag_paths) {
    auto graph = dag::LoadGraphFile(path);
    if (!graph.ok()) return graph.status();  // logged by the loader
    graphs.push_back(*std::move(graph));
  }
  absl::Status s = dag::CheckGraphs(graphs);
  if (!s.ok()) return s;
  graphs_ = std::move(graphs);
  s = ResolveClasses();
  if (!s.ok()) return s;
  loaded_ = true;
  return absl::OkStatus();
}

absl::Status Launcher::ResolveClasses() {
  ComponentRegistry& registry = ComponentRegistry::Global();
  for (const dag::Graph& graph : graphs_) {
    for (const dag::ModuleSpec& module : graph.modules) {
      // Every class of the module, with where it is named.
      std::vector<std::pair<std::string, std::string>> classes;
      for (const auto& c : module.components) {
        classes.emplace_back(c.class_name, c.where.ToString());
      }
      for (const auto& c : module.timer_components) {
        classes.emplace_back(c.class_name, c.where.ToString());
      }
      bool all_known = true;
      for (const auto& c : classes) all_known = all_known && registry.Contains(c.first);
      std::string library_note;
      if (all_known && !module.module_library.empty()) {
        // Not loaded (its classes are here already), but a library that
        // could not be is still a mistake in the graph worth saying.
        const std::string problem = LibraryProblem(module.module_library);
        if (!problem.empty()) {
          AWARN << module.where.ToString() << ": module_library \""
                << module.module_library << "\" could not be loaded: " << problem
                << " (not needed: its classes are linked into this binary)";
        }
      }
      if (!all_known && !module.module_library.empty()) {
        // Its static initializers register the classes it contains.
        if (dlopen(module.module_library.c_str(), RTLD_NOW | RTLD_GLOBAL) == nullptr) {
          const char* error = dlerror();
          library_note = absl::StrCat("; module_library \"", module.module_library,
                                      "\" could not be loaded: ",
                                      error != nullptr ? error : "unknown error");
        } else {
          library_note = absl::StrCat("; module_library \"", module.module_library,
                                      "\" was loaded but does not register it");
        }
      }
      for (const auto& c : classes) {
        if (registry.Contains(c.first)) continue;
        return Logged(absl::NotFoundError(absl::StrCat(
            c.second, ": class_name \"", c.first,
            "\": no such component class (linked in: ",
            absl::StrJoin(registry.Names(), ", "), ")", library_note)));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status Launcher::Start() {
  if (!loaded_) {
    return Logged(absl::FailedPreconditionError("launcher: Start() before Load()"));
  }
  {
    MutexLock lock(&mu_);
    channel_warnings_.clear();
  }
  const GraphCode graph_code(context_);
  ComponentRegistry& registry = ComponentRegistry::Global();
  auto start_one = [&](const auto& spec) -> absl::Status {
    const std::string where = spec.where.ToString();
    std::unique_ptr<ComponentBase> component = registry.Create(spec.class_name);
    if (component == nullptr) {  // resolved in Load(); only a race could do this
      return absl::NotFoundError(
          absl::StrCat(where, ": class_name \"", spec.class_name, "\""));
    }
    absl::Status s = component->Initialize(spec, context_);
    if (!s.ok()) {
      component->Shutdown();
      // Locate errors that do not say where the component is defined.
      if (!absl::StrContains(s.message(), where)) {
        s = absl::Status(s.code(), absl::StrCat(where, ": ", s.message()));
      }
      return s;
    }
    AINFO << "launcher: started component \"" << spec.name << "\" ("
          << spec.class_name << ") from " << where;
    MutexLock lock(&mu_);
    components_.push_back(std::move(component));
    return absl::OkStatus();
  };
  for (const dag::Graph& graph : graphs_) {
    for (const dag::ModuleSpec& module : graph.modules) {
      for (const Entry& e : InFileOrder(module)) {
        const absl::Status s = e.component != nullptr ? start_one(*e.component)
                                                      : start_one(*e.timer);
        if (!s.ok()) {
          Stop();
          return Logged(s);
        }
      }
    }
  }
  std::vector<std::string> warnings = CheckChannels();
  for (const std::string& w : warnings) AWARN << "launcher: " << w;
  MutexLock lock(&mu_);
  channel_warnings_ = std::move(warnings);
  return absl::OkStatus();
}

std::vector<std::string> Launcher::CheckChannels() const {
  // The running components (their nodes carry their names) and where each
  // is defined.
  std::map<std::string, std::string> ours;
  ChannelBus* bus = nullptr;
  {
    MutexLock lock(&mu_);
    for (const auto& c : components_) {
      ours.emplace(c->name(), "");
      if (bus == nullptr && c->node() != nullptr) bus = c->node()->bus();
    }
  }
  if (bus == nullptr) return {};
  for (const dag::Graph& graph : graphs_) {
    for (const dag::ModuleSpec& module : graph.modules) {
      for (const Entry& e : InFileOrder(module)) {
        const std::string& name = e.component != nullptr ? e.component->name : e.timer->name;
        auto it = ours.find(name);
        if (it != ours.end()) it->second = e.where().ToString();
      }
    }
  }
  auto touched = [&ours](const std::vector<std::string>& nodes) {
    return std::any_of(nodes.begin(), nodes.end(),
                       [&ours](const std::string& n) { return ours.count(n) > 0; });
  };
  // The bus may be shared (the process default): only channels one of our
  // components writes or reads are ours to judge.
  std::vector<ChannelTopology> unmatched;
  for (ChannelTopology& t : bus->Topology()) {
    if (t.writers.empty() == t.readers.empty()) continue;
    if (!touched(t.writers) && !touched(t.readers)) continue;
    unmatched.push_back(std::move(t));
  }
  std::vector<std::string> warnings;
  for (const ChannelTopology& t : unmatched) {
    const bool read_only = t.writers.empty();
    std::string w = absl::StrCat(
        "channel \"", t.channel, "\" (", t.type_name, ") is ",
        read_only ? "read by " : "written by ",
        Participants(read_only ? t.readers : t.writers, ours),
        read_only ? " but written by no one" : " but read by no one");
    // The typical cause is a typo: name the channels of the same type with
    // the opposite problem.
    std::vector<std::string> others;
    for (const ChannelTopology& o : unmatched) {
      if (o.type_name == t.type_name && o.writers.empty() != read_only) {
        others.push_back(absl::StrCat("\"", o.channel, "\""));
      }
    }
    if (!others.empty()) {
      absl::StrAppend(&w, "; a typo? ", absl::StrJoin(others, ", "),
                      " (same type) ", others.size() == 1 ? "is " : "are ",
                      read_only ? "written but read by no one"
                                : "read but written by no one");
    }
    warnings.push_back(std::move(w));
  }
  return warnings;
}

void Launcher::Stop() {
  std::vector<std::unique_ptr<ComponentBase>> components;
  {
    MutexLock lock(&mu_);
    components.swap(components_);
  }
  if (components.empty()) return;
  // Reverse order; each Shutdown() is synchronous, so no Proc() runs on a
  // destroyed component, and the statistics taken after it are final.
  const GraphCode graph_code(context_);
  for (auto it = components.rbegin(); it != components.rend(); ++it) {
    (*it)->Shutdown();
  }
  std::vector<ComponentStats> stats;
  stats.reserve(components.size());
  for (const auto& c : components) stats.push_back(c->Stats());
  components.clear();
  MutexLock lock(&mu_);
  final_stats_ = std::move(stats);
}

absl::Status Launcher::StopComponent(const std::string& name) {
  ComponentBase* found = nullptr;
  std::vector<std::string> names;
  {
    MutexLock lock(&mu_);
    for (const auto& c : components_) {
      if (c->name() == name) found = c.get();
      names.push_back(c->name());
    }
  }
  if (found == nullptr) {
    return Logged(absl::NotFoundError(absl::StrCat(
        "launcher: StopComponent(\"", name, "\"): no such running component (running: ",
        absl::StrJoin(names, ", "), ")")));
  }
  AINFO << "launcher: stopping component \"" << name << "\"";
  const GraphCode graph_code(context_);
  found->Shutdown();  // synchronous and idempotent
  return absl::OkStatus();
}

std::vector<ComponentStats> Launcher::Stats() const {
  MutexLock lock(&mu_);
  std::vector<ComponentStats> stats;
  for (const auto& c : components_) stats.push_back(c->Stats());
  return stats;
}

std::vector<ComponentStats> Launcher::FinalStats() const {
  MutexLock lock(&mu_);
  return final_stats_;
}

std::vector<std::string> Launcher::ChannelWarnings() const {
  MutexLock lock(&mu_);
  return channel_warnings_;
}

std::string Launcher::StatusLine(const std::vector<ComponentStats>& stats) {
  std::vector<std::string> parts;
  for (const ComponentStats& s : stats) {
    if (s.timer) {
      parts.push_back(absl::StrFormat(
          "%s %.1f/%.0f Hz p99 %.2f ms ovr %d", s.name, s.achieved_hz,
          s.configured_hz, absl::ToDoubleMilliseconds(s.lateness_p99),
          static_cast<int>(s.overruns)));
    } else {
      parts.push_back(absl::StrFormat("%s %d msgs drop %d", s.name,
                                      static_cast<int>(s.procs),
                                      static_cast<int>(s.dropped)));
    }
  }
  return absl::StrJoin(parts, " | ");
}

std::string Launcher::SummaryTable(const std::vector<ComponentStats>& stats) {
  std::string out = absl::StrFormat(
      "%-20s %-26s %10s %10s %9s %9s %9s %8s %8s %8s\n", "component", "class",
      "procs", "failed", "rate Hz", "config Hz", "p99 ms", "overruns",
      "dropped", "early");
  for (const ComponentStats& s : stats) {
    absl::StrAppend(
        &out,
        absl::StrFormat("%-20s %-26s %10d %10d %9.2f %9.2f %9.3f %8d %8d %8d\n",
                        s.name, s.class_name, static_cast<int64_t>(s.procs),
                        static_cast<int64_t>(s.proc_failures), s.achieved_hz,
                        s.configured_hz, absl::ToDoubleMilliseconds(s.lateness_p99),
                        static_cast<int64_t>(s.overruns),
                        static_cast<int64_t>(s.dropped),
                        static_cast<int64_t>(s.early_fires)));
  }
  return out;
}

}  // namespace cyber
