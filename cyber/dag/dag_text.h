// Reading the protobuf text of a dag file into the schema (dag.proto) while
// keeping where every field was written, so that the validator
// (dag_config.cc) can point at the exact line and column of any bad value,
// not only of syntax errors.
//
// Why a layer of its own: this file knows protobuf's text-format machinery
// (TextFormat::Parser, ParseInfoTree, error collection); the validator only
// knows what the fields mean.
//
// Positions are protobuf's: 0-based line and column (a tab advances the
// column to the next multiple of 8), line -1 meaning "not in the text".
// Messages print them 1-based.
//
// Threads: no shared state; call from any thread. A FieldPositions points
// into the DagText it came from and must not outlive it.

#ifndef CYBER_DAG_DAG_TEXT_H_
#define CYBER_DAG_DAG_TEXT_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cyber/dag/dag.pb.h"
#include "google/protobuf/message.h"
#include "google/protobuf/text_format.h"

namespace cyber {
namespace dag {

using TextPosition = google::protobuf::TextFormat::ParseLocation;

// Where the fields of one message of a parsed text were written.
class FieldPositions {
 public:
  // A message that is not in the text: every field is at `self`.
  explicit FieldPositions(TextPosition self) : self_(self) {}
  FieldPositions(const google::protobuf::TextFormat::ParseInfoTree* tree,
                 TextPosition self)
      : tree_(tree), self_(self) {}

  // Where this message's own field name was written (for the top-level
  // message: the start of the text).
  TextPosition self() const { return self_; }

  // Where field `field` of `msg` (the message these positions describe) was
  // written, its `index`-th value if the field is repeated; self() if the
  // field was not written. A repeated message field written with list
  // syntax anywhere in `msg` (`readers: [ {...}, {...} ]`) has one position
  // per field name, not per value; its values are then located at their
  // first field (or, for an empty value, at the field's first name).
  // REQUIRES: `msg` has a field named `field`.
  TextPosition Of(const google::protobuf::Message& msg, absl::string_view field,
                  int index = 0) const;

  // The positions of the message held in field `field` of `msg`.
  // REQUIRES: `field` is a message field of `msg`.
  FieldPositions Nested(const google::protobuf::Message& msg,
                        absl::string_view field, int index = 0) const;

 private:
  const google::protobuf::TextFormat::ParseInfoTree* tree_ = nullptr;
  TextPosition self_;
};

// A parsed dag text and where its fields were written.
struct DagText {
  DagConfig config;
  std::unique_ptr<google::protobuf::TextFormat::ParseInfoTree> tree;

  // Positions of `config`'s fields; self() is line 0, column 0.
  FieldPositions positions() const {
    return FieldPositions(tree.get(), TextPosition(0, 0));
  }
};

// Parses `text` as a DagConfig. `source` names the text in errors.
// Errors: InvalidArgument, "source:line:column: syntax error: <protobuf's
// message>", followed by the offending line as written. Unknown fields and
// enum values are syntax errors, and protobuf's message names them.
absl::StatusOr<DagText> ParseDagText(const std::string& text,
                                     const std::string& source);

}  // namespace dag
}  // namespace cyber

#endif  // CYBER_DAG_DAG_TEXT_H_
