#include "cyber/component/component_base.h"

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "cyber/common/log.h"
#include "gflags/gflags.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"

namespace cyber {

namespace {

// Whether `value` parses as a value of a gflags flag of type `type`.
bool ParsesAs(const std::string& type, const std::string& value) {
  if (type == "string") return true;
  if (type == "bool") {
    bool b;
    return absl::SimpleAtob(value, &b);
  }
  if (type == "int32") {
    int32_t v;
    return absl::SimpleAtoi(value, &v);
  }
  if (type == "uint32") {
    uint32_t v;
    return absl::SimpleAtoi(value, &v);
  }
  if (type == "int64") {
    int64_t v;
    return absl::SimpleAtoi(value, &v);
  }
  if (type == "uint64") {
    uint64_t v;
    return absl::SimpleAtoi(value, &v);
  }
  if (type == "double") {
    double v;
    return absl::SimpleAtod(value, &v);
  }
  return true;  // a type this check does not know: gflags decides
}

}  // namespace

absl::Status CheckFlagFile(const std::string& path) {
  std::ifstream in(path);
  if (!in.is_open()) {
    return absl::NotFoundError(absl::StrCat(path, ": cannot open flag file"));
  }
  std::string raw;
  for (int line = 1; std::getline(in, raw); ++line) {
    const std::string text(absl::StripAsciiWhitespace(raw));
    if (text.empty() || text[0] == '#') continue;
    auto bad = [&](const std::string& why) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ":", line, ": \"", text, "\": ", why));
    };
    if (text[0] != '-') {
      return bad("not a flag (expected --name=value)");
    }
    const absl::string_view flag =
        absl::StripPrefix(absl::StripPrefix(text, "-"), "-");
    const size_t eq = flag.find('=');
    const std::string name(flag.substr(0, eq));
    gflags::CommandLineFlagInfo info;
    if (name.empty()) return bad("not a flag (expected --name=value)");
    if (eq == absl::string_view::npos) {
      // gflags' boolean forms --name and --noname.
      if (gflags::GetCommandLineFlagInfo(name.c_str(), &info) && info.type == "bool") {
        continue;
      }
      if (absl::StartsWith(name, "no") &&
          gflags::GetCommandLineFlagInfo(name.substr(2).c_str(), &info) &&
          info.type == "bool") {
        continue;
      }
      if (gflags::GetCommandLineFlagInfo(name.c_str(), &info)) {
        return bad(absl::StrCat("flag --", name, " needs a value (--", name, "=value)"));
      }
      return bad(absl::StrCat("unknown flag --", name));
    }
    if (!gflags::GetCommandLineFlagInfo(name.c_str(), &info)) {
      return bad(absl::StrCat("unknown flag --", name));
    }
    const std::string value(flag.substr(eq + 1));
    if (!ParsesAs(info.type, value)) {
      return bad(absl::StrCat("value \"", value, "\" is not a valid ", info.type,
                              " (flag --", name, ")"));
    }
  }
  if (in.bad()) {
    return absl::DataLossError(absl::StrCat(path, ": error reading flag file"));
  }
  return absl::OkStatus();
}

ComponentBase::~ComponentBase() = default;

absl::Status ComponentBase::Initialize(const dag::ComponentSpec& spec,
                                       const ComponentContext&) {
  return absl::InvalidArgumentError(absl::StrCat(
      spec.where.ToString(), ": component \"", spec.name, "\": class \"",
      spec.class_name,
      "\" is a timer component; list it under timer_components"));
}

absl::Status ComponentBase::Initialize(const dag::TimerComponentSpec& spec,
                                       const ComponentContext&) {
  return absl::InvalidArgumentError(absl::StrCat(
      spec.where.ToString(), ": component \"", spec.name, "\": class \"",
      spec.class_name,
      "\" is not a timer component; list it under components"));
}

absl::Status ComponentBase::SetUp(const std::string& class_name,
                                  const std::string& name,
                                  const std::string& config_file_path,
                                  const std::string& flag_file_path,
                                  const ComponentContext& context) {
  class_name_ = class_name;
  name_ = name;
  config_file_path_ = config_file_path;
  flag_file_path_ = flag_file_path;
  if (!flag_file_path_.empty()) {
    // Like Cyber RT: the component's flag file sets process flags. gflags
    // skips lines it does not understand and unknown flags without a word,
    // so the file is checked first, line by line; nothing is set unless
    // every line is good.
    absl::Status checked = CheckFlagFile(flag_file_path_);
    if (!checked.ok()) {
      return absl::Status(checked.code(), absl::StrCat("component \"", name_,
                                                       "\": flag_file_path: ",
                                                       checked.message()));
    }
    if (!gflags::ReadFromFlagsFile(flag_file_path_, nullptr, false)) {
      // A flag's validator refused its value (gflags logged which).
      return absl::InvalidArgumentError(
          absl::StrCat("component \"", name_, "\": flag_file_path \"",
                       flag_file_path_, "\": a value was refused by its flag's validator"));
    }
  }
  observer_ = context.observer;
  node_ = context.runtime != nullptr
              ? std::make_shared<Node>(name_, context.runtime)
              : std::make_shared<Node>(name_);  // the current runtime's
  return absl::OkStatus();
}

namespace {

// Collects the parser's complaints as "path:line:column: message".
class ConfigErrors final : public google::protobuf::io::ErrorCollector {
 public:
  explicit ConfigErrors(std::string path) : path_(std::move(path)) {}
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    errors_.push_back(absl::StrCat(path_, ":", line + 1, ":", column + 1, ": ", message));
  }
  void AddWarning(int, google::protobuf::io::ColumnNumber,
                  const std::string&) override {}
  std::string Joined() const { return absl::StrJoin(errors_, "; "); }

 private:
  const std::string path_;
  std::vector<std::string> errors_;
};

}  // namespace

absl::Status ComponentBase::ReadProtoConfig(google::protobuf::Message* config) const {
  const std::string type =
      config != nullptr ? config->GetDescriptor()->full_name() : std::string("(null)");
  if (config == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("component \"", name_, "\": GetProtoConfig: config is null"));
  }
  if (config_file_path_.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "component \"", name_, "\": GetProtoConfig(", type,
        "): its graph entry has no config_file_path"));
  }
  std::ifstream in(config_file_path_, std::ios::binary);
  std::stringstream content;
  if (in.is_open()) content << in.rdbuf();
  if (!in.is_open() || in.bad()) {
    return absl::NotFoundError(absl::StrCat("component \"", name_,
                                            "\": config_file_path \"", config_file_path_,
                                            "\" could not be read"));
  }
  if (absl::EndsWith(config_file_path_, ".bin")) {
    if (!config->ParseFromString(content.str())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "component \"", name_, "\": config_file_path \"", config_file_path_,
          "\" is not a binary ", type, " message"));
    }
    return absl::OkStatus();
  }
  ConfigErrors errors(config_file_path_);
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(content.str(), config)) {
    return absl::InvalidArgumentError(absl::StrCat("component \"", name_, "\": config of type ",
                                                   type, ": ", errors.Joined()));
  }
  return absl::OkStatus();
}

void ComponentBase::LogConfigError(const absl::Status& status) const {
  AERROR << status.message();
}

ComponentStats ComponentBase::BaseStats() const {
  ComponentStats s;
  s.name = name_;
  s.class_name = class_name_;
  s.procs = procs_.load();
  s.proc_failures = proc_failures_.load();
  s.exceptions = exceptions_.load();
  s.timers = timers_.Timers();
  return s;
}

bool ComponentBase::RunInit() {
  const timer::ScopedTimerOwner owner(&timers_);
  return Init();
}

void ComponentBase::RecordProc(bool ok) {
  procs_.fetch_add(1, std::memory_order_relaxed);
  if (!ok) {
    proc_failures_.fetch_add(1, std::memory_order_relaxed);
    LogFailure("returned false");
  }
  if (observer_ != nullptr) observer_->OnProc(name_, ok);
}

void ComponentBase::RecordThrow(const char* what) {
  procs_.fetch_add(1, std::memory_order_relaxed);
  proc_failures_.fetch_add(1, std::memory_order_relaxed);
  exceptions_.fetch_add(1, std::memory_order_relaxed);
  LogFailure(what != nullptr ? absl::StrCat("threw: ", what)
                             : std::string("threw a non-std::exception"));
  if (observer_ != nullptr) observer_->OnProc(name_, false);
}

void ComponentBase::LogFailure(const std::string& what_happened) const {
  // Proc() is never concurrent with itself: the counts are this call's.
  const uint64_t failures = proc_failures_.load(std::memory_order_relaxed);
  if (failures > kFailuresLoggedEach && failures % kFailuresLoggedEvery != 0) return;
  AERROR << "component \"" << name_ << "\" (" << class_name_ << "): Proc() "
         << what_happened << " (failures so far: " << failures << " of "
         << procs_.load(std::memory_order_relaxed) << " calls, "
         << exceptions_.load(std::memory_order_relaxed) << " threw)"
         << (failures == kFailuresLoggedEach
                 ? absl::StrCat("; from now on every ", kFailuresLoggedEvery,
                                "th failure is logged")
                 : std::string());
}

}  // namespace cyber
