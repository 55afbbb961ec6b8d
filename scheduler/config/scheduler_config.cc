#include "scheduler/config/scheduler_config.h"

#include <cerrno>
#include <cstdio>
#include <memory>
#include <optional>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cyber/common/log.h"
#include "scheduler/config/conf_text.h"
#include "scheduler/config/cpuset.h"
#include "scheduler/config/sched_policy.h"
#include "scheduler/config/scheduler_conf.pb.h"

namespace cyber {
namespace scheduler {
namespace {

// Turns a parsed SchedulerConf into a SchedulerConfig, checking every value.
// One instance per conversion.
class Converter {
 public:
  explicit Converter(const std::string& source) : source_(source) {}

  absl::StatusOr<SchedulerConfig> Convert(const config::SchedulerConf& conf,
                                          const FieldPositions& node) &&;

 private:
  absl::Status Error(TextPosition loc, absl::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat(Where(source_, loc), ": ", what));
  }

  // Checks what Cyber RT has but this scheduler does not apply, and warns.
  absl::Status CheckUnapplied(const config::SchedulerConf& conf,
                              const FieldPositions& node) const;
  absl::StatusOr<ProcessorGroupConfig> ConvertGroup(
      const config::SchedGroup& group, const FieldPositions& node) const;
  absl::Status AddTasks(const config::SchedGroup& group,
                        const FieldPositions& node, ProcessorGroupConfig* out);

  const std::string& source_;
  SchedulerConfig config_;
  // Where each group and task name was first written, for duplicates.
  std::map<std::string, TextPosition> group_locations_;
  std::map<std::string, TextPosition> task_locations_;
};

absl::StatusOr<SchedulerConfig> Converter::Convert(
    const config::SchedulerConf& conf, const FieldPositions& node) && {
  if (!conf.policy().empty() && conf.policy() != "classic") {
    return Error(node.Of(conf, "policy"),
                 absl::StrCat("policy \"", conf.policy(),
                              "\" is not supported: only \"classic\" (or "
                              "empty, meaning classic) is"));
  }
  if (absl::Status s = CheckUnapplied(conf, node); !s.ok()) return s;

  const config::ClassicConf& classic = conf.classic_conf();
  if (classic.groups_size() == 0) {
    if (conf.default_proc_num() > kMaxProcessorsPerGroup) {
      return Error(node.Of(conf, "default_proc_num"),
                   absl::StrCat("default_proc_num ", conf.default_proc_num(),
                                " is out of range 0..", kMaxProcessorsPerGroup,
                                " (0: one per hardware thread)"));
    }
    return DefaultSchedulerConfig(static_cast<int>(conf.default_proc_num()));
  }

  const FieldPositions classic_node = node.Nested(conf, "classic_conf");
  for (int i = 0; i < classic.groups_size(); ++i) {
    const config::SchedGroup& group = classic.groups(i);
    const FieldPositions group_node = classic_node.Nested(classic, "groups", i);
    absl::StatusOr<ProcessorGroupConfig> converted =
        ConvertGroup(group, group_node);
    if (!converted.ok()) return converted.status();

    const TextPosition name_at = group_node.Of(group, "name");
    auto [first, inserted] = group_locations_.emplace(group.name(), name_at);
    if (!inserted) {
      return Error(name_at, absl::StrCat("group \"", group.name(),
                                         "\" is defined twice (first at ",
                                         Where(source_, first->second), ")"));
    }
    if (absl::Status s = AddTasks(group, group_node, &*converted); !s.ok()) {
      return s;
    }
    config_.groups.push_back(*std::move(converted));
  }
  return std::move(config_);
}

absl::Status Converter::CheckUnapplied(const config::SchedulerConf& conf,
                                       const FieldPositions& node) const {
  if (conf.has_process_level_cpuset()) {
    const TextPosition at = node.Of(conf, "process_level_cpuset");
    if (absl::Status s = ParseCpuset(conf.process_level_cpuset()).status();
        !s.ok()) {
      return Error(
          at, absl::StrCat("process_level_cpuset \"",
                           conf.process_level_cpuset(), "\": ", s.message()));
    }
    AWARN << Where(source_, at) << ": process_level_cpuset \""
          << conf.process_level_cpuset()
          << "\" is not applied by this scheduler";
  }
  for (int i = 0; i < conf.threads_size(); ++i) {
    const config::InnerThread& thread = conf.threads(i);
    const FieldPositions thread_node = node.Nested(conf, "threads", i);
    const std::string prefix = absl::StrCat("thread \"", thread.name(), "\": ");
    if (absl::Status s = ParseCpuset(thread.cpuset()).status(); !s.ok()) {
      return Error(thread_node.Of(thread, "cpuset"),
                   absl::StrCat(prefix, "cpuset \"", thread.cpuset(),
                                "\": ", s.message()));
    }
    if (thread.has_policy() && !SchedPolicyFromName(thread.policy())) {
      return Error(
          thread_node.Of(thread, "policy"),
          absl::StrCat(prefix, "policy \"", thread.policy(),
                       "\" is not one of ", SupportedSchedPolicyNames()));
    }
    AWARN << Where(source_, thread_node.self()) << ": " << prefix
          << "settings for named threads are not applied by this scheduler";
  }
  return absl::OkStatus();
}

absl::StatusOr<ProcessorGroupConfig> Converter::ConvertGroup(
    const config::SchedGroup& group, const FieldPositions& node) const {
  if (group.name().empty()) {
    return Error(node.Of(group, "name"), "group name is empty");
  }
  const std::string prefix = absl::StrCat("group \"", group.name(), "\": ");
  ProcessorGroupConfig out;
  out.name = group.name();

  if (group.processor_num() < 1 ||
      group.processor_num() > kMaxProcessorsPerGroup) {
    return Error(node.Of(group, "processor_num"),
                 absl::StrCat(prefix, "processor_num ", group.processor_num(),
                              group.has_processor_num() ? "" : " (not set)",
                              " is out of range 1..", kMaxProcessorsPerGroup));
  }
  out.processor_num = static_cast<int>(group.processor_num());

  absl::StatusOr<std::vector<int>> cpus = ParseCpuset(group.cpuset());
  if (!cpus.ok()) {
    return Error(node.Of(group, "cpuset"),
                 absl::StrCat(prefix, "cpuset \"", group.cpuset(),
                              "\": ", cpus.status().message()));
  }
  out.cpuset = *std::move(cpus);

  if (!group.has_affinity() || group.affinity() == "range") {
    out.affinity = ProcessorGroupConfig::Affinity::kRange;
  } else if (group.affinity() == "1to1") {
    out.affinity = ProcessorGroupConfig::Affinity::kOneToOne;
    if (out.cpuset.empty()) {
      return Error(node.Of(group, "affinity"),
                   absl::StrCat(prefix,
                                "affinity \"1to1\" needs a cpuset to take "
                                "each processor's CPU from"));
    }
  } else {
    return Error(node.Of(group, "affinity"),
                 absl::StrCat(prefix, "affinity \"", group.affinity(),
                              "\" is not \"range\" or \"1to1\""));
  }

  if (group.has_processor_policy()) {
    std::optional<int> policy = SchedPolicyFromName(group.processor_policy());
    if (!policy) {
      return Error(
          node.Of(group, "processor_policy"),
          absl::StrCat(prefix, "processor_policy \"", group.processor_policy(),
                       "\" is not one of ", SupportedSchedPolicyNames()));
    }
    out.policy = *policy;
  }

  const PriorityRange range = *PriorityRangeFor(out.policy);
  if (group.processor_prio() < range.min ||
      group.processor_prio() > range.max) {
    return Error(node.Of(group, "processor_prio"),
                 absl::StrCat(prefix, "processor_prio ", group.processor_prio(),
                              group.has_processor_prio() ? "" : " (not set)",
                              " is out of range ", range.min, "..", range.max,
                              " for ", SchedPolicyName(out.policy)));
  }
  out.priority = group.processor_prio();
  return out;
}

absl::Status Converter::AddTasks(const config::SchedGroup& group,
                                 const FieldPositions& node,
                                 ProcessorGroupConfig* out) {
  for (int j = 0; j < group.tasks_size(); ++j) {
    const config::ClassicTask& task = group.tasks(j);
    const FieldPositions task_node = node.Nested(group, "tasks", j);
    const TextPosition name_at = task_node.Of(task, "name");
    if (task.name().empty()) {
      return Error(name_at, absl::StrCat("group \"", group.name(),
                                         "\": task name is empty"));
    }
    const std::string prefix = absl::StrCat("group \"", group.name(),
                                            "\": task \"", task.name(), "\": ");
    if (task.prio() > kMaxTaskPriority) {
      return Error(
          task_node.Of(task, "prio"),
          absl::StrCat(prefix, "prio ", task.prio(), " is out of range ",
                       kMinTaskPriority, "..", kMaxTaskPriority));
    }
    if (task.has_group_name() && task.group_name() != group.name()) {
      return Error(task_node.Of(task, "group_name"),
                   absl::StrCat(prefix, "group_name \"", task.group_name(),
                                "\" is not the group that lists the task"));
    }
    auto [first, inserted] = task_locations_.emplace(task.name(), name_at);
    if (!inserted) {
      const std::string& first_group = config_.task_groups.at(task.name());
      const std::string where =
          absl::StrCat(" (at ", Where(source_, first->second), ")");
      if (first_group == group.name()) {
        return Error(name_at,
                     absl::StrCat(prefix, "listed twice in the group", where));
      }
      return Error(
          name_at,
          absl::StrCat("task \"", task.name(), "\" is listed in group \"",
                       first_group, "\"", where, " and again in group \"",
                       group.name(), "\""));
    }
    config_.task_groups[task.name()] = group.name();
    out->task_priorities[task.name()] = static_cast<int>(task.prio());
  }
  return absl::OkStatus();
}

absl::StatusOr<SchedulerConfig> Parse(const std::string& text,
                                      const std::string& source) {
  absl::StatusOr<ParsedSchedulerConf> parsed =
      ParseSchedulerConfText(text, source);
  if (!parsed.ok()) return parsed.status();
  return Converter(source).Convert(parsed->conf, parsed->node);
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  struct Closer {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  const std::string what = absl::StrCat("scheduler conf \"", path, "\"");
  std::unique_ptr<std::FILE, Closer> file(std::fopen(path.c_str(), "rb"));
  if (file == nullptr) {
    return absl::ErrnoToStatus(errno, absl::StrCat(what, ": cannot open"));
  }
  std::string text;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), file.get())) > 0) {
    text.append(buffer, n);
  }
  if (std::ferror(file.get())) {
    return absl::ErrnoToStatus(errno, absl::StrCat(what, ": cannot read"));
  }
  return text;
}

}  // namespace

SchedulerConfig DefaultSchedulerConfig(int processors) {
  if (processors < 1) {
    processors = static_cast<int>(std::thread::hardware_concurrency());
    if (processors < 1) processors = 1;
  }
  ProcessorGroupConfig group;
  group.name = "default";
  group.processor_num = processors;
  SchedulerConfig config;
  config.groups.push_back(std::move(group));
  return config;
}

absl::StatusOr<SchedulerConfig> ParseSchedulerConfig(
    const std::string& text, const std::string& source) {
  absl::StatusOr<SchedulerConfig> config = Parse(text, source);
  if (!config.ok()) AERROR << config.status().message();
  return config;
}

absl::StatusOr<SchedulerConfig> LoadSchedulerConfig(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) {
    AERROR << text.status().message();
    return text.status();
  }
  return ParseSchedulerConfig(*text, path);
}

}  // namespace scheduler
}  // namespace cyber
