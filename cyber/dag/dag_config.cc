#include "cyber/dag/dag_config.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <system_error>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "cyber/common/log.h"
#include "cyber/dag/dag.pb.h"
#include "cyber/dag/dag_text.h"
#include "timer/period_rules.h"
#include "timer/timing_wheel.h"

namespace cyber {
namespace dag {


namespace {

namespace fs = std::filesystem;

// "component \"name\"", or "components[index]" while the name is unknown.
std::string ComponentLabel(bool timer, const std::string& name, int index) {
  if (!name.empty()) {
    return absl::StrCat(timer ? "timer component \"" : "component \"", name,
                        "\"");
  }
  return absl::StrCat(timer ? "timer_components[" : "components[", index,
                      "]");
}

// `value` of a string field as a message shows it: `field "value"`, or
// `field is missing` when it was not written at all.
std::string DescribeEmpty(const google::protobuf::Message& msg,
                          const char* field) {
  const google::protobuf::FieldDescriptor* descriptor =
      msg.GetDescriptor()->FindFieldByName(field);
  ACHECK(descriptor != nullptr) << msg.GetTypeName() << " has no " << field;
  if (msg.GetReflection()->HasField(msg, descriptor)) {
    return absl::StrCat(field, " \"\" is empty");
  }
  return absl::StrCat(field, " is missing");
}

// Turns one parsed dag text into a Graph, checking every value. Holds the
// bases for resolving relative file paths; one instance per file.
class GraphBuilder {
 public:
  explicit GraphBuilder(const std::string& source) : source_(source) {
    std::error_code error;
    cwd_ = fs::current_path(error);  // stays empty if unknown
    const fs::path dag_dir = fs::path(source).parent_path();
    dag_dir_ = dag_dir.is_absolute() ? dag_dir : cwd_ / dag_dir;
    // Set by `bazel run` to the directory its user's shell was in.
    const char* shell_dir = std::getenv("BUILD_WORKING_DIRECTORY");
    if (shell_dir != nullptr && fs::path(shell_dir).is_absolute()) {
      build_working_dir_ = shell_dir;
    }
  }

  absl::StatusOr<Graph> Build(const DagText& text) const;

 private:
  SourceLocation At(TextPosition position) const {
    SourceLocation where;
    where.file = source_;
    if (position.line >= 0) {
      where.line = position.line + 1;
      where.column = position.column + 1;
    }
    return where;
  }

  absl::Status Invalid(TextPosition position, absl::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat(At(position).ToString(), ": ", what));
  }

  absl::StatusOr<ModuleSpec> MakeModule(const ModuleConfig& module,
                                        const FieldPositions& at,
                                        int index) const;
  absl::StatusOr<ComponentSpec> MakeComponent(const ComponentInfo& info,
                                              const FieldPositions& at,
                                              int index) const;
  absl::StatusOr<TimerComponentSpec> MakeTimerComponent(
      const TimerComponentInfo& info, const FieldPositions& at,
      int index) const;
  absl::StatusOr<ReaderConfig> MakeReader(const ReaderOption& reader,
                                          const FieldPositions& at, int index,
                                          const std::string& owner) const;

  // class_name and config.name, which both kinds of component have.
  template <typename Info>
  absl::Status CheckNames(const Info& info, const FieldPositions& at,
                          bool timer, int index) const;

  // unread_outputs, remote_inputs and remote_services, which both kinds
  // of config have.
  template <typename Config, typename Spec>
  absl::Status ReadDeclaredNames(const Config& config, const FieldPositions& at,
                                 const std::string& owner, Spec* spec) const;
  // One of them: `field` of `config`, naming `noun`s ("channel",
  // "service"), `verb` what the component does with them ("writes",
  // "reads", "calls").
  template <typename Config>
  absl::Status ReadNameList(const Config& config, const FieldPositions& at,
                            const std::string& owner, const char* field,
                            const google::protobuf::RepeatedPtrField<std::string>& list,
                            const char* noun, const char* verb,
                            std::vector<std::string>* out) const;

  // What both kinds of component read alike from their config:
  // unread_outputs, remote_inputs, remote_services, config_file_path and
  // flag_file_path.
  template <typename Config, typename Spec>
  absl::Status ReadSharedFields(const Config& config, const FieldPositions& at,
                                const std::string& owner, Spec* spec) const;

  // config_file_path and flag_file_path, which both kinds of config have.
  template <typename Config>
  absl::Status ResolveFiles(const Config& config, const FieldPositions& at,
                            const std::string& owner,
                            std::string* config_file_path,
                            std::string* flag_file_path) const;

  // The existing regular file `value` names (see dag_config.h), or NotFound
  // naming `field`, `value` and every place tried.
  absl::StatusOr<std::string> ResolveFile(const std::string& value,
                                          TextPosition position,
                                          const std::string& owner,
                                          const char* field) const;

  const std::string& source_;
  fs::path cwd_;
  fs::path dag_dir_;  // absolute unless the current directory is unknown
  fs::path build_working_dir_;  // $BUILD_WORKING_DIRECTORY, or empty
};

absl::StatusOr<Graph> GraphBuilder::Build(const DagText& text) const {
  const DagConfig& dag = text.config;
  const FieldPositions at = text.positions();
  if (dag.module_config_size() == 0) {
    return Invalid(at.self(),
                   "no module_config: a dag file must declare at least one "
                   "module");
  }
  Graph graph;
  graph.path = source_;
  for (int i = 0; i < dag.module_config_size(); ++i) {
    absl::StatusOr<ModuleSpec> module = MakeModule(
        dag.module_config(i), at.Nested(dag, "module_config", i), i);
    if (!module.ok()) return module.status();
    graph.modules.push_back(*std::move(module));
  }
  return graph;
}

absl::StatusOr<ModuleSpec> GraphBuilder::MakeModule(const ModuleConfig& module,
                                                    const FieldPositions& at,
                                                    int index) const {
  ModuleSpec spec;
  spec.module_library = module.module_library();
  spec.where = At(at.self());
  if (module.components_size() == 0 && module.timer_components_size() == 0) {
    return Invalid(
        at.self(),
        absl::StrCat("module_config[", index, "]",
                     module.module_library().empty()
                         ? ""
                         : absl::StrCat(" (module_library \"",
                                        module.module_library(), "\")"),
                     " has no components and no timer_components"));
  }
  for (int i = 0; i < module.components_size(); ++i) {
    absl::StatusOr<ComponentSpec> component = MakeComponent(
        module.components(i), at.Nested(module, "components", i), i);
    if (!component.ok()) return component.status();
    spec.components.push_back(*std::move(component));
  }
  for (int i = 0; i < module.timer_components_size(); ++i) {
    absl::StatusOr<TimerComponentSpec> component = MakeTimerComponent(
        module.timer_components(i), at.Nested(module, "timer_components", i),
        i);
    if (!component.ok()) return component.status();
    spec.timer_components.push_back(*std::move(component));
  }
  return spec;
}

template <typename Info>
absl::Status GraphBuilder::CheckNames(const Info& info,
                                      const FieldPositions& at, bool timer,
                                      int index) const {
  const std::string& name = info.config().name();
  if (info.class_name().empty()) {
    return Invalid(at.Of(info, "class_name"),
                   absl::StrCat(ComponentLabel(timer, name, index), ": ",
                                DescribeEmpty(info, "class_name")));
  }
  if (name.empty()) {
    const FieldPositions config_at = at.Nested(info, "config");
    return Invalid(
        config_at.Of(info.config(), "name"),
        absl::StrCat(ComponentLabel(timer, name, index), " (class_name \"",
                     info.class_name(), "\"): config.",
                     info.has_config() ? DescribeEmpty(info.config(), "name")
                                       : "name is missing (no config)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<ComponentSpec> GraphBuilder::MakeComponent(
    const ComponentInfo& info, const FieldPositions& at, int index) const {
  if (absl::Status s = CheckNames(info, at, /*timer=*/false, index); !s.ok()) {
    return s;
  }
  const ComponentConfig& config = info.config();
  const FieldPositions config_at = at.Nested(info, "config");
  ComponentSpec spec;
  spec.class_name = info.class_name();
  spec.name = config.name();
  spec.where = At(at.self());
  const std::string owner = ComponentLabel(/*timer=*/false, spec.name, index);
  for (int i = 0; i < config.readers_size(); ++i) {
    absl::StatusOr<ReaderConfig> reader = MakeReader(
        config.readers(i), config_at.Nested(config, "readers", i), i, owner);
    if (!reader.ok()) return reader.status();
    spec.readers.push_back(*std::move(reader));
  }
  if (absl::Status s = ReadSharedFields(config, config_at, owner, &spec);
      !s.ok()) {
    return s;
  }
  return spec;
}

absl::StatusOr<TimerComponentSpec> GraphBuilder::MakeTimerComponent(
    const TimerComponentInfo& info, const FieldPositions& at,
    int index) const {
  if (absl::Status s = CheckNames(info, at, /*timer=*/true, index); !s.ok()) {
    return s;
  }
  const TimerComponentConfig& config = info.config();
  const FieldPositions config_at = at.Nested(info, "config");
  TimerComponentSpec spec;
  spec.class_name = info.class_name();
  spec.name = config.name();
  spec.where = At(at.self());
  const std::string owner = ComponentLabel(/*timer=*/true, spec.name, index);

  const TextPosition interval_at = config_at.Of(config, "interval");
  if (!config.has_interval()) {
    return Invalid(interval_at,
                   absl::StrCat(owner, ": interval not set (a timer component needs a "
                                "positive one, in milliseconds)"));
  }
  spec.interval = absl::Milliseconds(config.interval());
  // The Timer's own rule and words (timer/period_rules.h); a refusal is
  // this file's error, located.
  if (absl::Status s = timer::CheckPeriod(owner, "interval", spec.interval);
      !s.ok()) {
    return Invalid(interval_at, s.message());
  }
  if (absl::Status s = ReadSharedFields(config, config_at, owner, &spec);
      !s.ok()) {
    return s;
  }
  return spec;
}

template <typename Config, typename Spec>
absl::Status GraphBuilder::ReadSharedFields(const Config& config,
                                            const FieldPositions& at,
                                            const std::string& owner,
                                            Spec* spec) const {
  if (absl::Status s = ReadDeclaredNames(config, at, owner, spec); !s.ok()) {
    return s;
  }
  return ResolveFiles(config, at, owner, &spec->config_file_path,
                      &spec->flag_file_path);
}

absl::StatusOr<ReaderConfig> GraphBuilder::MakeReader(
    const ReaderOption& reader, const FieldPositions& at, int index,
    const std::string& owner) const {
  if (reader.channel().empty()) {
    return Invalid(at.Of(reader, "channel"),
                   absl::StrCat(owner, ": readers[", index,
                                "]: ", DescribeEmpty(reader, "channel")));
  }
  if (reader.pending_queue_size() == 0) {
    return Invalid(at.Of(reader, "pending_queue_size"),
                   absl::StrCat(owner, ": reader of channel \"",
                                reader.channel(),
                                "\": pending_queue_size 0 must be at least 1"));
  }
  ReaderConfig config;
  config.channel = reader.channel();
  config.pending_queue_size = reader.pending_queue_size();
  if (reader.has_qos_profile()) {
    const QosProfile& q = reader.qos_profile();
    if (q.depth() == 0) {
      return Invalid(at.Of(q, "depth"),
                     absl::StrCat(owner, ": reader of channel \"", reader.channel(),
                                  "\": qos_profile depth 0 must be at least 1"));
    }
    config.qos.depth = q.depth();
    config.qos.history = q.history() == HISTORY_KEEP_ALL ? ChannelQos::History::kKeepAll
                                                          : ChannelQos::History::kKeepLast;
    config.qos.reliability = q.reliability() == RELIABILITY_BEST_EFFORT
                                 ? ChannelQos::Reliability::kBestEffort
                                 : ChannelQos::Reliability::kReliable;
    config.qos.durability = q.durability() == DURABILITY_TRANSIENT_LOCAL
                                ? ChannelQos::Durability::kTransientLocal
                                : ChannelQos::Durability::kVolatile;
    config.qos.data_sharing_max_bytes = q.data_sharing_max_bytes();
    // mps (messages per second) is accepted and ignored.
  }
  config.where = At(at.self());
  return config;
}

template <typename Config, typename Spec>
absl::Status GraphBuilder::ReadDeclaredNames(const Config& config,
                                             const FieldPositions& at,
                                             const std::string& owner,
                                             Spec* spec) const {
  if (absl::Status s = ReadNameList(config, at, owner, "unread_outputs",
                                    config.unread_outputs(), "channel", "writes",
                                    &spec->unread_outputs);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = ReadNameList(config, at, owner, "remote_inputs",
                                    config.remote_inputs(), "channel", "reads",
                                    &spec->remote_inputs);
      !s.ok()) {
    return s;
  }
  return ReadNameList(config, at, owner, "remote_services", config.remote_services(),
                      "service", "calls", &spec->remote_services);
}

template <typename Config>
absl::Status GraphBuilder::ReadNameList(
    const Config& config, const FieldPositions& at, const std::string& owner,
    const char* field, const google::protobuf::RepeatedPtrField<std::string>& list,
    const char* noun, const char* verb, std::vector<std::string>* out) const {
  for (int i = 0; i < list.size(); ++i) {
    const std::string& channel = list.Get(i);
    const TextPosition position = at.Of(config, field, i);
    if (channel.empty()) {
      return Invalid(position,
                     absl::StrCat(owner, ": ", field, "[", i, "] \"\" is empty: name a ",
                                  noun, " the component ", verb));
    }
    if (std::find(out->begin(), out->end(), channel) != out->end()) {
      return Invalid(position, absl::StrCat(owner, ": ", field, "[", i,
                                            "] \"", channel,
                                            "\" is listed twice"));
    }
    out->push_back(channel);
  }
  return absl::OkStatus();
}

template <typename Config>
absl::Status GraphBuilder::ResolveFiles(const Config& config,
                                        const FieldPositions& at,
                                        const std::string& owner,
                                        std::string* config_file_path,
                                        std::string* flag_file_path) const {
  const struct {
    const char* field;
    const std::string& value;
    std::string* out;
  } files[] = {
      {"config_file_path", config.config_file_path(), config_file_path},
      {"flag_file_path", config.flag_file_path(), flag_file_path},
  };
  for (const auto& file : files) {
    if (file.value.empty()) continue;  // not given, as in Cyber RT
    absl::StatusOr<std::string> resolved = ResolveFile(
        file.value, at.Of(config, file.field), owner, file.field);
    if (!resolved.ok()) return resolved.status();
    *file.out = *std::move(resolved);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> GraphBuilder::ResolveFile(
    const std::string& value, TextPosition position, const std::string& owner,
    const char* field) const {
  const fs::path written(value);
  // The rule of dag_config.h, in order; each place with what it is.
  std::vector<std::pair<fs::path, const char*>> tried;
  auto add = [&](const fs::path& candidate, const char* what) {
    for (const auto& t : tried) {
      if (t.first == candidate) return;  // one place, tried once
    }
    tried.emplace_back(candidate, what);
  };
  if (written.is_absolute()) {
    add(written, "");
  } else {
    add(cwd_ / written, " (current directory)");
    add(dag_dir_ / written, " (the dag's directory)");
    if (!build_working_dir_.empty()) {
      add(build_working_dir_ / written, " ($BUILD_WORKING_DIRECTORY)");
    }
  }
  for (const auto& candidate : tried) {
    std::error_code error;
    if (fs::is_regular_file(candidate.first, error)) return candidate.first.string();
  }
  return absl::NotFoundError(absl::StrCat(
      At(position).ToString(), ": ", owner, ": ", field, " \"", value,
      "\": no such file (tried ",
      absl::StrJoin(tried, ", ",
                    [](std::string* out, const std::pair<fs::path, const char*>& t) {
                      absl::StrAppend(out, "\"", t.first.string(), "\"", t.second);
                    }),
      ")"));
}

// Fails at the first component name (timer or not) used twice in `graphs`.
// Within a file, "first" is the earlier one in the text.
absl::Status CheckUniqueNames(const std::vector<const Graph*>& graphs) {
  struct Definition {
    const std::string* name;
    const SourceLocation* where;
    bool timer;
    const Graph* graph;
  };
  std::map<absl::string_view, Definition> first_definitions;
  for (const Graph* graph : graphs) {
    std::vector<Definition> definitions;
    for (const ModuleSpec& module : graph->modules) {
      for (const ComponentSpec& c : module.components) {
        definitions.push_back({&c.name, &c.where, /*timer=*/false, graph});
      }
      for (const TimerComponentSpec& c : module.timer_components) {
        definitions.push_back({&c.name, &c.where, /*timer=*/true, graph});
      }
    }
    std::stable_sort(definitions.begin(), definitions.end(),
                     [](const Definition& a, const Definition& b) {
                       return std::tie(a.where->line, a.where->column) <
                              std::tie(b.where->line, b.where->column);
                     });
    for (const Definition& d : definitions) {
      auto [first, inserted] = first_definitions.emplace(*d.name, d);
      if (inserted) continue;
      const Definition& f = first->second;
      const bool same_place = f.graph != d.graph &&
                              f.where->file == d.where->file &&
                              f.where->line == d.where->line &&
                              f.where->column == d.where->column;
      return absl::InvalidArgumentError(absl::StrCat(
          d.where->ToString(), ": ", ComponentLabel(d.timer, *d.name, 0),
          ": name is already used by the ",
          f.timer ? "timer component" : "component", " at ",
          f.where->ToString(),
          same_place ? " (is the same dag file loaded twice?)" : "",
          "; component names must be unique across all dag files"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Graph> Parse(const std::string& text,
                            const std::string& source) {
  absl::StatusOr<DagText> parsed = ParseDagText(text, source);
  if (!parsed.ok()) return parsed.status();
  absl::StatusOr<Graph> graph = GraphBuilder(source).Build(*parsed);
  if (!graph.ok()) return graph;
  if (absl::Status s = CheckUniqueNames({&*graph}); !s.ok()) return s;
  return graph;
}

absl::StatusOr<std::string> ReadDagFile(const std::string& path) {
  struct Closer {
    void operator()(std::FILE* file) const { std::fclose(file); }
  };
  std::unique_ptr<std::FILE, Closer> file(std::fopen(path.c_str(), "r"));
  if (file == nullptr) {
    return absl::ErrnoToStatus(errno,
                               absl::StrCat(path, ": cannot open dag file"));
  }
  std::string text;
  char chunk[8192];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof(chunk), file.get())) > 0) {
    text.append(chunk, n);
  }
  if (std::ferror(file.get())) {
    return absl::ErrnoToStatus(errno,
                               absl::StrCat(path, ": cannot read dag file"));
  }
  return text;
}

}  // namespace

std::string SourceLocation::ToString() const {
  if (line <= 0) return file;
  return absl::StrCat(file, ":", line, ":", column);
}

absl::StatusOr<Graph> ParseGraph(const std::string& text,
                                 const std::string& source) {
  return Parse(text, source);
}

absl::StatusOr<Graph> LoadGraphFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadDagFile(path);
  if (!text.ok()) return text.status();
  return ParseGraph(*text, path);
}

absl::Status CheckGraphs(const std::vector<Graph>& graphs) {
  std::vector<const Graph*> pointers;
  pointers.reserve(graphs.size());
  for (const Graph& graph : graphs) pointers.push_back(&graph);
  return CheckUniqueNames(pointers);
}

}  // namespace dag
}  // namespace cyber
