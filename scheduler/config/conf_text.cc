#include "scheduler/config/conf_text.h"

#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace cyber {
namespace scheduler {
namespace {

namespace pb = ::google::protobuf;
using Tree = pb::TextFormat::ParseInfoTree;

constexpr char kWrapperField[] = "scheduler_conf";

// Keeps nothing: only the first token matters to IsCyberConfig().
class IgnoreErrors : public pb::io::ErrorCollector {
 public:
  void AddError(int, pb::io::ColumnNumber, const std::string&) override {}
};

// True when the first token is `scheduler_conf`. Lexical errors are left to
// the parser, which reports them with a location.
bool IsCyberConfig(const std::string& text) {
  pb::io::ArrayInputStream input(text.data(), static_cast<int>(text.size()));
  IgnoreErrors ignored;
  pb::io::Tokenizer tokenizer(&input, &ignored);
  tokenizer.set_comment_style(pb::io::Tokenizer::SH_COMMENT_STYLE);
  return tokenizer.Next() &&
         tokenizer.current().type == pb::io::Tokenizer::TYPE_IDENTIFIER &&
         tokenizer.current().text == kWrapperField;
}

absl::Status ParseText(const std::string& text, const std::string& source,
                       pb::Message* message, Tree* tree) {
  constexpr size_t kMaxQuotedLine = 80;
  const std::optional<TextSyntaxError> error =
      ParseTextWithPositions(text, message, tree, kMaxQuotedLine);
  if (!error) return absl::OkStatus();
  if (error->message.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": syntax error: not a ", message->GetTypeName()));
  }
  // protobuf's message says what was expected, not which field; the line
  // shows that.
  return absl::InvalidArgumentError(absl::StrCat(
      Where(source, error->position), ": syntax error: ", error->message,
      error->line.empty() ? "" : absl::StrCat(" (line: ", error->line, ")")));
}

}  // namespace

absl::StatusOr<ParsedSchedulerConf> ParseSchedulerConfText(
    const std::string& text, const std::string& source) {
  ParsedSchedulerConf parsed;
  parsed.tree = std::make_unique<Tree>();
  const FieldPositions root(parsed.tree.get(), TextPosition());
  if (IsCyberConfig(text)) {
    config::CyberConfig wrapper;
    if (absl::Status s = ParseText(text, source, &wrapper, parsed.tree.get());
        !s.ok()) {
      return s;
    }
    parsed.node = root.Nested(wrapper, kWrapperField);
    parsed.conf = std::move(*wrapper.mutable_scheduler_conf());
  } else {
    if (absl::Status s =
            ParseText(text, source, &parsed.conf, parsed.tree.get());
        !s.ok()) {
      return s;
    }
    parsed.node = root;
  }
  return parsed;
}

}  // namespace scheduler
}  // namespace cyber
