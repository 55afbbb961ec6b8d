#include "cyber/common/text_proto.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cyber/common/log.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/io/tokenizer.h"

namespace cyber {

namespace {

namespace pb = ::google::protobuf;
using Tree = pb::TextFormat::ParseInfoTree;

const pb::FieldDescriptor* FindField(const pb::Message& msg,
                                     absl::string_view name) {
  const pb::FieldDescriptor* field =
      msg.GetDescriptor()->FindFieldByName(std::string(name));
  ACHECK(field != nullptr) << msg.GetTypeName() << " has no field " << name;
  return field;
}

// protobuf's index convention: -1 for a singular field.
int ProtoIndex(const pb::FieldDescriptor* field, int index) {
  return field->is_repeated() ? index : -1;
}

// Remembers the first error (the parser gives up after it); warnings are
// dropped.
class FirstError : public pb::io::ErrorCollector {
 public:
  void AddError(int line, pb::io::ColumnNumber column,
                const std::string& message) override {
    if (seen_) return;
    seen_ = true;
    position_ = TextPosition(line, column);
    message_ = message;
  }

  bool seen() const { return seen_; }
  TextPosition position() const { return position_; }
  const std::string& message() const { return message_; }

 private:
  bool seen_ = false;
  TextPosition position_;
  std::string message_;
};

// Line `line` (0-based) of `text`, trimmed and shortened; empty if there is
// no such line.
std::string Excerpt(absl::string_view text, int line, size_t max) {
  if (line < 0) return "";
  size_t begin = 0;
  for (int i = 0; i < line; ++i) {
    begin = text.find('\n', begin);
    if (begin == absl::string_view::npos) return "";
    ++begin;
  }
  const size_t end = text.find('\n', begin);
  absl::string_view excerpt = absl::StripAsciiWhitespace(text.substr(
      begin, end == absl::string_view::npos ? end : end - begin));
  if (excerpt.size() > max) {
    return absl::StrCat(excerpt.substr(0, max), "...");
  }
  return std::string(excerpt);
}

// True if `a` comes before `b` in the text.
bool Before(TextPosition a, TextPosition b) {
  return a.line < b.line || (a.line == b.line && a.column < b.column);
}

// Where the first field written inside `element` (described by `tree`)
// is; line -1 if none is.
TextPosition FirstFieldPosition(const pb::Message& element, const Tree* tree) {
  TextPosition first;
  if (tree == nullptr) return first;
  const pb::Descriptor* type = element.GetDescriptor();
  for (int i = 0; i < type->field_count(); ++i) {
    const pb::FieldDescriptor* field = type->field(i);
    const TextPosition at = tree->GetLocation(field, ProtoIndex(field, 0));
    if (at.line >= 0 && (first.line < 0 || Before(at, first))) first = at;
  }
  return first;
}

}  // namespace

std::string Where(const std::string& source, TextPosition pos) {
  if (pos.line < 0) return source;
  return absl::StrCat(source, ":", pos.line + 1, ":", pos.column + 1);
}

TextPosition FieldPositions::Of(const pb::Message& msg, absl::string_view field,
                                int index) const {
  const pb::FieldDescriptor* descriptor = FindField(msg, field);
  if (tree_ == nullptr) return self_;
  if (!descriptor->is_repeated() || descriptor->message_type() == nullptr) {
    const TextPosition at =
        tree_->GetLocation(descriptor, ProtoIndex(descriptor, index));
    return at.line >= 0 ? at : self_;
  }
  // protobuf records one position per field name written, so with list
  // syntax (`readers: [ {...}, {...} ]`) positions and values stop lining
  // up. Nested trees are kept per value, so an element then is where its
  // first field is written.
  const int values = msg.GetReflection()->FieldSize(msg, descriptor);
  int positions = 0;
  while (tree_->GetLocation(descriptor, positions).line >= 0) ++positions;
  if (positions == values || index < 0 || index >= values) {
    const TextPosition at = tree_->GetLocation(descriptor, index);
    return at.line >= 0 ? at : self_;
  }
  const TextPosition first = FirstFieldPosition(
      msg.GetReflection()->GetRepeatedMessage(msg, descriptor, index),
      tree_->GetTreeForNested(descriptor, index));
  if (first.line >= 0) return first;
  // An empty element in a list: the first place the field name is written.
  const TextPosition list = tree_->GetLocation(descriptor, 0);
  return list.line >= 0 ? list : self_;
}

FieldPositions FieldPositions::Nested(const pb::Message& msg,
                                      absl::string_view field,
                                      int index) const {
  const pb::FieldDescriptor* descriptor = FindField(msg, field);
  ACHECK(descriptor->message_type() != nullptr)
      << msg.GetTypeName() << "." << field << " is not a message";
  const TextPosition at = Of(msg, field, index);
  if (tree_ == nullptr) return FieldPositions(at);
  return FieldPositions(
      tree_->GetTreeForNested(descriptor, ProtoIndex(descriptor, index)), at);
}

std::optional<TextSyntaxError> ParseTextWithPositions(
    const std::string& text, pb::Message* message, Tree* tree,
    size_t max_quoted_line) {
  FirstError error;
  pb::TextFormat::Parser parser;
  parser.RecordErrorsTo(&error);
  parser.WriteLocationsTo(tree);
  if (parser.ParseFromString(text, message)) return std::nullopt;
  TextSyntaxError result;
  if (!error.seen()) return result;
  result.position = error.position();
  result.message = error.message();
  // protobuf ends "Expected ..., got: <token>" with nothing when the text
  // ran out.
  if (absl::EndsWith(result.message, "got: ")) result.message += "end of file";
  result.line = Excerpt(text, result.position.line, max_quoted_line);
  return result;
}

}  // namespace cyber
