#include "tests/accuracy/json_writer.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace cyber {
namespace accuracy {

std::string JsonQuote(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          absl::StrAppendFormat(&out, "\\u%04x", static_cast<int>(c));
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return out;
}

JsonWriter::JsonWriter() {
  out_ = "{";
  levels_.push_back(Level{});
}

void JsonWriter::Prefix(std::string_view key) {
  Level& level = levels_.back();
  if (!level.empty) out_ += ',';
  level.empty = false;
  out_ += '\n';
  out_.append(2 * levels_.size(), ' ');
  if (!level.is_array) absl::StrAppend(&out_, JsonQuote(key), ": ");
}

void JsonWriter::BeginObject(std::string_view key) {
  Prefix(key);
  out_ += '{';
  levels_.push_back(Level{});
}

void JsonWriter::BeginArray(std::string_view key) {
  Prefix(key);
  out_ += '[';
  levels_.push_back(Level{/*is_array=*/true, /*empty=*/true});
}

void JsonWriter::Close(char bracket) {
  const bool empty = levels_.back().empty;
  levels_.pop_back();
  if (!empty) {
    out_ += '\n';
    out_.append(2 * levels_.size(), ' ');
  }
  out_ += bracket;
}

void JsonWriter::EndObject() { Close('}'); }
void JsonWriter::EndArray() { Close(']'); }

void JsonWriter::String(std::string_view key, std::string_view value) {
  Prefix(key);
  out_ += JsonQuote(value);
}

void JsonWriter::Number(std::string_view key, double value) {
  Prefix(key);
  if (std::isfinite(value)) {
    absl::StrAppendFormat(&out_, "%.10g", value);
  } else {
    out_ += "null";
  }
}

void JsonWriter::Integer(std::string_view key, int64_t value) {
  Prefix(key);
  absl::StrAppend(&out_, value);
}

void JsonWriter::Bool(std::string_view key, bool value) {
  Prefix(key);
  out_ += value ? "true" : "false";
}

void JsonWriter::Null(std::string_view key) {
  Prefix(key);
  out_ += "null";
}

std::string JsonWriter::Finish() {
  while (levels_.size() > 1) Close(levels_.back().is_array ? ']' : '}');
  if (!levels_.empty()) Close('}');
  out_ += '\n';
  return out_;
}

}  // namespace accuracy
}  // namespace cyber
