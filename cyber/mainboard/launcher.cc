#include "cyber/mainboard/launcher.h"

#include <cxxabi.h>
#include <dlfcn.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "cyber/common/log.h"
#include "cyber/common/nearest_name.h"
#include "cyber/component/component_registry.h"
#include "cyber/transport/channel_bus.h"
#include "scheduler/default_scheduler.h"
#include "cyber/common/runtime_scope.h"
#include "timer/timer_owner.h"
#include "timer/timer_stop_registry.h"

namespace cyber {

namespace {

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

Launcher::Launcher(ComponentContext context)
    : context_(context),
      scope_(context_.runtime != nullptr ? context_.runtime->scope() : nullptr) {}

Launcher::~Launcher() { Stop(); }

absl::Status Launcher::Load(const std::vector<std::string>& dag_paths) {
  if (dag_paths.empty()) {
    return absl::InvalidArgumentError(
        "launcher: no graph files given (use -d file.dag)");
  }
  std::vector<dag::Graph> graphs;
  for (const std::string& path : dag_paths) {
    auto graph = dag::LoadGraphFile(path);
    if (!graph.ok()) return graph.status();
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
        const std::vector<std::string> linked_in = registry.Names();
        // An empty registry is the classic forgotten alwayslink: the linker
        // dropped the library whose static initializers register classes.
        return absl::NotFoundError(absl::StrCat(
            c.second, ": class_name \"", c.first, "\": no such component class",
            linked_in.empty()
                ? std::string("; no component classes are linked in: does the "
                              "cc_library set alwayslink = True?")
                : absl::StrCat(" (linked in: ", absl::StrJoin(linked_in, ", "), ")"),
            library_note));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status Launcher::Start() {
  if (!loaded_) {
    return absl::FailedPreconditionError("launcher: Start() before Load()");
  }
  {
    MutexLock lock(&mu_);
    channel_warnings_.clear();
  }
  const ScopedRuntime graph_code(scope_);
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
      // Locate errors that do not say where in this dag file they are (a
      // reader's error names the reader's line: one location is enough).
      if (!absl::StrContains(s.message(), where) &&
          !absl::StartsWith(s.message(), absl::StrCat(spec.where.file, ":"))) {
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
          return s;
        }
      }
    }
  }
  if (after_init_) {
    const absl::Status s = after_init_();
    if (!s.ok()) {
      Stop();
      return s;
    }
  }
  std::vector<std::string> warnings = CheckChannels();
  for (std::string& w : CheckServices()) warnings.push_back(std::move(w));
  if (strict_ && !warnings.empty()) {
    // Everything was initialized (the writers exist only after Init()), so
    // every warning is known; the error lists them, once.
    Stop();
    const std::string error = absl::StrCat(
        "strict graph: ", warnings.size(),
        warnings.size() == 1 ? " graph warning is an error"
                             : " graph warnings are errors",
        " in strict mode:\n  ", absl::StrJoin(warnings, "\n  "));
    MutexLock lock(&mu_);
    channel_warnings_ = std::move(warnings);
    return absl::FailedPreconditionError(error);
  }
  for (const std::string& w : warnings) AWARN << "launcher: " << w;
  MutexLock lock(&mu_);
  channel_warnings_ = std::move(warnings);
  return absl::OkStatus();
}

bool Launcher::Declarations::Has(const std::string& node,
                                 const std::vector<std::string>* Declared::*list,
                                 const std::string& name) const {
  auto it = lists.find(node);
  if (it == lists.end()) return false;
  const std::vector<std::string>& names = *(it->second.*list);
  return std::find(names.begin(), names.end(), name) != names.end();
}

Launcher::Declarations Launcher::RunningDeclarations() const {
  Declarations d;
  {
    MutexLock lock(&mu_);
    for (const auto& c : components_) {
      d.where.emplace(c->name(), "");
      if (d.bus == nullptr && c->node() != nullptr) d.bus = c->node()->bus();
    }
  }
  for (const dag::Graph& graph : graphs_) {
    for (const dag::ModuleSpec& module : graph.modules) {
      for (const Entry& e : InFileOrder(module)) {
        const std::string& name = e.component != nullptr ? e.component->name : e.timer->name;
        auto it = d.where.find(name);
        if (it == d.where.end()) continue;
        it->second = e.where().ToString();
        d.lists[name] = e.component != nullptr
                            ? Declarations::Declared{&e.component->unread_outputs,
                                                  &e.component->remote_inputs,
                                                  &e.component->remote_services}
                            : Declarations::Declared{&e.timer->unread_outputs,
                                                  &e.timer->remote_inputs,
                                                  &e.timer->remote_services};
      }
    }
  }
  return d;
}

std::vector<std::string> Launcher::CheckChannels() const {
  // The channels each component declares unread (dag unread_outputs) and
  // those it declares written by another process (dag remote_inputs).
  const Declarations d = RunningDeclarations();
  if (d.bus == nullptr) return {};
  const std::map<std::string, std::string>& ours = d.where;
  auto touched = [&ours](const std::vector<std::string>& nodes) {
    return std::any_of(nodes.begin(), nodes.end(),
                       [&ours](const std::string& n) { return ours.count(n) > 0; });
  };
  auto declares = [&d](const std::string& node, const std::string& channel) {
    return d.Has(node, &Declarations::Declared::unread_outputs, channel);
  };
  auto expects_remote = [&d](const std::string& node, const std::string& channel) {
    return d.Has(node, &Declarations::Declared::remote_inputs, channel);
  };
  const std::vector<ChannelTopology> topology = d.bus->Topology();
  // The bus may be shared (the process default): only channels one of our
  // components writes or reads are ours to judge.
  std::vector<const ChannelTopology*> unmatched;
  for (const ChannelTopology& t : topology) {
    if (t.writers.empty() == t.readers.empty()) continue;
    if (!touched(t.writers) && !touched(t.readers)) continue;
    unmatched.push_back(&t);
  }
  // (channel, message), sorted by channel at the end.
  std::vector<std::pair<std::string, std::string>> warnings;
  for (const ChannelTopology* t : unmatched) {
    const bool read_only = t->writers.empty();
    // Written for nobody on purpose: one of its writers says so.
    if (!read_only &&
        std::any_of(t->writers.begin(), t->writers.end(),
                    [&](const std::string& w) { return declares(w, t->channel); })) {
      continue;
    }
    // Written by another process: one of its readers says so.
    if (read_only &&
        std::any_of(t->readers.begin(), t->readers.end(),
                    [&](const std::string& r) { return expects_remote(r, t->channel); })) {
      continue;
    }
    std::string w = absl::StrCat(
        "channel \"", t->channel, "\" (", t->type_name, ") is ",
        read_only ? "read by " : "written by ",
        Participants(read_only ? t->readers : t->writers, ours),
        read_only ? " but written by no one" : " but read by no one");
    // The typical cause is a typo: name the channels of the same type with
    // the opposite problem (a declared unread output included).
    std::vector<std::string> others;
    for (const ChannelTopology* o : unmatched) {
      if (o->type_name == t->type_name && o->writers.empty() != read_only) {
        others.push_back(absl::StrCat("\"", o->channel, "\""));
      }
    }
    if (!others.empty()) {
      absl::StrAppend(&w, "; a typo? ", absl::StrJoin(others, ", "),
                      " (same type) ", others.size() == 1 ? "is " : "are ",
                      read_only ? "written but read by no one"
                                : "read but written by no one");
    }
    if (!read_only) {
      const auto writer = std::find_if(t->writers.begin(), t->writers.end(),
                                       [&ours](const std::string& n) {
                                         return ours.count(n) > 0;
                                       });
      if (writer != t->writers.end()) {
        absl::StrAppend(&w, "; if no reader is meant, add unread_outputs: \"",
                        t->channel, "\" to the config of component \"", *writer,
                        "\"");
      }
    } else {
      const auto reader = std::find_if(t->readers.begin(), t->readers.end(),
                                       [&ours](const std::string& n) {
                                         return ours.count(n) > 0;
                                       });
      if (reader != t->readers.end()) {
        absl::StrAppend(&w, "; if another process writes it, add remote_inputs: \"",
                        t->channel, "\" to the config of component \"", *reader,
                        "\"");
      }
    }
    warnings.emplace_back(t->channel, std::move(w));
  }
  // A declaration must name a channel its component writes (once Init() has
  // run): otherwise it is a typo, or left behind when the channel moved.
  for (const auto& [name, lists] : d.lists) {
    for (const std::string& channel : *lists.unread_outputs) {
      const auto t = std::find_if(topology.begin(), topology.end(),
                                  [&](const ChannelTopology& c) {
                                    return c.channel == channel;
                                  });
      if (t != topology.end() &&
          std::find(t->writers.begin(), t->writers.end(), name) != t->writers.end()) {
        continue;
      }
      std::vector<std::string> writes;
      for (const ChannelTopology& c : topology) {
        if (std::find(c.writers.begin(), c.writers.end(), name) != c.writers.end()) {
          writes.push_back(absl::StrCat("\"", c.channel, "\""));
        }
      }
      warnings.emplace_back(
          channel,
          absl::StrCat("channel \"", channel, "\" is listed in unread_outputs of ",
                       Participants({name}, ours), " but that component does not write it (",
                       writes.empty() ? std::string("it writes no channel")
                                      : absl::StrCat("it writes ", absl::StrJoin(writes, ", ")),
                       ")"));
    }
  }
  // Likewise, a remote input must name a channel its component reads.
  for (const auto& [name, lists] : d.lists) {
    for (const std::string& channel : *lists.remote_inputs) {
      const auto t = std::find_if(topology.begin(), topology.end(),
                                  [&](const ChannelTopology& c) {
                                    return c.channel == channel;
                                  });
      if (t != topology.end() &&
          std::find(t->readers.begin(), t->readers.end(), name) != t->readers.end()) {
        continue;
      }
      std::vector<std::string> reads;
      for (const ChannelTopology& c : topology) {
        if (std::find(c.readers.begin(), c.readers.end(), name) != c.readers.end()) {
          reads.push_back(absl::StrCat("\"", c.channel, "\""));
        }
      }
      warnings.emplace_back(
          channel,
          absl::StrCat("channel \"", channel, "\" is listed in remote_inputs of ",
                       Participants({name}, ours), " but that component does not read it (",
                       reads.empty() ? std::string("it reads no channel")
                                     : absl::StrCat("it reads ", absl::StrJoin(reads, ", ")),
                       ")"));
    }
  }
  std::stable_sort(warnings.begin(), warnings.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> messages;
  messages.reserve(warnings.size());
  for (auto& [channel, message] : warnings) messages.push_back(std::move(message));
  return messages;
}

std::vector<std::string> Launcher::CheckServices() const {
  // The services each component declares served by another process (dag
  // remote_services).
  const Declarations d = RunningDeclarations();
  if (d.bus == nullptr) return {};
  const std::map<std::string, std::string>& ours = d.where;
  auto declares = [&d](const std::string& node, const std::string& service) {
    return d.Has(node, &Declarations::Declared::remote_services, service);
  };
  const std::vector<transport_internal::ServiceTopology> topology = d.bus->ServicesTopology();
  std::vector<std::string> served;
  for (const auto& t : topology) {
    if (!t.server.empty()) served.push_back(t.service);
  }
  // (service, message), sorted by service at the end.
  std::vector<std::pair<std::string, std::string>> warnings;
  for (const auto& t : topology) {
    if (!t.server.empty()) continue;
    // The registry may be shared (the process default): only services one
    // of our components calls are ours to judge.
    const auto caller = std::find_if(t.clients.begin(), t.clients.end(),
                                     [&ours](const std::string& n) { return ours.count(n) > 0; });
    if (caller == t.clients.end()) continue;
    // Served by another process: one of its callers says so.
    if (std::any_of(t.clients.begin(), t.clients.end(),
                    [&](const std::string& c) { return declares(c, t.service); })) {
      continue;
    }
    std::string w = absl::StrCat("service \"", t.service, "\" (", t.types,
                                 ") is called by ", Participants(t.clients, ours),
                                 " but served by no one");
    // The typical cause is a typo: name the served service it looks like.
    if (std::optional<std::string> near = NearestName(t.service, served)) {
      const auto server = std::find_if(topology.begin(), topology.end(),
                                       [&](const auto& o) { return o.service == *near; });
      absl::StrAppend(&w, "; did you mean \"", *near, "\"? (served by ",
                      Participants({server->server}, ours), ")");
    }
    absl::StrAppend(&w, "; if another process serves it, add remote_services: \"", t.service,
                    "\" to the config of component \"", *caller, "\"");
    warnings.emplace_back(t.service, std::move(w));
  }
  // A declaration must name a service its component calls (once Init() has
  // run): otherwise it is a typo, or left behind.
  for (const auto& [name, lists] : d.lists) {
    std::vector<std::string> calls;
    for (const auto& t : topology) {
      if (std::find(t.clients.begin(), t.clients.end(), name) != t.clients.end()) {
        calls.push_back(t.service);
      }
    }
    for (const std::string& service : *lists.remote_services) {
      if (std::find(calls.begin(), calls.end(), service) != calls.end()) continue;
      std::vector<std::string> quoted;
      for (const std::string& c : calls) quoted.push_back(absl::StrCat("\"", c, "\""));
      warnings.emplace_back(
          service,
          absl::StrCat("service \"", service, "\" is listed in remote_services of ",
                       Participants({name}, ours), " but that component does not call it (",
                       calls.empty() ? std::string("it calls no service")
                                     : absl::StrCat("it calls ", absl::StrJoin(quoted, ", ")),
                       ")"));
    }
  }
  std::stable_sort(warnings.begin(), warnings.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> messages;
  messages.reserve(warnings.size());
  for (auto& [service, message] : warnings) messages.push_back(std::move(message));
  return messages;
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
  const ScopedRuntime graph_code(scope_);
  {
    MutexLock lock(&mu_);
    stopping_.clear();
    for (const auto& c : components) stopping_.push_back(c.get());
    shut_down_ = 0;
  }
  for (auto it = components.rbegin(); it != components.rend(); ++it) {
    ShutDownTracked(it->get());
  }
  std::vector<ComponentStats> stats;
  stats.reserve(components.size());
  for (const auto& c : components) stats.push_back(c->Stats());
  // Their services' servers and clients, still alive (their nodes are the
  // components'); the registry may be shared: only our nodes' rows.
  std::vector<transport_internal::ServiceEndpointReport> services;
  std::set<std::string> nodes;
  ChannelBus* bus = nullptr;
  for (const auto& c : components) {
    if (c->node() == nullptr) continue;
    nodes.insert(c->node()->name());
    if (bus == nullptr) bus = c->node()->bus();
  }
  if (bus != nullptr) {
    for (auto& row : bus->ServicesReport()) {
      if (nodes.count(row.node) != 0) services.push_back(std::move(row));
    }
  }
  {
    MutexLock lock(&mu_);
    stopping_.clear();  // before they are destroyed
    final_stats_ = std::move(stats);
    final_services_ = std::move(services);
  }
  components.clear();
}

void Launcher::ShutDownTracked(ComponentBase* component) {
  {
    const timer::ScopedStopCaller caller(
        absl::StrCat("component \"", component->name(), "\" Shutdown()"));
    component->Shutdown();
  }
  MutexLock lock(&mu_);
  ++shut_down_;
}

size_t Launcher::ComponentsLeftToStop() const {
  MutexLock lock(&mu_);
  // shut_down_ outlives the list it counts (cleared when a stop ends).
  return stopping_.size() > shut_down_ ? stopping_.size() - shut_down_ : 0;
}

Launcher::StopProgress Launcher::StopInProgress() const {
  MutexLock lock(&mu_);
  StopProgress progress;
  for (const ComponentBase* c : stopping_) progress.stats.push_back(c->Stats());
  for (size_t i = 0; i + shut_down_ < stopping_.size(); ++i) {
    progress.not_stopped.push_back(stopping_[i]->name());
  }
  return progress;
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
    return absl::NotFoundError(absl::StrCat(
        "launcher: StopComponent(\"", name, "\"): no such running component (running: ",
        absl::StrJoin(names, ", "), ")"));
  }
  AINFO << "launcher: stopping component \"" << name << "\"";
  const ScopedRuntime graph_code(scope_);
  {
    MutexLock lock(&mu_);
    stopping_ = {found};
    shut_down_ = 0;
  }
  ShutDownTracked(found);  // synchronous and idempotent
  MutexLock lock(&mu_);
  stopping_.clear();
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

std::vector<transport_internal::ServiceEndpointReport> Launcher::FinalServices() const {
  MutexLock lock(&mu_);
  return final_services_;
}

std::vector<std::string> Launcher::ChannelWarnings() const {
  MutexLock lock(&mu_);
  return channel_warnings_;
}

namespace {

// " fail 3 (3 threw)" when a component's Proc() failed, "" when it did not.
std::string Failures(const ComponentStats& s) {
  if (s.proc_failures == 0) return "";
  std::string out = absl::StrCat(" fail ", s.proc_failures);
  if (s.exceptions > 0) absl::StrAppend(&out, " (", s.exceptions, " threw)");
  return out;
}

}  // namespace

std::string Launcher::StatusLine(const std::vector<ComponentStats>& stats) {
  std::vector<std::string> parts;
  for (const ComponentStats& s : stats) {
    if (!s.has_proc) {
      parts.push_back(absl::StrCat(s.name, " (no Proc)"));
    } else if (s.timer) {
      parts.push_back(absl::StrFormat(
          "%s %.1f/%.0f Hz p99 %.2f ms ovr %d%s", s.name, s.achieved_hz,
          s.configured_hz, absl::ToDoubleMilliseconds(s.lateness_p99),
          static_cast<int>(s.overruns), Failures(s)));
    } else {
      parts.push_back(absl::StrFormat("%s %d msgs drop %d%s", s.name,
                                      static_cast<int>(s.procs),
                                      static_cast<int>(s.dropped), Failures(s)));
    }
  }
  return absl::StrJoin(parts, " | ");
}

std::string Launcher::SummaryTable(const std::vector<ComponentStats>& stats) {
  constexpr char kRow[] = "%-20s %-26s %10s %10s %9s %9s %9s %8s %8s %8s %8s %8s\n";
  std::string out =
      absl::StrFormat(kRow, "component", "class", "procs", "failed", "rate Hz",
                      "config Hz", "p99 ms", "overruns", "dropped", "early", "threw",
                      "missed");
  // `-` where a column does not apply to the kind of component: rates and
  // lateness to message components, dropped messages to timer components,
  // Proc() counts to a Component<>.
  auto count = [](bool applies, uint64_t n) {
    return applies ? absl::StrCat(n) : std::string("-");
  };
  auto fixed = [](bool applies, double v, int decimals) {
    return applies ? absl::StrFormat("%.*f", decimals, v) : std::string("-");
  };
  for (const ComponentStats& s : stats) {
    const bool timer = s.has_proc && s.timer;
    const bool message = s.has_proc && !s.timer;
    absl::StrAppend(
        &out, absl::StrFormat(
                  kRow, s.name, s.class_name, count(s.has_proc, s.procs),
                  count(s.has_proc, s.proc_failures), fixed(timer, s.achieved_hz, 2),
                  fixed(timer, s.configured_hz, 2),
                  fixed(timer, absl::ToDoubleMilliseconds(s.lateness_p99), 3),
                  count(timer, s.overruns), count(message, s.dropped),
                  count(timer, s.early_fires), count(s.has_proc, s.exceptions),
                  count(timer, s.missed_periods)));
    // The timers its Init() made, each under it as "<component>/<timer>":
    // procs are its calls, failed and threw the calls that threw.
    for (const timer::OwnedTimer& t : s.timers) {
      const timer::TimerStatistics& ts = t.statistics;
      const bool periodic = !t.oneshot && t.period > absl::ZeroDuration() &&
                            t.period != absl::InfiniteDuration();
      absl::StrAppend(
          &out,
          absl::StrFormat(kRow, absl::StrCat("  ", s.name, "/", t.name),
                          t.oneshot ? "Timer(oneshot)" : "Timer", count(true, ts.fires),
                          count(true, ts.exceptions), "-",
                          fixed(periodic, 1.0 / absl::ToDoubleSeconds(t.period), 2),
                          fixed(ts.percentiles, absl::ToDoubleMilliseconds(ts.lateness_p99), 3),
                          count(true, ts.overruns), "-", count(true, ts.early_fires),
                          count(true, ts.exceptions), count(!t.oneshot, ts.missed_periods)));
    }
  }
  return out;
}

absl::StatusOr<ComponentBase*> Launcher::FindComponent(const std::string& name) const {
  std::vector<std::string> names;
  {
    MutexLock lock(&mu_);
    for (const auto& c : components_) {
      if (c->name() == name) return c.get();
      names.push_back(c->name());
    }
  }
  return absl::NotFoundError(absl::StrCat(
      "launcher: Find(\"", name, "\"): no such running component (running: ",
      names.empty() ? std::string("none") : absl::StrJoin(names, ", "), ")"));
}

absl::Status Launcher::NotA(const ComponentBase& component, const std::type_info& wanted) {
  // Readable C++ names (the ABI's demangler; the mangled name if it fails).
  auto readable = [](const std::type_info& type) {
    int status = 0;
    char* demangled = abi::__cxa_demangle(type.name(), nullptr, nullptr, &status);
    std::string out = status == 0 && demangled != nullptr ? demangled : type.name();
    std::free(demangled);
    return out;
  };
  return absl::InvalidArgumentError(absl::StrCat(
      "launcher: Find<", readable(wanted), ">(\"", component.name(),
      "\"): component \"", component.name(), "\" is of class ", component.class_name(),
      " (", readable(typeid(component)), "), not a ", readable(wanted)));
}

}  // namespace cyber
