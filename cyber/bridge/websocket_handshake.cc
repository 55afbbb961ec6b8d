#include "cyber/bridge/websocket_handshake.h"

#include <array>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cyber/bridge/sha1.h"

namespace cyber {
namespace bridge {
namespace {

constexpr char kWebSocketGuid[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

// Whether the comma-separated header value `list` contains `token`
// (case-insensitive), as "Connection: keep-alive, Upgrade".
bool HasToken(absl::string_view list, absl::string_view token) {
  for (absl::string_view item : absl::StrSplit(list, ',')) {
    if (absl::EqualsIgnoreCase(absl::StripAsciiWhitespace(item), token)) return true;
  }
  return false;
}

}  // namespace

std::string WebSocketAccept(absl::string_view key) {
  const std::array<uint8_t, 20> digest = Sha1(absl::StrCat(key, kWebSocketGuid));
  return absl::Base64Escape(
      absl::string_view(reinterpret_cast<const char*>(digest.data()), digest.size()));
}

absl::StatusOr<UpgradeRequest> ParseUpgradeRequest(absl::string_view request) {
  std::vector<absl::string_view> lines = absl::StrSplit(request, "\r\n");
  if (lines.empty()) return absl::InvalidArgumentError("WebSocket handshake: empty request");
  std::vector<absl::string_view> request_line =
      absl::StrSplit(lines[0], ' ', absl::SkipEmpty());
  if (request_line.size() != 3 || request_line[0] != "GET" ||
      !absl::StartsWith(request_line[2], "HTTP/1.1")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "WebSocket handshake: request line \"", lines[0], "\" is not \"GET <path> HTTP/1.1\""));
  }
  UpgradeRequest parsed;
  parsed.path = std::string(request_line[1]);
  bool upgrade = false, connection = false;
  std::string version;
  for (size_t i = 1; i < lines.size(); ++i) {
    const size_t colon = lines[i].find(':');
    if (colon == absl::string_view::npos) continue;
    const absl::string_view name = absl::StripAsciiWhitespace(lines[i].substr(0, colon));
    const absl::string_view value = absl::StripAsciiWhitespace(lines[i].substr(colon + 1));
    if (absl::EqualsIgnoreCase(name, "Upgrade")) {
      upgrade = HasToken(value, "websocket");
    } else if (absl::EqualsIgnoreCase(name, "Connection")) {
      connection = HasToken(value, "Upgrade");
    } else if (absl::EqualsIgnoreCase(name, "Sec-WebSocket-Key")) {
      parsed.key = std::string(value);
    } else if (absl::EqualsIgnoreCase(name, "Sec-WebSocket-Version")) {
      version = std::string(value);
    } else if (absl::EqualsIgnoreCase(name, "Sec-WebSocket-Protocol")) {
      for (absl::string_view p : absl::StrSplit(value, ',')) {
        p = absl::StripAsciiWhitespace(p);
        if (!p.empty()) parsed.subprotocols.emplace_back(p);
      }
    }
  }
  if (!upgrade) {
    return absl::InvalidArgumentError(
        "WebSocket handshake: no \"Upgrade: websocket\" header (a plain HTTP request?)");
  }
  if (!connection) {
    return absl::InvalidArgumentError("WebSocket handshake: no \"Connection: Upgrade\" header");
  }
  std::string decoded;
  if (parsed.key.empty() || !absl::Base64Unescape(parsed.key, &decoded) || decoded.size() != 16) {
    return absl::InvalidArgumentError(absl::StrCat(
        "WebSocket handshake: Sec-WebSocket-Key \"", parsed.key,
        "\" is not 16 bytes in base64"));
  }
  if (version != "13") {
    return absl::InvalidArgumentError(absl::StrCat(
        "WebSocket handshake: Sec-WebSocket-Version \"", version, "\" (only 13 is supported)"));
  }
  return parsed;
}

std::string UpgradeResponse(const UpgradeRequest& request, absl::string_view subprotocol) {
  std::string response = absl::StrCat(
      "HTTP/1.1 101 Switching Protocols\r\n"
      "Upgrade: websocket\r\n"
      "Connection: Upgrade\r\n"
      "Sec-WebSocket-Accept: ",
      WebSocketAccept(request.key), "\r\n");
  if (!subprotocol.empty()) {
    absl::StrAppend(&response, "Sec-WebSocket-Protocol: ", subprotocol, "\r\n");
  }
  absl::StrAppend(&response, "\r\n");
  return response;
}

std::string HttpErrorResponse(absl::string_view status, absl::string_view body) {
  return absl::StrCat("HTTP/1.1 ", status,
                      "\r\nContent-Type: text/plain\r\nConnection: close\r\nContent-Length: ",
                      body.size() + 1, "\r\n\r\n", body, "\n");
}

}  // namespace bridge
}  // namespace cyber
