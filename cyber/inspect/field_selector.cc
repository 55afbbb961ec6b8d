#include "cyber/inspect/field_selector.h"

#include <cctype>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cyber/common/nearest_name.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/text_format.h"

namespace cyber {
namespace inspect {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using google::protobuf::TextFormat;

bool IsNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::string StepText(const FieldStep& step) {
  return step.index ? absl::StrCat(step.name, "[", *step.index, "]") : step.name;
}

// "accel.x" up to and including step `i`.
std::string PathUpTo(const std::vector<FieldStep>& path, size_t i) {
  std::string out;
  for (size_t k = 0; k <= i && k < path.size(); ++k) {
    if (k > 0) out += ".";
    out += StepText(path[k]);
  }
  return out;
}

absl::Status UnknownField(const Descriptor& type, const std::vector<FieldStep>& path, size_t i) {
  std::vector<std::string> names;
  for (int f = 0; f < type.field_count(); ++f) names.push_back(type.field(f)->name());
  std::string message = absl::StrCat("field \"", PathUpTo(path, i), "\": ", type.full_name(),
                                     " has no field \"", path[i].name, "\"");
  if (std::optional<std::string> near = NearestName(path[i].name, names)) {
    absl::StrAppend(&message, " (did you mean \"", *near, "\"?)");
  }
  absl::StrAppend(&message, "; its fields: ",
                  names.empty() ? std::string("none") : absl::StrJoin(names, ", "));
  return absl::NotFoundError(message);
}

std::string ScalarText(const Message& message, const FieldDescriptor& field, int index) {
  std::string out;
  TextFormat::PrintFieldValueToString(message, &field, index, &out);
  return out;
}

std::string MessageText(const Message& message) {
  std::string out;
  TextFormat::Printer printer;
  printer.PrintToString(message, &out);
  return out;
}

// The whole of field `field` of `message` (the last step, no index).
std::string WholeField(const Message& message, const FieldDescriptor& field) {
  const Reflection& reflection = *message.GetReflection();
  if (!field.is_repeated()) {
    if (field.cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      return MessageText(reflection.GetMessage(message, &field));
    }
    return ScalarText(message, field, -1) + "\n";
  }
  const int n = reflection.FieldSize(message, &field);
  if (field.cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
    std::string out;
    for (int i = 0; i < n; ++i) {
      absl::StrAppend(&out, "[", i, "]\n", MessageText(reflection.GetRepeatedMessage(message, &field, i)));
    }
    return out;
  }
  std::vector<std::string> values;
  values.reserve(n);
  for (int i = 0; i < n; ++i) values.push_back(ScalarText(message, field, i));
  return absl::StrCat("[", absl::StrJoin(values, ", "), "]\n");
}

}  // namespace

absl::StatusOr<std::vector<FieldStep>> ParseFieldPath(absl::string_view path) {
  std::vector<FieldStep> steps;
  size_t i = 0;
  auto bad = [&](const std::string& why) {
    return absl::InvalidArgumentError(
        absl::StrCat("field path \"", path, "\" at column ", i + 1, ": ", why));
  };
  if (path.empty()) return bad("empty path");
  while (true) {
    FieldStep step;
    while (i < path.size() && IsNameChar(path[i])) step.name.push_back(path[i++]);
    if (step.name.empty()) return bad("expected a field name");
    if (i < path.size() && path[i] == '[') {
      const size_t close = path.find(']', i);
      if (close == absl::string_view::npos) return bad("'[' without ']'");
      int index = 0;
      if (!absl::SimpleAtoi(path.substr(i + 1, close - i - 1), &index) || index < 0) {
        return bad(absl::StrCat("index \"", path.substr(i + 1, close - i - 1),
                                "\" is not a number >= 0"));
      }
      step.index = index;
      i = close + 1;
    }
    steps.push_back(std::move(step));
    if (i == path.size()) return steps;
    if (path[i] != '.') return bad(absl::StrCat("unexpected '", path.substr(i, 1), "'"));
    ++i;
  }
}

absl::StatusOr<std::string> SelectField(const Message& message,
                                        const std::vector<FieldStep>& path) {
  if (path.empty()) return MessageText(message);
  const Message* current = &message;
  for (size_t i = 0; i < path.size(); ++i) {
    const FieldStep& step = path[i];
    const Descriptor& type = *current->GetDescriptor();
    const FieldDescriptor* field = type.FindFieldByName(step.name);
    if (field == nullptr) return UnknownField(type, path, i);
    const Reflection& reflection = *current->GetReflection();
    const bool last = i + 1 == path.size();
    if (step.index && !field->is_repeated()) {
      return absl::InvalidArgumentError(absl::StrCat("field \"", PathUpTo(path, i), "\": ",
                                                     type.full_name(), ".", step.name,
                                                     " is not repeated, it takes no index"));
    }
    if (!step.index && field->is_repeated() && !last) {
      return absl::InvalidArgumentError(
          absl::StrCat("field \"", PathUpTo(path, i), "\": ", type.full_name(), ".", step.name,
                       " is repeated: give an index (", step.name, "[0]) to go further"));
    }
    if (step.index) {
      const int size = reflection.FieldSize(*current, field);
      if (*step.index >= size) {
        return absl::InvalidArgumentError(absl::StrCat("field \"", PathUpTo(path, i),
                                                       "\": index ", *step.index,
                                                       " out of range (", step.name, " has ",
                                                       size, " values)"));
      }
    }
    if (last) {
      if (!step.index) return WholeField(*current, *field);
      if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
        return MessageText(reflection.GetRepeatedMessage(*current, field, *step.index));
      }
      return ScalarText(*current, *field, *step.index) + "\n";
    }
    if (field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) {
      return absl::InvalidArgumentError(absl::StrCat(
          "field \"", PathUpTo(path, i + 1), "\": ", type.full_name(), ".", step.name, " is a ",
          field->type_name(), ", not a message: the path cannot go past it"));
    }
    current = step.index ? &reflection.GetRepeatedMessage(*current, field, *step.index)
                         : &reflection.GetMessage(*current, field);
  }
  return MessageText(*current);  // not reached: the last step returns
}

}  // namespace inspect
}  // namespace cyber
