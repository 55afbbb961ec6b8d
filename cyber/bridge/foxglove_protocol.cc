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

std::string ServerInfoJson(absl::string_view name, absl::string_view session_id,
                           const std::vector<std::string>& capabilities) {
  std::vector<std::string> quoted;
  for (const std::string& c : capabilities) quoted.push_back(JsonQuote(c));
  return absl::StrCat("{\"op\":\"serverInfo\",\"name\":", JsonQuote(name),
                      ",\"capabilities\":[", absl::StrJoin(quoted, ","),
                      "],\"supportedEncodings\":[\"protobuf\"],"
                      "\"metadata\":{},\"sessionId\":",
                      JsonQuote(session_id), "}");
}

namespace {
std::string SchemaJson(absl::string_view type, absl::string_view schema) {
  return absl::StrCat("{\"encoding\":\"protobuf\",\"schemaName\":", JsonQuote(type),
                      ",\"schemaEncoding\":\"protobuf\",\"schema\":",
                      JsonQuote(absl::Base64Escape(schema)), "}");
}
}  // namespace

std::string AdvertiseServicesJson(const std::vector<AdvertisedService>& services) {
  std::string json = "{\"op\":\"advertiseServices\",\"services\":[";
  for (size_t i = 0; i < services.size(); ++i) {
    const AdvertisedService& s = services[i];
    absl::StrAppend(&json, i == 0 ? "" : ",", "{\"id\":", s.id, ",\"name\":", JsonQuote(s.name),
                    ",\"type\":", JsonQuote(s.request_type),
                    ",\"request\":", SchemaJson(s.request_type, s.request_schema),
                    ",\"response\":", SchemaJson(s.response_type, s.response_schema), "}");
  }
  json += "]}";
  return json;
}

std::string UnadvertiseServicesJson(const std::vector<uint32_t>& service_ids) {
  return absl::StrCat("{\"op\":\"unadvertiseServices\",\"serviceIds\":[",
                      absl::StrJoin(service_ids, ","), "]}");
}

std::string ServiceCallFailureJson(uint32_t service_id, uint32_t call_id,
                                   absl::string_view message) {
  return absl::StrCat("{\"op\":\"serviceCallFailure\",\"serviceId\":", service_id,
                      ",\"callId\":", call_id, ",\"message\":", JsonQuote(message), "}");
}

std::string ServiceCallResponsePayload(uint32_t service_id, uint32_t call_id,
                                       absl::string_view encoding, absl::string_view response) {
  std::string payload;
  payload.push_back(0x03);
  AppendLittleEndian(payload, service_id, 4);
  AppendLittleEndian(payload, call_id, 4);
  AppendLittleEndian(payload, encoding.size(), 4);
  payload.append(encoding.data(), encoding.size());
  payload.append(response.data(), response.size());
  return payload;
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
  } else if (op->string == "advertise") {
    parsed.kind = ClientOp::Kind::kAdvertise;
    const JsonValue* list = json->Find("channels");
    if (list == nullptr || list->kind != JsonValue::Kind::kArray) {
      return absl::InvalidArgumentError("advertise: field \"channels\" is not an array");
    }
    for (const JsonValue& item : list->array) {
      absl::StatusOr<uint32_t> id = Id(item.Find("id"), "channels[].id");
      if (!id.ok()) return absl::InvalidArgumentError(absl::StrCat("advertise: ", id.status().message()));
      ClientChannel channel;
      channel.id = *id;
      for (auto [field, out] : {std::pair{"topic", &channel.topic},
                                std::pair{"encoding", &channel.encoding},
                                std::pair{"schemaName", &channel.schema_name}}) {
        const JsonValue* v = item.Find(field);
        if (v == nullptr || v->kind != JsonValue::Kind::kString) {
          return absl::InvalidArgumentError(
              absl::StrCat("advertise: field \"channels[].", field, "\" is not a string"));
        }
        *out = v->string;
      }
      parsed.channels.push_back(std::move(channel));
    }
  } else if (op->string == "unadvertise") {
    parsed.kind = ClientOp::Kind::kUnadvertise;
    const JsonValue* list = json->Find("channelIds");
    if (list == nullptr || list->kind != JsonValue::Kind::kArray) {
      return absl::InvalidArgumentError("unadvertise: field \"channelIds\" is not an array");
    }
    for (const JsonValue& item : list->array) {
      absl::StatusOr<uint32_t> id = Id(&item, "channelIds[]");
      if (!id.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("unadvertise: ", id.status().message()));
      }
      parsed.channel_ids.push_back(*id);
    }
  }
  return parsed;
}

absl::StatusOr<ClientBinary> ParseClientBinary(absl::string_view payload) {
  auto u32 = [&payload](size_t offset) {
    uint32_t v = 0;
    for (int i = 3; i >= 0; --i) v = v << 8 | static_cast<uint8_t>(payload[offset + i]);
    return v;
  };
  if (payload.empty()) return absl::InvalidArgumentError("client binary message: empty");
  ClientBinary parsed;
  const uint8_t opcode = static_cast<uint8_t>(payload[0]);
  if (opcode == 0x01) {
    if (payload.size() < 5) {
      return absl::InvalidArgumentError(absl::StrCat(
          "client message data: ", payload.size(), " bytes, shorter than its 5-byte header"));
    }
    parsed.kind = ClientBinary::Kind::kMessageData;
    parsed.channel_id = u32(1);
    parsed.data = std::string(payload.substr(5));
    return parsed;
  }
  if (opcode == 0x02) {
    if (payload.size() < 13 || payload.size() < 13 + static_cast<size_t>(u32(9))) {
      return absl::InvalidArgumentError(absl::StrCat(
          "service call request: ", payload.size(), " bytes, shorter than its header"));
    }
    parsed.kind = ClientBinary::Kind::kServiceCallRequest;
    parsed.service_id = u32(1);
    parsed.call_id = u32(5);
    const uint32_t encoding_length = u32(9);
    parsed.encoding = std::string(payload.substr(13, encoding_length));
    parsed.data = std::string(payload.substr(13 + encoding_length));
    return parsed;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("client binary message: opcode 0x", absl::Hex(opcode),
                   " is not message data (0x01) or a service call request (0x02)"));
}

}  // namespace bridge
}  // namespace cyber
