#include "cyber/launch/xml_document.h"

#include <cctype>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace cyber {
namespace launch {
namespace {

// A cursor over the text that counts lines.
class Reader {
 public:
  Reader(absl::string_view text, absl::string_view file) : text_(text), file_(file) {}

  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return AtEnd() ? '\0' : text_[pos_]; }
  bool LookingAt(absl::string_view s) const {
    return absl::StartsWith(text_.substr(pos_), s);
  }
  char Next() {
    const char c = text_[pos_++];
    if (c == '\n') ++line_;
    return c;
  }
  void Skip(size_t n) {
    for (size_t i = 0; i < n && !AtEnd(); ++i) Next();
  }
  void SkipSpace() {
    while (!AtEnd() && absl::ascii_isspace(static_cast<unsigned char>(Peek()))) Next();
  }
  int line() const { return line_; }

  absl::Status Error(int line, absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat(file_, ":", line, ": ", what));
  }
  absl::Status Error(absl::string_view what) const { return Error(line_, what); }

  // Skips past `end`; an error naming `what` and where it began if the
  // text ends first.
  absl::Status SkipPast(absl::string_view end, absl::string_view what) {
    const int start = line_;
    while (!AtEnd()) {
      if (LookingAt(end)) {
        Skip(end.size());
        return absl::OkStatus();
      }
      Next();
    }
    return Error(start, absl::StrCat(what, " is not closed (no \"", end, "\" before the end)"));
  }

  // Reads characters up to (not including) one of `stops`, or the end.
  std::string Until(absl::string_view stops) {
    std::string out;
    while (!AtEnd() && stops.find(Peek()) == absl::string_view::npos) out.push_back(Next());
    return out;
  }

 private:
  absl::string_view text_;
  absl::string_view file_;
  size_t pos_ = 0;
  int line_ = 1;
};

bool IsNameStart(char c) {
  return absl::ascii_isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':';
}
bool IsNameChar(char c) {
  return IsNameStart(c) || absl::ascii_isdigit(static_cast<unsigned char>(c)) || c == '-' ||
         c == '.';
}

void AppendUtf8(uint32_t code, std::string* out) {
  if (code < 0x80) {
    out->push_back(static_cast<char>(code));
  } else if (code < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (code >> 6)));
    out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
  } else if (code < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (code >> 12)));
    out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (code >> 18)));
    out->push_back(static_cast<char>(0x80 | ((code >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
  }
}

// Decodes `raw` (text or an attribute value read at `line`).
absl::StatusOr<std::string> Decode(const std::string& raw, const Reader& r, int line) {
  std::string out;
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] != '&') {
      if (raw[i] == '\n') ++line;
      out.push_back(raw[i]);
      continue;
    }
    const size_t semi = raw.find(';', i);
    if (semi == std::string::npos) {
      return r.Error(line, absl::StrCat("'&' not followed by an entity name and ';' in \"",
                                        raw.substr(i, 12), "\" (write &amp; for '&')"));
    }
    const std::string entity = raw.substr(i + 1, semi - i - 1);
    if (entity == "amp") {
      out.push_back('&');
    } else if (entity == "lt") {
      out.push_back('<');
    } else if (entity == "gt") {
      out.push_back('>');
    } else if (entity == "quot") {
      out.push_back('"');
    } else if (entity == "apos") {
      out.push_back('\'');
    } else if (absl::StartsWith(entity, "#")) {
      uint32_t code = 0;
      const bool hex = absl::StartsWith(entity, "#x");
      const bool ok = hex ? absl::SimpleHexAtoi(entity.substr(2), &code)
                          : absl::SimpleAtoi(entity.substr(1), &code);
      if (!ok || code == 0 || code > 0x10FFFF) {
        return r.Error(line, absl::StrCat("character reference \"&", entity, ";\" is not a valid "
                                          "character number"));
      }
      AppendUtf8(code, &out);
    } else {
      return r.Error(line, absl::StrCat("unknown entity \"&", entity,
                                        ";\" (known: &amp; &lt; &gt; &quot; &apos;)"));
    }
    i = semi;
  }
  return out;
}

// Comments, the declaration and whitespace between elements; an error for
// a DTD or another processing instruction.
absl::Status SkipMisc(Reader& r) {
  for (;;) {
    r.SkipSpace();
    if (r.LookingAt("<!--")) {
      const absl::Status s = r.SkipPast("-->", "comment \"<!--\"");
      if (!s.ok()) return s;
    } else if (r.LookingAt("<?xml")) {
      const absl::Status s = r.SkipPast("?>", "declaration \"<?xml\"");
      if (!s.ok()) return s;
    } else if (r.LookingAt("<!DOCTYPE") || r.LookingAt("<?")) {
      return r.Error("a DTD or processing instruction is not supported in a launch file");
    } else {
      return absl::OkStatus();
    }
  }
}

absl::StatusOr<std::string> ReadName(Reader& r, absl::string_view what) {
  if (!IsNameStart(r.Peek())) {
    const char c = r.Peek();
    return r.Error(absl::StrCat("expected ", what, ", found ",
                                r.AtEnd() ? std::string("the end of the file")
                                          : absl::StrCat("'", std::string(1, c), "'")));
  }
  std::string name;
  while (IsNameChar(r.Peek())) name.push_back(r.Next());
  return name;
}

absl::StatusOr<XmlElement> ParseElement(Reader& r, int depth) {
  if (depth > 64) return r.Error("elements nested more than 64 deep");
  XmlElement e;
  e.line = r.line();
  r.Skip(1);  // '<'
  absl::StatusOr<std::string> name = ReadName(r, "an element name after '<'");
  if (!name.ok()) return name.status();
  e.name = *name;
  // Attributes, then '>' or "/>".
  for (;;) {
    r.SkipSpace();
    if (r.LookingAt("/>")) {
      r.Skip(2);
      return e;
    }
    if (r.Peek() == '>') {
      r.Skip(1);
      break;
    }
    if (r.AtEnd()) return r.Error(e.line, absl::StrCat("<", e.name, "> is not closed"));
    absl::StatusOr<std::string> attr = ReadName(r, absl::StrCat("an attribute name in <", e.name, ">"));
    if (!attr.ok()) return attr.status();
    r.SkipSpace();
    if (r.Peek() != '=') {
      return r.Error(absl::StrCat("attribute \"", *attr, "\" of <", e.name, "> has no '=' and value"));
    }
    r.Skip(1);
    r.SkipSpace();
    const char quote = r.Peek();
    if (quote != '"' && quote != '\'') {
      return r.Error(absl::StrCat("the value of attribute \"", *attr, "\" of <", e.name,
                                  "> is not quoted"));
    }
    r.Skip(1);
    const int line = r.line();
    const std::string raw = r.Until(std::string(1, quote) + "<");
    if (r.Peek() != quote) {
      return r.Error(line, absl::StrCat("the value of attribute \"", *attr, "\" of <", e.name,
                                        "> is not closed"));
    }
    r.Skip(1);
    absl::StatusOr<std::string> value = Decode(raw, r, line);
    if (!value.ok()) return value.status();
    for (const auto& [n, v] : e.attributes) {
      if (n == *attr) {
        return r.Error(line, absl::StrCat("attribute \"", *attr, "\" given twice in <", e.name, ">"));
      }
    }
    e.attributes.emplace_back(*attr, *value);
  }
  // Content: text, comments, CDATA, children, then the end tag.
  for (;;) {
    if (r.AtEnd()) {
      return r.Error(e.line, absl::StrCat("<", e.name, "> is not closed (no </", e.name,
                                          "> before the end of the file)"));
    }
    if (r.LookingAt("<!--")) {
      const absl::Status s = r.SkipPast("-->", "comment \"<!--\"");
      if (!s.ok()) return s;
    } else if (r.LookingAt("<![CDATA[")) {
      r.Skip(9);
      const int line = r.line();
      std::string data;
      while (!r.AtEnd() && !r.LookingAt("]]>")) data.push_back(r.Next());
      if (r.AtEnd()) return r.Error(line, "CDATA section is not closed (no \"]]>\")");
      r.Skip(3);
      e.text += data;
    } else if (r.LookingAt("</")) {
      const int line = r.line();
      r.Skip(2);
      absl::StatusOr<std::string> end = ReadName(r, "an element name after '</'");
      if (!end.ok()) return end.status();
      r.SkipSpace();
      if (r.Peek() != '>') return r.Error(absl::StrCat("</", *end, " is not closed by '>'"));
      r.Skip(1);
      if (*end != e.name) {
        return r.Error(line, absl::StrCat("</", *end, "> closes <", e.name, "> opened on line ",
                                          e.line));
      }
      return e;
    } else if (r.LookingAt("<?") || r.LookingAt("<!")) {
      return r.Error("a DTD or processing instruction is not supported in a launch file");
    } else if (r.Peek() == '<') {
      absl::StatusOr<XmlElement> child = ParseElement(r, depth + 1);
      if (!child.ok()) return child.status();
      e.children.push_back(*std::move(child));
    } else {
      const int line = r.line();
      const std::string raw = r.Until("<");
      absl::StatusOr<std::string> text = Decode(raw, r, line);
      if (!text.ok()) return text.status();
      e.text += *text;
    }
  }
}

}  // namespace

absl::StatusOr<XmlElement> ParseXml(absl::string_view text, absl::string_view file) {
  Reader r(text, file);
  absl::Status s = SkipMisc(r);
  if (!s.ok()) return s;
  if (r.AtEnd()) return r.Error("no element: the file is empty");
  if (r.Peek() != '<') {
    return r.Error(absl::StrCat("text \"", r.Until("<\n").substr(0, 20),
                                "\" outside the root element"));
  }
  absl::StatusOr<XmlElement> root = ParseElement(r, 0);
  if (!root.ok()) return root.status();
  s = SkipMisc(r);
  if (!s.ok()) return s;
  if (!r.AtEnd()) {
    return r.Error(absl::StrCat("more after the root element <", root->name, "> (line ",
                                root->line, "): a launch file has one root element"));
  }
  return root;
}

}  // namespace launch
}  // namespace cyber
