#include "cyber/bridge/foxglove_protocol.h"

#include "absl/strings/escaping.h"
#include "cyber/bridge/json.h"
#include "gtest/gtest.h"

namespace cyber {
namespace bridge {
namespace {

TEST(FoxgloveProtocolTest, ServerInfo) {
  absl::StatusOr<JsonValue> v =
      ParseJson(ServerInfoJson("cyber_bridge", "42", {"clientPublish", "services"}));
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->Find("op")->string, "serverInfo");
  EXPECT_EQ(v->Find("name")->string, "cyber_bridge");
  ASSERT_EQ(v->Find("capabilities")->array.size(), 2u);
  EXPECT_EQ(v->Find("capabilities")->array[1].string, "services");
  EXPECT_EQ(v->Find("sessionId")->string, "42");
}

TEST(FoxgloveProtocolTest, AdvertiseCarriesTheSchemaInBase64) {
  const std::string schema("\x0a\x03\x61\x00\xff", 5);  // any bytes
  absl::StatusOr<JsonValue> v = ParseJson(AdvertiseJson(
      {AdvertisedChannel{7, "/sensor/imu", "sensor_polling.ImuReading", schema}}));
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->Find("op")->string, "advertise");
  const JsonValue& c = v->Find("channels")->array.at(0);
  EXPECT_EQ(c.Find("id")->number, 7);
  EXPECT_EQ(c.Find("topic")->string, "/sensor/imu");
  EXPECT_EQ(c.Find("encoding")->string, "protobuf");
  EXPECT_EQ(c.Find("schemaName")->string, "sensor_polling.ImuReading");
  EXPECT_EQ(c.Find("schemaEncoding")->string, "protobuf");
  std::string decoded;
  ASSERT_TRUE(absl::Base64Unescape(c.Find("schema")->string, &decoded));
  EXPECT_EQ(decoded, schema);
}

TEST(FoxgloveProtocolTest, UnadvertiseAndStatus) {
  absl::StatusOr<JsonValue> u = ParseJson(UnadvertiseJson({3, 9}));
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->Find("op")->string, "unadvertise");
  ASSERT_EQ(u->Find("channelIds")->array.size(), 2u);
  EXPECT_EQ(u->Find("channelIds")->array[1].number, 9);
  absl::StatusOr<JsonValue> s = ParseJson(StatusJson(StatusLevel::kWarning, "say \"hi\""));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->Find("level")->number, 1);
  EXPECT_EQ(s->Find("message")->string, "say \"hi\"");
}

// opcode 0x01, subscription id u32 LE, timestamp u64 LE (ns since the
// Unix epoch), the message.
TEST(FoxgloveProtocolTest, MessageDataLayout) {
  const absl::Time t = absl::FromUnixNanos(0x0102030405060708);
  const std::string p = MessageDataPayload(0xA1B2C3D4, t, "abc");
  ASSERT_EQ(p.size(), 1u + 4 + 8 + 3);
  EXPECT_EQ(p, std::string("\x01\xD4\xC3\xB2\xA1\x08\x07\x06\x05\x04\x03\x02\x01" "abc", 16));
}

TEST(FoxgloveProtocolTest, ParsesSubscribeAndUnsubscribe) {
  absl::StatusOr<ClientOp> s = ParseClientOp(
      R"({"op":"subscribe","subscriptions":[{"id":5,"channelId":2},{"id":6,"channelId":3}]})");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->kind, ClientOp::Kind::kSubscribe);
  ASSERT_EQ(s->subscriptions.size(), 2u);
  EXPECT_EQ(s->subscriptions[1].id, 6u);
  EXPECT_EQ(s->subscriptions[1].channel_id, 3u);

  absl::StatusOr<ClientOp> u = ParseClientOp(R"({"op":"unsubscribe","subscriptionIds":[5]})");
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_EQ(u->kind, ClientOp::Kind::kUnsubscribe);
  EXPECT_EQ(u->subscription_ids, std::vector<uint32_t>{5});

  absl::StatusOr<ClientOp> other = ParseClientOp(R"({"op":"getParameters","parameterNames":[]})");
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->kind, ClientOp::Kind::kUnsupported);
  EXPECT_EQ(other->op, "getParameters");
}

TEST(FoxgloveProtocolTest, MalformedClientOpsNameTheField) {
  absl::StatusOr<ClientOp> negative =
      ParseClientOp(R"({"op":"subscribe","subscriptions":[{"id":-1,"channelId":2}]})");
  ASSERT_FALSE(negative.ok());
  EXPECT_NE(negative.status().message().find("subscriptions[].id"), std::string::npos)
      << negative.status();
  absl::StatusOr<ClientOp> missing =
      ParseClientOp(R"({"op":"subscribe","subscriptions":[{"id":1}]})");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("channelId"), std::string::npos);
  EXPECT_FALSE(ParseClientOp(R"({"subscriptions":[]})").ok());
  EXPECT_FALSE(ParseClientOp("not json").ok());
}

TEST(FoxgloveProtocolTest, Services) {
  absl::StatusOr<JsonValue> v = ParseJson(AdvertiseServicesJson(
      {AdvertisedService{4, "/map/lookup", "map.Request", "rq", "map.Response", "rs"}}));
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->Find("op")->string, "advertiseServices");
  const JsonValue& s = v->Find("services")->array.at(0);
  EXPECT_EQ(s.Find("id")->number, 4);
  EXPECT_EQ(s.Find("name")->string, "/map/lookup");
  EXPECT_EQ(s.Find("request")->Find("schemaName")->string, "map.Request");
  EXPECT_EQ(s.Find("request")->Find("encoding")->string, "protobuf");
  EXPECT_EQ(s.Find("response")->Find("schema")->string, absl::Base64Escape("rs"));

  absl::StatusOr<JsonValue> f = ParseJson(ServiceCallFailureJson(4, 9, "DEADLINE_EXCEEDED"));
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->Find("op")->string, "serviceCallFailure");
  EXPECT_EQ(f->Find("callId")->number, 9);

  EXPECT_EQ(ServiceCallResponsePayload(0x01020304, 7, "protobuf", "ok"),
            std::string("\x03\x04\x03\x02\x01\x07\0\0\0\x08\0\0\0protobufok", 23));
}

TEST(FoxgloveProtocolTest, ParsesClientBinaryAndAdvertise) {
  absl::StatusOr<ClientBinary> data = ParseClientBinary(std::string("\x01\x05\0\0\0hi", 7));
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(data->kind, ClientBinary::Kind::kMessageData);
  EXPECT_EQ(data->channel_id, 5u);
  EXPECT_EQ(data->data, "hi");

  absl::StatusOr<ClientBinary> call =
      ParseClientBinary(std::string("\x02\x04\0\0\0\x09\0\0\0\x08\0\0\0protobufreq", 24));
  ASSERT_TRUE(call.ok()) << call.status();
  EXPECT_EQ(call->kind, ClientBinary::Kind::kServiceCallRequest);
  EXPECT_EQ(call->service_id, 4u);
  EXPECT_EQ(call->call_id, 9u);
  EXPECT_EQ(call->encoding, "protobuf");
  EXPECT_EQ(call->data, "req");

  EXPECT_FALSE(ParseClientBinary(std::string("\x02\x04\0\0\0\x09\0\0\0\x50\0\0\0pro", 16)).ok());
  EXPECT_FALSE(ParseClientBinary("\x01\x05").ok());
  EXPECT_FALSE(ParseClientBinary("\x07").ok());

  absl::StatusOr<ClientOp> advertise = ParseClientOp(
      R"({"op":"advertise","channels":[{"id":1,"topic":"/cmd","encoding":"protobuf","schemaName":"a.B"}]})");
  ASSERT_TRUE(advertise.ok()) << advertise.status();
  EXPECT_EQ(advertise->kind, ClientOp::Kind::kAdvertise);
  ASSERT_EQ(advertise->channels.size(), 1u);
  EXPECT_EQ(advertise->channels[0].topic, "/cmd");
  EXPECT_EQ(advertise->channels[0].schema_name, "a.B");
  absl::StatusOr<ClientOp> no_topic =
      ParseClientOp(R"({"op":"advertise","channels":[{"id":1,"encoding":"protobuf"}]})");
  ASSERT_FALSE(no_topic.ok());
  EXPECT_NE(no_topic.status().message().find("channels[].topic"), std::string::npos);
  absl::StatusOr<ClientOp> unadvertise = ParseClientOp(R"({"op":"unadvertise","channelIds":[1]})");
  ASSERT_TRUE(unadvertise.ok());
  EXPECT_EQ(unadvertise->channel_ids, std::vector<uint32_t>{1});
}

}  // namespace
}  // namespace bridge
}  // namespace cyber
