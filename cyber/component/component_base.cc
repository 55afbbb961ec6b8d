#include "cyber/component/component_base.h"

#include "absl/strings/str_cat.h"
#include "cyber/common/log.h"
#include "gflags/gflags.h"

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
