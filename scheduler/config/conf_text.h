// Internal to this repository: not part of the API (docs/api.md lists the
// API headers); its Bazel target is visible only inside this repository.
//
// Reading a scheduler conf's protobuf text into the schema
// (scheduler_conf.proto) while remembering where each field was written, so
// the validator (scheduler_config.cc) can say "file:line:column" about any
// value, not only about syntax errors.
//
// Why separate from validation: this part knows protobuf's text-format
// machinery (TextFormat::Parser, ParseInfoTree, tokenizer); the validator
// only knows the schema's meaning.
//
// Shapes: if the first token is `scheduler_conf` the text is a CyberConfig
// (Cyber RT's cyber/conf/*.conf wrapper) and its scheduler_conf is returned;
// otherwise the whole text is a SchedulerConf (an empty text is an empty
// SchedulerConf).
//
// Positions are kept with cyber::FieldPositions (cyber/common/text_proto.h),
// which the graph-file loader shares.
//
// Threads: no shared state; call from any thread. The positions point into
// their ParsedSchedulerConf and must not outlive it.

#ifndef SCHEDULER_CONFIG_CONF_TEXT_H_
#define SCHEDULER_CONFIG_CONF_TEXT_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "cyber/common/text_proto.h"
#include "google/protobuf/text_format.h"
#include "scheduler/config/scheduler_conf.pb.h"

namespace cyber {
namespace scheduler {

struct ParsedSchedulerConf {
  config::SchedulerConf conf;
  FieldPositions node;  // of `conf`; points into `tree`
  std::unique_ptr<google::protobuf::TextFormat::ParseInfoTree> tree;
};

// Syntax errors (unknown field, bad token, wrong type, ...) are
// InvalidArgument: "source:line:column: syntax error: <protobuf's message>".
absl::StatusOr<ParsedSchedulerConf> ParseSchedulerConfText(
    const std::string& text, const std::string& source);

}  // namespace scheduler
}  // namespace cyber

#endif  // SCHEDULER_CONFIG_CONF_TEXT_H_
