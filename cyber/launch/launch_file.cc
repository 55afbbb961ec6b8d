#include "cyber/launch/launch_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cyber/common/nearest_name.h"
#include "cyber/launch/xml_document.h"

namespace cyber {
namespace launch {
namespace {

bool IsFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string CurrentDirectory() {
  char buf[4096];
  return getcwd(buf, sizeof(buf)) != nullptr ? std::string(buf) : std::string(".");
}

std::string JoinPath(const std::string& dir, const std::string& name) {
  if (dir.empty() || dir == ".") return name;
  return absl::StrCat(dir, dir.back() == '/' ? "" : "/", name);
}

const std::vector<std::string>& ModuleElements() {
  static const auto* names = new std::vector<std::string>{
      "name",          "dag_conf",    "process_name",    "exception_handler",
      "respawn_limit", "type",        "respawn_delay",   "respawn_on",
      "required",      "start_after", "wait_for_writer", "ready_timeout"};
  return *names;
}

// Reads one <module> and files it into `plan` (its process created or
// extended); `set` remembers, per process and setting, the value and where
// it was given.
class PlanBuilder {
 public:
  PlanBuilder(const std::string& file, const LaunchParseOptions& options)
      : file_(file), options_(options) {}

  absl::Status AddModule(const XmlElement& module) {
    const std::string where = absl::StrCat(file_, ":", module.line);
    std::optional<std::string> name;
    std::string process_name;
    std::vector<const XmlElement*> dags;
    std::vector<const XmlElement*> settings;
    for (const XmlElement& e : module.children) {
      const std::string value(absl::StripAsciiWhitespace(e.text));
      const std::string at = At(e);
      if (!e.children.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(
            at, "<", e.name, "> holds an element <", e.children[0].name, ">; it takes text only"));
      }
      if (e.name == "name") {
        if (name.has_value()) {
          return absl::InvalidArgumentError(
              absl::StrCat(at, "<name>: a module has one name; \"", *name, "\" was given before"));
        }
        name = value;
      } else if (e.name == "dag_conf") {
        dags.push_back(&e);
      } else if (e.name == "process_name") {
        process_name = value;
      } else if (e.name == "type") {
        if (value != "library") {
          return absl::InvalidArgumentError(absl::StrCat(
              at, "<type>: \"", value,
              "\" is not supported (only \"library\": components in dag files, run by mainboard)"));
        }
      } else if (std::find(ModuleElements().begin(), ModuleElements().end(), e.name) !=
                 ModuleElements().end()) {
        settings.push_back(&e);
      } else {
        std::optional<std::string> near = NearestName(e.name, ModuleElements());
        return absl::InvalidArgumentError(absl::StrCat(
            at, "<", e.name, "> is not an element of <module>",
            near.has_value() ? absl::StrCat(" (did you mean <", *near, ">?)") : std::string(),
            "; known: ", absl::StrJoin(ModuleElements(), ", ")));
      }
    }
    if (!name.has_value() || name->empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": <module> has no <name> (every module is named)"));
    }
    for (const std::string& m : module_names_) {
      if (m == *name) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": <name>: module \"", *name, "\" is named twice"));
      }
    }
    module_names_.push_back(*name);
    if (dags.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": module \"", *name, "\" has no <dag_conf> (a graph file to run)"));
    }
    if (process_name.empty()) process_name = kDefaultProcessName;
    for (char c : process_name) {
      if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' &&
          c != '.') {
        return absl::InvalidArgumentError(absl::StrCat(
            where, ": <process_name>: \"", process_name,
            "\" has the character '", std::string(1, c),
            "'; use letters, digits, '_', '-' and '.' (it names the process's log file)"));
      }
    }
    ProcessPlan* process = nullptr;
    for (ProcessPlan& p : plan_.processes) {
      if (p.name == process_name) process = &p;
    }
    if (process == nullptr) {
      plan_.processes.emplace_back();
      process = &plan_.processes.back();
      process->name = process_name;
      process->where = where;
    }
    process->modules.push_back(*name);
    for (const XmlElement* d : dags) {
      absl::StatusOr<std::string> path = ResolveDag(*d);
      if (!path.ok()) return path.status();
      process->dag_files.push_back(*path);
    }
    for (const XmlElement* s : settings) {
      const absl::Status status = ApplySetting(*s, process);
      if (!status.ok()) return status;
    }
    return absl::OkStatus();
  }

  absl::StatusOr<LaunchPlan> Finish(const XmlElement& root) {
    if (plan_.processes.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(file_, ":", root.line, ": <cyber> has no <module>: nothing to launch"));
    }
    plan_.file = file_;
    return plan_;
  }

 private:
  std::string At(const XmlElement& e) const { return absl::StrCat(file_, ":", e.line, ": "); }

  absl::StatusOr<std::string> ResolveDag(const XmlElement& e) {
    const std::string value(absl::StripAsciiWhitespace(e.text));
    if (value.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(At(e), "<dag_conf> is empty"));
    }
    if (!options_.check_dag_files) {
      return value[0] == '/' ? value : JoinPath(options_.base_dir, value);
    }
    if (value[0] == '/') {
      if (IsFile(value)) return value;
      return absl::InvalidArgumentError(
          absl::StrCat(At(e), "<dag_conf>: \"", value, "\" is not a file"));
    }
    const std::string beside = JoinPath(options_.base_dir, value);
    if (IsFile(beside)) return beside;
    if (IsFile(value)) return JoinPath(CurrentDirectory(), value);
    return absl::InvalidArgumentError(absl::StrCat(
        At(e), "<dag_conf>: \"", value, "\" is not a file beside the launch file (",
        options_.base_dir.empty() ? "." : options_.base_dir, ") nor in the current directory (",
        CurrentDirectory(), ")"));
  }

  // Records that `setting` of `process` is `normalized` at `e`; an error if
  // another module of the process gave another value.
  absl::Status Agree(const XmlElement& e, const ProcessPlan& process,
                     const std::string& normalized) {
    auto [it, inserted] =
        set_.try_emplace(std::make_pair(process.name, e.name), normalized, At(e));
    if (!inserted && it->second.first != normalized) {
      return absl::InvalidArgumentError(absl::StrCat(
          At(e), "<", e.name, ">: \"", normalized, "\" differs from \"", it->second.first,
          "\" given for process \"", process.name, "\" at ",
          it->second.second.substr(0, it->second.second.size() - 2),
          " (modules of one process share its settings)"));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<absl::Duration> ParseDurationElement(const XmlElement& e,
                                                      const std::string& value) {
    absl::Duration d;
    if (!absl::ParseDuration(value, &d) || d < absl::ZeroDuration() ||
        d == absl::InfiniteDuration()) {
      return absl::InvalidArgumentError(absl::StrCat(
          At(e), "<", e.name, ">: \"", value,
          "\" is not a duration (a number with a unit: 500ms, 1s, 1.5s, 2m)"));
    }
    return d;
  }

  absl::Status ApplySetting(const XmlElement& e, ProcessPlan* p) {
    const std::string value(absl::StripAsciiWhitespace(e.text));
    const std::string& n = e.name;
    if (n == "exception_handler") {
      if (value == "respawn") {
        p->exception_handler = ExceptionHandler::kRespawn;
      } else if (value == "exit") {
        p->exception_handler = ExceptionHandler::kExit;
      } else {
        return absl::InvalidArgumentError(absl::StrCat(
            At(e), "<exception_handler>: \"", value, "\" is not respawn or exit"));
      }
      return Agree(e, *p, value);
    }
    if (n == "respawn_limit") {
      int limit = 0;
      if (!absl::SimpleAtoi(value, &limit) || limit < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            At(e), "<respawn_limit>: \"", value, "\" is not a whole number >= 0"));
      }
      p->respawn_limit = limit;
      return Agree(e, *p, absl::StrCat(limit));
    }
    if (n == "respawn_delay" || n == "ready_timeout") {
      absl::StatusOr<absl::Duration> d = ParseDurationElement(e, value);
      if (!d.ok()) return d.status();
      (n == "respawn_delay" ? p->respawn_delay : p->ready_timeout) = *d;
      return Agree(e, *p, absl::FormatDuration(*d));
    }
    if (n == "respawn_on") {
      if (value == "failure") {
        p->respawn_on = RespawnOn::kFailure;
      } else if (value == "always") {
        p->respawn_on = RespawnOn::kAlways;
      } else {
        return absl::InvalidArgumentError(
            absl::StrCat(At(e), "<respawn_on>: \"", value, "\" is not failure or always"));
      }
      return Agree(e, *p, value);
    }
    if (n == "required") {
      if (value == "true") {
        p->required = true;
      } else if (value == "false") {
        p->required = false;
      } else {
        return absl::InvalidArgumentError(
            absl::StrCat(At(e), "<required>: \"", value, "\" is not true or false"));
      }
      return Agree(e, *p, value);
    }
    if (n == "start_after") {
      if (value == p->name) {
        return absl::InvalidArgumentError(absl::StrCat(
            At(e), "<start_after>: process \"", value, "\" cannot wait for itself"));
      }
      bool earlier = false;
      std::vector<std::string> names;
      for (const ProcessPlan& q : plan_.processes) {
        if (&q == p) break;
        earlier = earlier || q.name == value;
        names.push_back(q.name);
      }
      if (!earlier) {
        std::optional<std::string> near = NearestName(value, names);
        return absl::InvalidArgumentError(absl::StrCat(
            At(e), "<start_after>: \"", value,
            "\" is not a process_name that comes earlier in the file",
            near.has_value() ? absl::StrCat(" (did you mean \"", *near, "\"?)") : std::string(),
            names.empty() ? "; none does" : absl::StrCat("; earlier: ", absl::StrJoin(names, ", "))));
      }
      if (std::find(p->start_after.begin(), p->start_after.end(), value) == p->start_after.end()) {
        p->start_after.push_back(value);
      }
      return absl::OkStatus();
    }
    if (n == "wait_for_writer") {
      if (value.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat(At(e), "<wait_for_writer> is empty (a channel name, e.g. /sensor/imu)"));
      }
      if (std::find(p->wait_for_writer.begin(), p->wait_for_writer.end(), value) ==
          p->wait_for_writer.end()) {
        p->wait_for_writer.push_back(value);
      }
      return absl::OkStatus();
    }
    return absl::InternalError(absl::StrCat(At(e), "<", n, "> has no handler"));
  }

  const std::string file_;
  const LaunchParseOptions options_;
  LaunchPlan plan_;
  std::vector<std::string> module_names_;
  // (process, setting) -> (normalized value, "FILE:LINE: ")
  std::map<std::pair<std::string, std::string>, std::pair<std::string, std::string>> set_;
};

}  // namespace

absl::StatusOr<LaunchPlan> ParseLaunch(absl::string_view text, const std::string& file,
                                       const LaunchParseOptions& options) {
  absl::StatusOr<XmlElement> root = ParseXml(text, file);
  if (!root.ok()) return root.status();
  if (root->name != "cyber") {
    return absl::InvalidArgumentError(absl::StrCat(
        file, ":", root->line, ": the root element is <", root->name, ">; a launch file's is <cyber>"));
  }
  PlanBuilder builder(file, options);
  for (const XmlElement& e : root->children) {
    if (e.name != "module") {
      return absl::InvalidArgumentError(absl::StrCat(
          file, ":", e.line, ": <", e.name, "> is not an element of <cyber> (only <module>)"));
    }
    const absl::Status s = builder.AddModule(e);
    if (!s.ok()) return s;
  }
  return builder.Finish(*root);
}

absl::StatusOr<LaunchPlan> ParseLaunchFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("launch file \"", path, "\" cannot be read"));
  std::stringstream text;
  text << in.rdbuf();
  LaunchParseOptions options;
  const size_t slash = path.rfind('/');
  options.base_dir = slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
  return ParseLaunch(text.str(), path, options);
}

const ProcessPlan* FindProcess(const LaunchPlan& plan, absl::string_view name) {
  for (const ProcessPlan& p : plan.processes) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

}  // namespace launch
}  // namespace cyber
