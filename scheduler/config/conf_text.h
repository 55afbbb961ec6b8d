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
// Locations are 0-based inside (as protobuf keeps them); Where() prints them
// 1-based, as compilers do.
//
// Threads: no shared state; call from any thread. A ConfTextNode points into
// its ParsedSchedulerConf and must not outlive it.

#ifndef SCHEDULER_CONFIG_CONF_TEXT_H_
#define SCHEDULER_CONFIG_CONF_TEXT_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "google/protobuf/message.h"
#include "google/protobuf/text_format.h"
#include "scheduler/config/scheduler_conf.pb.h"

namespace cyber {
namespace scheduler {

using TextLocation = google::protobuf::TextFormat::ParseLocation;

// "source:line:column" (1-based), or just "source" when `loc` is unknown.
std::string Where(const std::string& source, TextLocation loc);

// Where one message of the parsed text sits, and the locations of its
// fields.
class ConfTextNode {
 public:
  ConfTextNode() = default;  // a message that is not in the text
  ConfTextNode(const google::protobuf::TextFormat::ParseInfoTree* tree,
               TextLocation start)
      : tree_(tree), start_(start) {}

  // Where the message starts (its field name in the parent); unknown for
  // the top level.
  TextLocation start() const { return start_; }

  // Where field `name` of `msg` (this node's message) was written, its
  // `index`-th value if repeated; start() if the field was not written.
  // REQUIRES: `msg` has a field called `name`.
  TextLocation FieldLocation(const google::protobuf::Message& msg,
                             const char* name, int index = 0) const;

  // The node of the message held in field `name` of `msg`.
  ConfTextNode Child(const google::protobuf::Message& msg, const char* name,
                     int index = 0) const;

 private:
  const google::protobuf::TextFormat::ParseInfoTree* tree_ = nullptr;
  TextLocation start_;
};

struct ParsedSchedulerConf {
  config::SchedulerConf conf;
  ConfTextNode node;  // of `conf`; points into `tree`
  std::unique_ptr<google::protobuf::TextFormat::ParseInfoTree> tree;
};

// Syntax errors (unknown field, bad token, wrong type, ...) are
// InvalidArgument: "source:line:column: syntax error: <protobuf's message>".
absl::StatusOr<ParsedSchedulerConf> ParseSchedulerConfText(
    const std::string& text, const std::string& source);

}  // namespace scheduler
}  // namespace cyber

#endif  // SCHEDULER_CONFIG_CONF_TEXT_H_
