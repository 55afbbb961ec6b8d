#include "cyber/bridge/json.h"

#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace cyber {
namespace bridge {
namespace {

constexpr int kMaxDepth = 64;

class Parser {
 public:
  explicit Parser(absl::string_view text) : text_(text) {}

  absl::StatusOr<JsonValue> ParseDocument() {
    JsonValue value;
    absl::Status status = ParseValue(value, 0);
    if (!status.ok()) return status;
    SkipSpace();
    if (pos_ != text_.size()) return Error("end of input");
    return value;
  }

 private:
  absl::Status Error(absl::string_view expected) const {
    return absl::InvalidArgumentError(
        absl::StrCat("JSON: expected ", expected, " at byte ", pos_));
  }
  void SkipSpace() {
    while (pos_ < text_.size() && absl::ascii_isspace(static_cast<unsigned char>(text_[pos_]))) {
      ++pos_;
    }
  }
  bool Consume(absl::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  absl::Status ParseValue(JsonValue& out, int depth) {
    if (depth > kMaxDepth) return Error("less nesting (64 levels at most)");
    SkipSpace();
    if (pos_ >= text_.size()) return Error("a value");
    const char c = text_[pos_];
    if (c == '{') return ParseObject(out, depth);
    if (c == '[') return ParseArray(out, depth);
    if (c == '"') {
      out.kind = JsonValue::Kind::kString;
      return ParseString(out.string);
    }
    if (Consume("true")) {
      out.kind = JsonValue::Kind::kBool;
      out.boolean = true;
      return absl::OkStatus();
    }
    if (Consume("false")) {
      out.kind = JsonValue::Kind::kBool;
      return absl::OkStatus();
    }
    if (Consume("null")) return absl::OkStatus();
    return ParseNumber(out);
  }

  absl::Status ParseNumber(JsonValue& out) {
    const size_t start = pos_;
    while (pos_ < text_.size() && (absl::ascii_isdigit(static_cast<unsigned char>(text_[pos_])) ||
                                   text_[pos_] == '-' || text_[pos_] == '+' ||
                                   text_[pos_] == '.' || text_[pos_] == 'e' ||
                                   text_[pos_] == 'E')) {
      ++pos_;
    }
    if (start == pos_ || !absl::SimpleAtod(text_.substr(start, pos_ - start), &out.number)) {
      pos_ = start;
      return Error("a value");
    }
    out.kind = JsonValue::Kind::kNumber;
    return absl::OkStatus();
  }

  static void AppendUtf8(std::string& out, uint32_t code) {
    if (code < 0x80) {
      out.push_back(static_cast<char>(code));
    } else if (code < 0x800) {
      out.push_back(static_cast<char>(0xC0 | (code >> 6)));
      out.push_back(static_cast<char>(0x80 | (code & 0x3F)));
    } else if (code < 0x10000) {
      out.push_back(static_cast<char>(0xE0 | (code >> 12)));
      out.push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (code & 0x3F)));
    } else {
      out.push_back(static_cast<char>(0xF0 | (code >> 18)));
      out.push_back(static_cast<char>(0x80 | ((code >> 12) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (code & 0x3F)));
    }
  }

  bool ParseHex4(uint32_t& code) {
    if (pos_ + 4 > text_.size()) return false;
    code = 0;
    for (int i = 0; i < 4; ++i) {
      const char h = text_[pos_ + i];
      code <<= 4;
      if (h >= '0' && h <= '9') {
        code |= h - '0';
      } else if (h >= 'a' && h <= 'f') {
        code |= h - 'a' + 10;
      } else if (h >= 'A' && h <= 'F') {
        code |= h - 'A' + 10;
      } else {
        return false;
      }
    }
    pos_ += 4;
    return true;
  }

  absl::Status ParseString(std::string& out) {
    ++pos_;  // the opening quote
    while (pos_ < text_.size()) {
      const char c = text_[pos_++];
      if (c == '"') return absl::OkStatus();
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (pos_ >= text_.size()) break;
      const char e = text_[pos_++];
      switch (e) {
        case '"': out.push_back('"'); break;
        case '\\': out.push_back('\\'); break;
        case '/': out.push_back('/'); break;
        case 'b': out.push_back('\b'); break;
        case 'f': out.push_back('\f'); break;
        case 'n': out.push_back('\n'); break;
        case 'r': out.push_back('\r'); break;
        case 't': out.push_back('\t'); break;
        case 'u': {
          uint32_t code;
          if (!ParseHex4(code)) return Error("4 hex digits after \\u");
          if (code >= 0xD800 && code < 0xDC00 && Consume("\\u")) {
            uint32_t low;
            if (!ParseHex4(low) || low < 0xDC00 || low > 0xDFFF) {
              return Error("a low surrogate after a high one");
            }
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
          }
          AppendUtf8(out, code);
          break;
        }
        default:
          --pos_;
          return Error("an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u)");
      }
    }
    return Error("a closing quote");
  }

  absl::Status ParseArray(JsonValue& out, int depth) {
    ++pos_;
    out.kind = JsonValue::Kind::kArray;
    SkipSpace();
    if (Consume("]")) return absl::OkStatus();
    while (true) {
      out.array.emplace_back();
      absl::Status status = ParseValue(out.array.back(), depth + 1);
      if (!status.ok()) return status;
      SkipSpace();
      if (Consume("]")) return absl::OkStatus();
      if (!Consume(",")) return Error("',' or ']'");
    }
  }

  absl::Status ParseObject(JsonValue& out, int depth) {
    ++pos_;
    out.kind = JsonValue::Kind::kObject;
    SkipSpace();
    if (Consume("}")) return absl::OkStatus();
    while (true) {
      SkipSpace();
      if (pos_ >= text_.size() || text_[pos_] != '"') return Error("a member name");
      std::string key;
      absl::Status status = ParseString(key);
      if (!status.ok()) return status;
      SkipSpace();
      if (!Consume(":")) return Error("':'");
      JsonValue value;
      status = ParseValue(value, depth + 1);
      if (!status.ok()) return status;
      out.object[key] = std::move(value);
      SkipSpace();
      if (Consume("}")) return absl::OkStatus();
      if (!Consume(",")) return Error("',' or '}'");
    }
  }

  absl::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

const JsonValue* JsonValue::Find(absl::string_view key) const {
  if (kind != Kind::kObject) return nullptr;
  auto it = object.find(std::string(key));
  return it == object.end() ? nullptr : &it->second;
}

absl::StatusOr<JsonValue> ParseJson(absl::string_view text) { return Parser(text).ParseDocument(); }

std::string JsonQuote(absl::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += absl::StrFormat("\\u%04x", static_cast<unsigned char>(c));
        } else {
          out.push_back(c);
        }
    }
  }
  out.push_back('"');
  return out;
}

}  // namespace bridge
}  // namespace cyber
