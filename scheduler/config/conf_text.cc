#include "scheduler/config/conf_text.h"

#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cyber/common/log.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace cyber {
namespace scheduler {
namespace {

namespace pb = ::google::protobuf;
using Tree = pb::TextFormat::ParseInfoTree;

constexpr char kWrapperField[] = "scheduler_conf";

const pb::FieldDescriptor* FieldNamed(const pb::Message& msg,
                                      const char* name) {
  const pb::FieldDescriptor* field = msg.GetDescriptor()->FindFieldByName(name);
  ACHECK(field != nullptr) << msg.GetTypeName() << " has no field " << name;
  return field;
}

// Keeps the first error reported (the parser stops at it anyway); warnings
// are ignored.
class FirstErrorCollector : public pb::io::ErrorCollector {
 public:
  void AddError(int line, pb::io::ColumnNumber column,
                const std::string& message) override {
    if (has_error_) return;
    has_error_ = true;
    location_ = TextLocation(line, column);
    message_ = message;
  }

  bool has_error() const { return has_error_; }
  TextLocation location() const { return location_; }
  const std::string& message() const { return message_; }

 private:
  bool has_error_ = false;
  TextLocation location_;
  std::string message_;
};

// True when the first token is `scheduler_conf`. Lexical errors are left to
// the parser, which reports them with a location.
bool IsCyberConfig(const std::string& text) {
  pb::io::ArrayInputStream input(text.data(), static_cast<int>(text.size()));
  FirstErrorCollector ignored;
  pb::io::Tokenizer tokenizer(&input, &ignored);
  tokenizer.set_comment_style(pb::io::Tokenizer::SH_COMMENT_STYLE);
  return tokenizer.Next() &&
         tokenizer.current().type == pb::io::Tokenizer::TYPE_IDENTIFIER &&
         tokenizer.current().text == kWrapperField;
}

// Line `line` (0-based) of `text` without surrounding blanks, shortened to
// kMaxQuotedLine characters, to show the field and value around an error.
std::string QuotedLine(absl::string_view text, int line) {
  constexpr size_t kMaxQuotedLine = 80;
  if (line < 0) return "";
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  if (static_cast<size_t>(line) >= lines.size()) return "";
  absl::string_view quoted = absl::StripAsciiWhitespace(lines[line]);
  if (quoted.size() > kMaxQuotedLine) {
    return absl::StrCat(quoted.substr(0, kMaxQuotedLine), "...");
  }
  return std::string(quoted);
}

absl::Status ParseText(const std::string& text, const std::string& source,
                       pb::Message* message, Tree* tree) {
  FirstErrorCollector errors;
  pb::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  parser.WriteLocationsTo(tree);
  if (parser.ParseFromString(text, message)) return absl::OkStatus();
  if (!errors.has_error()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": syntax error: not a ", message->GetTypeName()));
  }
  // protobuf's message says what was expected, not which field; the line
  // shows that.
  const std::string line = QuotedLine(text, errors.location().line);
  const bool at_end = absl::EndsWith(errors.message(), "got: ");
  return absl::InvalidArgumentError(absl::StrCat(
      Where(source, errors.location()), ": syntax error: ", errors.message(),
      at_end ? "end of file" : "",
      line.empty() ? "" : absl::StrCat(" (line: ", line, ")")));
}

}  // namespace

std::string Where(const std::string& source, TextLocation loc) {
  if (loc.line < 0) return source;
  return absl::StrCat(source, ":", loc.line + 1, ":", loc.column + 1);
}

TextLocation ConfTextNode::FieldLocation(const pb::Message& msg,
                                         const char* name, int index) const {
  const pb::FieldDescriptor* field = FieldNamed(msg, name);
  TextLocation loc;
  if (tree_ != nullptr) {
    loc = tree_->GetLocation(field, field->is_repeated() ? index : -1);
  }
  return loc.line >= 0 ? loc : start_;
}

ConfTextNode ConfTextNode::Child(const pb::Message& msg, const char* name,
                                 int index) const {
  const pb::FieldDescriptor* field = FieldNamed(msg, name);
  const Tree* child = nullptr;
  if (tree_ != nullptr) {
    child = tree_->GetTreeForNested(field, field->is_repeated() ? index : -1);
  }
  return ConfTextNode(child, FieldLocation(msg, name, index));
}

absl::StatusOr<ParsedSchedulerConf> ParseSchedulerConfText(
    const std::string& text, const std::string& source) {
  ParsedSchedulerConf parsed;
  parsed.tree = std::make_unique<Tree>();
  const ConfTextNode root(parsed.tree.get(), TextLocation());
  if (IsCyberConfig(text)) {
    config::CyberConfig wrapper;
    if (absl::Status s = ParseText(text, source, &wrapper, parsed.tree.get());
        !s.ok()) {
      return s;
    }
    parsed.node = root.Child(wrapper, kWrapperField);
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
