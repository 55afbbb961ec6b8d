// The JSON the Foxglove WebSocket protocol needs, and no more: a parser
// for the small objects clients send ({"op":"subscribe",...}) and quoting
// for the strings the server writes (the server builds its own JSON with
// absl::StrCat, its shapes being fixed).
//
// Why our own: the machine has no JSON library packaged for this build
// (third_party/), and a client message is a few hundred bytes of a known
// shape. Numbers are doubles (channel and subscription ids are u32, exact
// in a double). Nesting is limited (64) so a hostile client cannot overflow
// the stack.
//
// Threads: pure functions and plain values.

#ifndef CYBER_BRIDGE_JSON_H_
#define CYBER_BRIDGE_JSON_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cyber {
namespace bridge {

struct JsonValue {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<JsonValue> array;
  std::map<std::string, JsonValue> object;

  // The member `key` of an object, or null if absent (or not an object).
  const JsonValue* Find(absl::string_view key) const;
};

// InvalidArgument with the byte offset and what was expected.
absl::StatusOr<JsonValue> ParseJson(absl::string_view text);

// `s` as a JSON string literal, quotes included.
std::string JsonQuote(absl::string_view s);

}  // namespace bridge
}  // namespace cyber

#endif  // CYBER_BRIDGE_JSON_H_
