#include "cyber/bridge/foxglove_protocol.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cyber/bridge/json.h"

namespace cyber {
namespace bridge {
namespace {

void AppendLittleEndian(std::string& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>(value >> (8 * i)));
}

// `value` as a u32 id; InvalidArgument naming `field` otherwise.
absl::StatusOr<uint32_t> Id(const JsonValue* value, absl::string_view field) {
  if (value == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("field \"", field, "\" is missing"));
  }
  if (value->kind != JsonValue::Kind::kNumber || value->number < 0 ||
      value->number > 4294967295.0 || value->number != static_cast<uint32_t>(value->number)) {
    return absl::InvalidArgumentError(
        absl::StrCat("field \"", field, "\" is not an unsigned 32-bit integer"));
  }
  return static_cast<uint32_t>(value->number);
}

}  // namespace

std::string ServerInfoJson(absl::string_view name, absl::string_view session_id) {
  return absl::StrCat("{\"op\":\"serverInfo\",\"name\":", JsonQuote(name),
                      ",\"capabilities\":[],\"supportedEncodings\":[\"protobuf\"],"
                      "\"metadata\":{},\"sessionId\":",
                      JsonQuote(session_id), "}");
}

std::string AdvertiseJson(const std::vector<AdvertisedChannel>& channels) {
  std::string json = "{\"op\":\"advertise\",\"channels\":[";
  for (size_t i = 0; i < channels.size(); ++i) {
    const AdvertisedChannel& c = channels[i];
    absl::StrAppend(&json, i == 0 ? "" : ",", "{\"id\":", c.id, ",\"topic\":", JsonQuote(c.topic),
                    ",\"encoding\":\"protobuf\",\"schemaName\":", JsonQuote(c.schema_name),
                    ",\"schema\":", JsonQuote(absl::Base64Escape(c.schema)),
                    ",\"schemaEncoding\":\"protobuf\"}");
  }
  json += "]}";
  return json;
}

std::string UnadvertiseJson(const std::vector<uint32_t>& channel_ids) {
  return absl::StrCat("{\"op\":\"unadvertise\",\"channelIds\":[", absl::StrJoin(channel_ids, ","),
                      "]}");
}

std::string StatusJson(StatusLevel level, absl::string_view message) {
  return absl::StrCat("{\"op\":\"status\",\"level\":", static_cast<int>(level),
                      ",\"message\":", JsonQuote(message), "}");
}

std::string MessageDataPayload(uint32_t subscription_id, absl::Time receive_time,
                               absl::string_view message) {
  std::string payload;
  payload.reserve(1 + 4 + 8 + message.size());
  payload.push_back(0x01);
  AppendLittleEndian(payload, subscription_id, 4);
  AppendLittleEndian(payload, static_cast<uint64_t>(absl::ToUnixNanos(receive_time)), 8);
  payload.append(message.data(), message.size());
  return payload;
}

absl::StatusOr<ClientOp> ParseClientOp(absl::string_view text) {
  absl::StatusOr<JsonValue> json = ParseJson(text);
  if (!json.ok()) return json.status();
  const JsonValue* op = json->Find("op");
  if (op == nullptr || op->kind != JsonValue::Kind::kString) {
    return absl::InvalidArgumentError("client message: no string field \"op\"");
  }
  ClientOp parsed;
  parsed.op = op->string;
  if (op->string == "subscribe") {
    parsed.kind = ClientOp::Kind::kSubscribe;
    const JsonValue* list = json->Find("subscriptions");
    if (list == nullptr || list->kind != JsonValue::Kind::kArray) {
      return absl::InvalidArgumentError("subscribe: field \"subscriptions\" is not an array");
    }
    for (const JsonValue& item : list->array) {
      absl::StatusOr<uint32_t> id = Id(item.Find("id"), "subscriptions[].id");
      if (!id.ok()) return absl::InvalidArgumentError(absl::StrCat("subscribe: ", id.status().message()));
      absl::StatusOr<uint32_t> channel = Id(item.Find("channelId"), "subscriptions[].channelId");
      if (!channel.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("subscribe: ", channel.status().message()));
      }
      parsed.subscriptions.push_back({*id, *channel});
    }
  } else if (op->string == "unsubscribe") {
    parsed.kind = ClientOp::Kind::kUnsubscribe;
    const JsonValue* list = json->Find("subscriptionIds");
    if (list == nullptr || list->kind != JsonValue::Kind::kArray) {
      return absl::InvalidArgumentError("unsubscribe: field \"subscriptionIds\" is not an array");
    }
    for (const JsonValue& item : list->array) {
      absl::StatusOr<uint32_t> id = Id(&item, "subscriptionIds[]");
      if (!id.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("unsubscribe: ", id.status().message()));
      }
      parsed.subscription_ids.push_back(*id);
    }
  }
  return parsed;
}

}  // namespace bridge
}  // namespace cyber
