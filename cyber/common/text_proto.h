// Internal to this repository: not part of the API (docs/api.md lists the
// API headers); its Bazel target is visible only inside this repository.
//
// Protobuf text format with positions: parse a text-format file into its
// schema while keeping where every field was written, so that validators
// (the scheduler conf, graph files) can report "file:line:column" for any
// bad value, not only for syntax errors.
//
// Why shared: every configuration file this project reads is protobuf text
// (Cyber RT's formats); the position bookkeeping, including protobuf's quirk
// with list syntax, is subtle and written once here. Each file format keeps
// its own schema, its own wording of errors and its own validation.
//
// Positions are protobuf's: 0-based line and column (a tab advances the
// column to the next multiple of 8), line -1 meaning "not in the text";
// Where() prints them 1-based, as compilers do.
//
// Threads: no shared state; call from any thread. A FieldPositions points
// into the ParseInfoTree it came from and must not outlive it.

#ifndef CYBER_COMMON_TEXT_PROTO_H_
#define CYBER_COMMON_TEXT_PROTO_H_

#include <cstddef>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"
#include "google/protobuf/text_format.h"

namespace cyber {

using TextPosition = google::protobuf::TextFormat::ParseLocation;

// "source:line:column" (1-based), or just "source" when `pos` is unknown.
std::string Where(const std::string& source, TextPosition pos);

// Where the fields of one message of a parsed text were written.
class FieldPositions {
 public:
  // A message that is not in the text: every field is at `self`.
  explicit FieldPositions(TextPosition self = TextPosition()) : self_(self) {}
  FieldPositions(const google::protobuf::TextFormat::ParseInfoTree* tree,
                 TextPosition self)
      : tree_(tree), self_(self) {}

  // Where this message's own field name was written (for the top-level
  // message: what the parser of the file chose).
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

// What went wrong when a text did not parse.
struct TextSyntaxError {
  // protobuf's position of the first error; line -1 if it gave none.
  TextPosition position;
  // protobuf's message (what was expected), with "end of file" completing
  // "..., got: " when the text ran out; empty if it gave none.
  std::string message;
  // The offending line as written, trimmed and shortened; may be empty.
  std::string line;
};

// Parses `text` into `message`, recording field positions into `tree`.
// Returns the syntax error, if any (unknown fields and enum values are
// syntax errors, and protobuf's message names them); the quoted line is cut
// at `max_quoted_line` characters ("..." appended).
std::optional<TextSyntaxError> ParseTextWithPositions(
    const std::string& text, google::protobuf::Message* message,
    google::protobuf::TextFormat::ParseInfoTree* tree, size_t max_quoted_line);

}  // namespace cyber

#endif  // CYBER_COMMON_TEXT_PROTO_H_
