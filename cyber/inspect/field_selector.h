// FieldSelector: cyber_channel echo's -f: a dotted path into a message
// whose type the tool only knows from an announced descriptor —
// "accel.x", "header.stamp", "points[3].x", "ranges" — found by protobuf
// reflection and printed as text.
//
// Why a path of its own rather than a query language: the paths people
// type at a robot are a field, a sub-field, an element; an error must name
// the step that failed and the names that exist there ("did you mean
// accel?"), which a general query language would not.
//
// What is printed: a scalar as protobuf text prints it (strings quoted,
// enums by name); a message in text format; a repeated field without an
// index all its values, "[1, 2, 3]" for scalars and one text block per
// message, each preceded by its index.
//
// Threads: pure functions.

#ifndef CYBER_INSPECT_FIELD_SELECTOR_H_
#define CYBER_INSPECT_FIELD_SELECTOR_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"

namespace cyber {
namespace inspect {

struct FieldStep {
  std::string name;
  std::optional<int> index;  // "points[3]": 3
};

// "a.b[2].c" -> {a}, {b, 2}, {c}. InvalidArgument naming the path and the
// position of a bad character, an empty step or a bad index.
absl::StatusOr<std::vector<FieldStep>> ParseFieldPath(absl::string_view path);

// The value at `path` in `message`, as text (see above). NotFound naming
// the step, the message type and the closest field names; InvalidArgument
// for an index on a singular field, a step past a scalar, an index out of
// range or a repeated field in the middle of the path without an index.
absl::StatusOr<std::string> SelectField(const google::protobuf::Message& message,
                                        const std::vector<FieldStep>& path);

}  // namespace inspect
}  // namespace cyber

#endif  // CYBER_INSPECT_FIELD_SELECTOR_H_
