// Internal to this repository: not part of the API (docs/api.md lists the
// API headers); its Bazel target is visible only inside this repository.
//
// Reading the protobuf text of a dag file into the schema (dag.proto) while
// keeping where every field was written, so that the validator
// (dag_config.cc) can point at the exact line and column of any bad value,
// not only of syntax errors.
//
// Why a layer of its own: this file knows protobuf's text-format machinery
// (TextFormat::Parser, ParseInfoTree, error collection); the validator only
// knows what the fields mean.
//
// Positions and their bookkeeping come from cyber/common/text_proto.h,
// which the scheduler conf shares.
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
#include "cyber/common/text_proto.h"
#include "google/protobuf/text_format.h"

namespace cyber {
namespace dag {

using ::cyber::FieldPositions;
using ::cyber::TextPosition;

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
