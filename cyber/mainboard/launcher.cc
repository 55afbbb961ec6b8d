#include "cyber/mainboard/launcher.h"

#include <dlfcn.h>

#include <cstdio>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cyber/common/log.h"
#include "cyber/component/component_registry.h"

namespace cyber {

namespace {

absl::Status Logged(absl::Status s) {
  if (!s.ok()) AERROR << s.message();
  return s;
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
  ComponentRegistry& registry = ComponentRegistry::Global();
  auto start_one = [&](const std::string& class_name, auto& spec) -> absl::Status {
    std::unique_ptr<ComponentBase> component = registry.Create(class_name);
    if (component == nullptr) {  // resolved in Load(); only a race could do this
      return absl::NotFoundError(absl::StrCat(spec.where.ToString(),
                                              ": class_name \"", class_name, "\""));
    }
    const absl::Status s = component->Initialize(spec, context_);
    if (!s.ok()) {
      component->Shutdown();
      return s;
    }
    AINFO << "launcher: started component \"" << spec.name << "\" ("
          << class_name << ")";
    MutexLock lock(&mu_);
    components_.push_back(std::move(component));
    return absl::OkStatus();
  };
  for (const dag::Graph& graph : graphs_) {
    for (const dag::ModuleSpec& module : graph.modules) {
      for (const auto& spec : module.components) {
        absl::Status s = start_one(spec.class_name, spec);
        if (!s.ok()) {
          Stop();
          return Logged(s);
        }
      }
      for (const auto& spec : module.timer_components) {
        absl::Status s = start_one(spec.class_name, spec);
        if (!s.ok()) {
          Stop();
          return Logged(s);
        }
      }
    }
  }
  return absl::OkStatus();
}

void Launcher::Stop() {
  std::vector<std::unique_ptr<ComponentBase>> components;
  {
    MutexLock lock(&mu_);
    components.swap(components_);
  }
  // Reverse order; each Shutdown() is synchronous, so no Proc() runs on a
  // destroyed component.
  for (auto it = components.rbegin(); it != components.rend(); ++it) {
    (*it)->Shutdown();
  }
  components.clear();
}

std::vector<ComponentStats> Launcher::Stats() const {
  MutexLock lock(&mu_);
  std::vector<ComponentStats> stats;
  for (const auto& c : components_) stats.push_back(c->Stats());
  return stats;
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
