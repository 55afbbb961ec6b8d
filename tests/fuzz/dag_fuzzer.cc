// dag_fuzzer: arbitrary bytes as graph (.dag) files, through the parser, the
// validator, the file loader and the launcher.
//
// Why: a graph file is the one input a robot process takes from outside its
// code, written by hand and edited under time pressure. cyber/dag promises to
// refuse every bad one with an absl::Status whose message starts with
// "file:line:column:", never to crash, and to hand out only graphs whose
// values hold (names, intervals, readers, files); the launcher promises to
// check every graph before starting anything and to leave nothing running
// when a start fails. Protobuf's text parser is mature; the position
// bookkeeping (list syntax, missing fields, nested blocks) and the checks
// around it are this project's own, and that is where the fuzzer aims.
//
// The input is split at '\x1e' (ASCII record separator) into up to three
// files. Each is parsed with ParseGraph and, written to a temporary
// directory, loaded with LoadGraphFile; then the good ones are checked
// together (CheckGraphs), and all of them are loaded by a Launcher, whose
// registry holds a few components defined here (a timer component, one that
// refuses Init(), two message components of different types); when Load()
// succeeds it is started on a simulated timer system and a scheduler,
// allowed a few ticks, and stopped. Graphs naming a module_library together
// with an unregistered class are not given to the Launcher (it would
// dlopen() a path from the input), nor are graphs with a flag_file_path to
// Start() (gflags would read an arbitrary file as process flags).
//
// Checked:
//   - errors are InvalidArgument or NotFound, and the message starts with
//     "<file>:<line>:<column>: " (line and column from 1);
//   - a parsed graph holds only what dag_config.h promises: at least one
//     module, each with a component; non-empty class names and names, unique
//     in the file; intervals in [2 ms, 24 h]; readers with a channel and a
//     queue of at least 1; config and flag files that exist; locations in
//     the file;
//   - LoadGraphFile gives exactly what ParseGraph gives for the same text;
//   - CheckGraphs fails exactly when a name repeats across the files, naming
//     it, and the same graph twice is refused with its hint;
//   - Launcher::Load answers the first of those errors, or NotFound for the
//     first unregistered class; Start() either runs one component per entry
//     or fails leaving none running; Stop() leaves none.

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cyber/component/component.h"
#include "cyber/component/component_registry.h"
#include "cyber/component/timer_component.h"
#include "cyber/dag/dag_config.h"
#include "cyber/mainboard/launcher.h"
#include "cyber/runtime/runtime.h"
#include "cyber/time/simulated_clock.h"
#include "cyber/transport/channel_bus.h"
#include "scheduler/scheduler.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/quiet_logging.h"
#include "timer/timer_system.h"

namespace cyber {
namespace fuzz {

// Components the fuzzed graphs can name.
class FuzzTimer : public TimerComponent {
 public:
  bool Init() override { return true; }
  bool Proc() override { return true; }
};
CYBER_REGISTER_COMPONENT(FuzzTimer)

class FuzzRefusingTimer : public TimerComponent {
 public:
  bool Init() override { return false; }
  bool Proc() override { return true; }
};
CYBER_REGISTER_COMPONENT(FuzzRefusingTimer)

struct FuzzMessageA {
  int value = 0;
};
struct FuzzMessageB {
  double value = 0;
};

class FuzzSinkA : public Component<FuzzMessageA> {
 public:
  bool Init() override { return true; }
  bool Proc(const std::shared_ptr<FuzzMessageA>&) override { return true; }
};
CYBER_REGISTER_COMPONENT(FuzzSinkA)

class FuzzSinkB : public Component<FuzzMessageB> {
 public:
  bool Init() override { return true; }
  bool Proc(const std::shared_ptr<FuzzMessageB>&) override { return true; }
};
CYBER_REGISTER_COMPONENT(FuzzSinkB)

namespace {

namespace fs = std::filesystem;

constexpr int kMaxFiles = 3;
constexpr char kSeparator = '\x1e';

// Process-wide: a scratch directory for the graph files. Each input gets
// a runtime of its own without threads (cheap), so no channel of one input
// is seen by the next.
struct Environment {
  std::string dir;
};

Environment* env = nullptr;

void RemoveScratchDirectory() {
  if (env == nullptr) return;
  std::error_code ignored;
  fs::remove_all(env->dir, ignored);
}

void SetUpEnvironment() {
  env = new Environment();  // never destroyed: components may still use it
  const char* base = std::getenv("TEST_TMPDIR");
  if (base == nullptr) base = std::getenv("TMPDIR");
  std::string pattern = std::string(base != nullptr ? base : "/tmp") + "/dag_fuzzer.XXXXXX";
  FUZZ_CHECK(mkdtemp(pattern.data()) != nullptr) << "mkdtemp " << pattern;
  env->dir = pattern;
  std::atexit(RemoveScratchDirectory);
}

// Runs what is due on `runtime` now: steps its timers and resumes its
// routines until none is ready (bounded: a component may keep one ready).
void Settle(Runtime* runtime, Clock* clock) {
  for (int i = 0; i < 100; ++i) {
    runtime->timers()->Step(clock->Now());
    if (!runtime->scheduler()->HasReady()) return;
    runtime->scheduler()->RunReady();
  }
}

void CheckError(const absl::Status& status, const std::string& source, const char* what) {
  FUZZ_CHECK(status.code() == absl::StatusCode::kInvalidArgument ||
             status.code() == absl::StatusCode::kNotFound)
      << what << ": unexpected code: " << status;
  FUZZ_CHECK(StartsWithLocation(std::string(status.message()), source))
      << what << ": the message does not start with \"" << source
      << ":line:column: \": " << status;
}

bool ExistingFile(const std::string& path) {
  std::error_code error;
  return fs::is_regular_file(path, error);
}

void CheckLocation(const dag::SourceLocation& where, const std::string& source,
                   const std::string& what) {
  FUZZ_CHECK(where.file == source && where.line >= 1 && where.column >= 1)
      << what << ": location " << where.ToString() << " not in " << source;
}

// Everything dag_config.h promises about a graph that parsed.
void CheckGraph(const dag::Graph& g, const std::string& source) {
  FUZZ_CHECK(g.path == source) << "graph path " << g.path;
  FUZZ_CHECK(!g.modules.empty()) << source << ": a graph without modules";
  std::set<std::string> names;
  for (const dag::ModuleSpec& m : g.modules) {
    CheckLocation(m.where, source, "module");
    FUZZ_CHECK(!m.components.empty() || !m.timer_components.empty())
        << m.where.ToString() << ": a module without components";
    for (const dag::ComponentSpec& c : m.components) {
      CheckLocation(c.where, source, "component \"" + c.name + "\"");
      FUZZ_CHECK(!c.class_name.empty() && !c.name.empty())
          << c.where.ToString() << ": empty class_name or name";
      FUZZ_CHECK(names.insert(c.name).second)
          << c.where.ToString() << ": name \"" << c.name << "\" repeats";
      for (const dag::ReaderConfig& r : c.readers) {
        CheckLocation(r.where, source, "reader");
        FUZZ_CHECK(!r.channel.empty() && r.pending_queue_size >= 1)
            << r.where.ToString() << ": reader \"" << r.channel << "\" queue "
            << r.pending_queue_size;
      }
      FUZZ_CHECK(c.config_file_path.empty() || ExistingFile(c.config_file_path))
          << c.config_file_path;
      FUZZ_CHECK(c.flag_file_path.empty() || ExistingFile(c.flag_file_path))
          << c.flag_file_path;
    }
    for (const dag::TimerComponentSpec& c : m.timer_components) {
      CheckLocation(c.where, source, "timer component \"" + c.name + "\"");
      FUZZ_CHECK(!c.class_name.empty() && !c.name.empty())
          << c.where.ToString() << ": empty class_name or name";
      FUZZ_CHECK(names.insert(c.name).second)
          << c.where.ToString() << ": name \"" << c.name << "\" repeats";
      FUZZ_CHECK(c.interval > absl::ZeroDuration())
          << c.where.ToString() << ": interval " << c.interval;
      FUZZ_CHECK(c.config_file_path.empty() || ExistingFile(c.config_file_path))
          << c.config_file_path;
      FUZZ_CHECK(c.flag_file_path.empty() || ExistingFile(c.flag_file_path))
          << c.flag_file_path;
    }
  }
}

// Two parses of the same text agree (the file loader against ParseGraph).
void CheckSame(const absl::StatusOr<dag::Graph>& a, const absl::StatusOr<dag::Graph>& b) {
  FUZZ_CHECK(a.ok() == b.ok() && a.status() == b.status())
      << "LoadGraphFile: " << a.status() << "; ParseGraph: " << b.status();
  if (!a.ok()) return;
  FUZZ_CHECK(a->modules.size() == b->modules.size()) << "module counts differ";
  for (size_t i = 0; i < a->modules.size(); ++i) {
    const dag::ModuleSpec& x = a->modules[i];
    const dag::ModuleSpec& y = b->modules[i];
    FUZZ_CHECK(x.module_library == y.module_library &&
               x.components.size() == y.components.size() &&
               x.timer_components.size() == y.timer_components.size())
        << "module " << i << " differs";
    for (size_t j = 0; j < x.components.size(); ++j) {
      FUZZ_CHECK(x.components[j].name == y.components[j].name &&
                 x.components[j].readers.size() == y.components[j].readers.size())
          << "component " << j << " differs";
    }
    for (size_t j = 0; j < x.timer_components.size(); ++j) {
      FUZZ_CHECK(x.timer_components[j].name == y.timer_components[j].name &&
                 x.timer_components[j].interval == y.timer_components[j].interval)
          << "timer component " << j << " differs";
    }
  }
}

// The names used more than once across `graphs`.
std::set<std::string> RepeatedNames(const std::vector<dag::Graph>& graphs) {
  std::set<std::string> seen, repeated;
  for (const dag::Graph& g : graphs) {
    for (const dag::ModuleSpec& m : g.modules) {
      for (const auto& c : m.components) {
        if (!seen.insert(c.name).second) repeated.insert(c.name);
      }
      for (const auto& c : m.timer_components) {
        if (!seen.insert(c.name).second) repeated.insert(c.name);
      }
    }
  }
  return repeated;
}

bool NamesAny(const absl::Status& s, const std::set<std::string>& names) {
  for (const std::string& n : names) {
    if (s.message().find("\"" + n + "\"") != absl::string_view::npos) return true;
  }
  return false;
}

// The first class (in launch order) the registry does not know, and where
// it is named; false if all are known. Sets `would_dlopen` if the launcher
// would try a module_library for it.
bool FirstUnknownClass(const std::vector<dag::Graph>& graphs, std::string* where,
                       std::string* class_name, bool* would_dlopen) {
  const ComponentRegistry& registry = ComponentRegistry::Global();
  bool found = false;
  for (const dag::Graph& g : graphs) {
    for (const dag::ModuleSpec& m : g.modules) {
      bool all_known = true;
      for (const auto& c : m.components) all_known = all_known && registry.Contains(c.class_name);
      for (const auto& c : m.timer_components) {
        all_known = all_known && registry.Contains(c.class_name);
      }
      if (all_known) continue;
      if (!m.module_library.empty()) *would_dlopen = true;
      if (found) continue;
      found = true;
      for (const auto& c : m.components) {
        if (!registry.Contains(c.class_name)) {
          *where = c.where.ToString();
          *class_name = c.class_name;
          break;
        }
      }
      if (class_name->empty()) {
        for (const auto& c : m.timer_components) {
          if (!registry.Contains(c.class_name)) {
            *where = c.where.ToString();
            *class_name = c.class_name;
            break;
          }
        }
      }
    }
  }
  return found;
}

bool HasFlagFile(const std::vector<dag::Graph>& graphs) {
  for (const dag::Graph& g : graphs) {
    for (const dag::ModuleSpec& m : g.modules) {
      for (const auto& c : m.components) {
        if (!c.flag_file_path.empty()) return true;
      }
      for (const auto& c : m.timer_components) {
        if (!c.flag_file_path.empty()) return true;
      }
    }
  }
  return false;
}

size_t ComponentCount(const std::vector<dag::Graph>& graphs) {
  size_t n = 0;
  for (const dag::Graph& g : graphs) {
    for (const dag::ModuleSpec& m : g.modules) {
      n += m.components.size() + m.timer_components.size();
    }
  }
  return n;
}

void LaunchAndStop(const std::vector<std::string>& paths,
                   const std::vector<absl::StatusOr<dag::Graph>>& loaded) {
  // What Load() must answer: the first failing file, then the cross-file
  // check, then the first unknown class.
  absl::Status want;
  std::vector<dag::Graph> graphs;
  for (const auto& g : loaded) {
    if (!g.ok()) {
      want = g.status();
      break;
    }
    graphs.push_back(*g);
  }
  std::string unknown_where, unknown_class;
  if (want.ok()) {
    want = dag::CheckGraphs(graphs);
    if (want.ok()) {
      bool would_dlopen = false;
      if (FirstUnknownClass(graphs, &unknown_where, &unknown_class, &would_dlopen)) {
        if (would_dlopen) return;  // the launcher would dlopen() a fuzzed path
        want = absl::NotFoundError("");
      }
    }
  }
  // Before the launcher: its components run on it.
  SimulatedClock clock(Instant() + absl::Hours(1));
  Runtime::Options ro;
  ro.name = "dag_fuzz";
  ro.clock = &clock;
  ro.run_threads = false;
  ro.stack_size = 64 << 10;
  Runtime runtime(ro);
  ComponentContext context;
  context.runtime = &runtime;
  Launcher launcher(context);
  const absl::Status loaded_status = launcher.Load(paths);
  FUZZ_CHECK(loaded_status.code() == want.code())
      << "Launcher::Load: " << loaded_status << ", expected " << want;
  if (want.code() == absl::StatusCode::kNotFound && !unknown_class.empty()) {
    FUZZ_CHECK(loaded_status.message().rfind(unknown_where + ": class_name \"" +
                                                 unknown_class + "\"",
                                             0) == 0)
        << "Launcher::Load: " << loaded_status << ", expected the error at "
        << unknown_where << " naming class \"" << unknown_class << "\"";
  } else if (!want.ok()) {
    FUZZ_CHECK(loaded_status == want) << "Launcher::Load: " << loaded_status
                                      << ", expected " << want;
  }
  if (!loaded_status.ok() || HasFlagFile(graphs)) return;
  const absl::Status started = launcher.Start();
  if (started.ok()) {
    FUZZ_CHECK(launcher.Stats().size() == ComponentCount(graphs))
        << "Start() OK with " << launcher.Stats().size() << " of "
        << ComponentCount(graphs) << " components";
    // A few ticks: timer components run Proc() on the scheduler.
    Settle(&runtime, &clock);
    clock.Advance(absl::Milliseconds(4));
    Settle(&runtime, &clock);
  } else {
    FUZZ_CHECK(launcher.Stats().empty())
        << "Start() failed (" << started << ") and left " << launcher.Stats().size()
        << " components running";
  }
  launcher.Stop();
  FUZZ_CHECK(launcher.Stats().empty()) << "Stop() left components running";
}

void FuzzGraphs(const std::string& input) {
  std::vector<std::string> texts;
  size_t begin = 0;
  while (static_cast<int>(texts.size()) < kMaxFiles) {
    const size_t end = input.find(kSeparator, begin);
    texts.push_back(input.substr(begin, end == std::string::npos ? end : end - begin));
    if (end == std::string::npos) break;
    begin = end + 1;
  }
  // Exactly this input's files exist (a relative config_file_path may name
  // one of them), all written before any is read.
  std::vector<std::string> paths;
  for (int i = 0; i < kMaxFiles; ++i) {
    const std::string path = env->dir + "/graph" + std::to_string(i) + ".dag";
    std::error_code ignored;
    fs::remove(path, ignored);
    if (i >= static_cast<int>(texts.size())) continue;
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << texts[i];
    FUZZ_CHECK(out.good()) << "cannot write " << path;
    paths.push_back(path);
  }
  std::vector<absl::StatusOr<dag::Graph>> loaded;
  std::vector<dag::Graph> good;
  for (size_t i = 0; i < texts.size(); ++i) {
    const std::string inline_source = "fuzz/graph" + std::to_string(i) + ".dag";
    const absl::StatusOr<dag::Graph> parsed = dag::ParseGraph(texts[i], inline_source);
    if (parsed.ok()) {
      CheckGraph(*parsed, inline_source);
    } else {
      CheckError(parsed.status(), inline_source, "ParseGraph");
    }
    // The same text from a file: relative paths now also resolve next to it.
    const std::string& path = paths[i];
    absl::StatusOr<dag::Graph> from_file = dag::LoadGraphFile(path);
    CheckSame(from_file, dag::ParseGraph(texts[i], path));
    if (from_file.ok()) {
      CheckGraph(*from_file, path);
      good.push_back(*from_file);
    } else {
      CheckError(from_file.status(), path, "LoadGraphFile");
    }
    loaded.push_back(std::move(from_file));
  }
  // Names across files.
  if (!good.empty()) {
    const std::set<std::string> repeated = RepeatedNames(good);
    const absl::Status checked = dag::CheckGraphs(good);
    FUZZ_CHECK(checked.ok() == repeated.empty())
        << "CheckGraphs: " << checked << " with " << repeated.size() << " repeated names";
    if (!checked.ok()) {
      FUZZ_CHECK(checked.code() == absl::StatusCode::kInvalidArgument && NamesAny(checked, repeated))
          << "CheckGraphs: " << checked;
    }
    const absl::Status twice = dag::CheckGraphs({good.front(), good.front()});
    FUZZ_CHECK(twice.code() == absl::StatusCode::kInvalidArgument &&
               twice.message().find("is the same dag file loaded twice?") !=
                   absl::string_view::npos)
        << "the same graph twice: " << twice;
  }
  LaunchAndStop(paths, loaded);
}

}  // namespace
}  // namespace fuzz
}  // namespace cyber

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  cyber::fuzz::QuietLogging();
  cyber::fuzz::SetUpEnvironment();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  cyber::fuzz::FuzzGraphs(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
