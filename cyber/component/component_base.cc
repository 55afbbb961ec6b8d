#include "cyber/component/component_base.h"

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cyber/common/log.h"
#include "gflags/gflags.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"

namespace cyber {

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
    // Like Cyber RT: the component's flag file sets process flags.
    if (!gflags::ReadFromFlagsFile(flag_file_path_, nullptr, false)) {
      return absl::InvalidArgumentError(
          absl::StrCat("component \"", name_, "\": flag_file_path \"",
                       flag_file_path_, "\" could not be read as a flag file"));
    }
  }
  node_ = std::make_shared<Node>(name_, context.scheduler, context.bus);
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

void ComponentBase::RecordProc(bool ok) {
  procs_.fetch_add(1, std::memory_order_relaxed);
  if (!ok) {
    const uint64_t failures = proc_failures_.fetch_add(1) + 1;
    AERROR_EVERY(100) << "component \"" << name_ << "\" (" << class_name_
                      << "): Proc() returned false (failures: " << failures
                      << ")";
  }
}

}  // namespace cyber
