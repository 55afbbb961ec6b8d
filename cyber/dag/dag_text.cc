#include "cyber/dag/dag_text.h"

#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace cyber {
namespace dag {
namespace {

// Longest excerpt of the offending line quoted in a syntax error.
constexpr size_t kMaxExcerpt = 72;

}  // namespace

absl::StatusOr<DagText> ParseDagText(const std::string& text,
                                     const std::string& source) {
  DagText parsed;
  parsed.tree = std::make_unique<google::protobuf::TextFormat::ParseInfoTree>();
  const std::optional<TextSyntaxError> error = ParseTextWithPositions(
      text, &parsed.config, parsed.tree.get(), kMaxExcerpt);
  if (!error) return parsed;
  if (error->message.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ":1:1: syntax error: not a dag file"));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      source, ":", error->position.line + 1, ":", error->position.column + 1,
      ": syntax error: ", error->message,
      error->line.empty() ? "" : absl::StrCat(" (in: ", error->line, ")")));
}

}  // namespace dag
}  // namespace cyber
