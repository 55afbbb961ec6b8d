// The bridge against a hand-driven graph (FakeChannelSource) and a client
// written from the RFC: what is advertised and when, that a channel is read
// once however many clients watch it and only while one does, and the
// message data each client gets.
#include "cyber/bridge/foxglove_bridge.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "cyber/bridge/json.h"
#include "cyber/bridge/websocket_frame.h"
#include "cyber/bridge/testing/fake_channel_source.h"
#include "cyber/bridge/testing/websocket_test_client.h"
#include "cyber/common/test_waits.h"
#include "gtest/gtest.h"

namespace cyber {
namespace bridge {
namespace {

using testing::FakeChannelSource;
using testing::Frame;
using testing::WebSocketTestClient;

ChannelSource::Channel Imu() {
  return {"/sensor/imu", "sensor_polling.ImuReading", std::string("\x0a\x02imu", 5)};
}
ChannelSource::Channel Lidar() {
  return {"/sensor/lidar", "sensor_polling.LidarScan", std::string("\x0a\x05lidar", 7)};
}

class FoxgloveBridgeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    source_.SetChannels({Imu()});
    FoxgloveBridge::Options options;
    options.server.port = 0;
    absl::StatusOr<std::unique_ptr<FoxgloveBridge>> bridge =
        FoxgloveBridge::Start(&source_, options);
    ASSERT_TRUE(bridge.ok()) << bridge.status();
    bridge_ = std::move(*bridge);
    // Advertised before any client connects (the first sync).
    ASSERT_TRUE(test::Eventually([&] { return bridge_->stats().advertised == 1; }));
  }

  // A connected client, past serverInfo and the first advertise; returns
  // the id of /sensor/imu.
  std::unique_ptr<WebSocketTestClient> Connect(uint32_t* imu_id) {
    absl::StatusOr<std::unique_ptr<WebSocketTestClient>> c =
        WebSocketTestClient::Connect(bridge_->port());
    EXPECT_TRUE(c.ok()) << c.status();
    absl::StatusOr<std::string> head = (*c)->Handshake("foxglove.websocket.v1");
    EXPECT_TRUE(head.ok() && head->find(" 101 ") != std::string::npos);
    absl::StatusOr<Frame> info = (*c)->ReadFrame();
    EXPECT_TRUE(info.ok()) << info.status();
    absl::StatusOr<JsonValue> info_json = ParseJson(info->payload);
    EXPECT_TRUE(info_json.ok()) << info->payload;
    EXPECT_EQ(info_json->Find("op")->string, "serverInfo");  // first, always
    absl::StatusOr<Frame> advertise = (*c)->ReadFrame();
    EXPECT_TRUE(advertise.ok()) << advertise.status();
    absl::StatusOr<JsonValue> json = ParseJson(advertise->payload);
    EXPECT_TRUE(json.ok()) << advertise->payload;
    EXPECT_EQ(json->Find("op")->string, "advertise");
    const JsonValue& channel = json->Find("channels")->array.at(0);
    EXPECT_EQ(channel.Find("topic")->string, "/sensor/imu");
    EXPECT_EQ(channel.Find("schemaName")->string, "sensor_polling.ImuReading");
    EXPECT_EQ(channel.Find("schema")->string, absl::Base64Escape(Imu().schema));
    *imu_id = static_cast<uint32_t>(channel.Find("id")->number);
    return std::move(*c);
  }

  FakeChannelSource source_;
  std::unique_ptr<FoxgloveBridge> bridge_;
};

std::string Subscribe(uint32_t id, uint32_t channel) {
  return absl::StrCat(R"({"op":"subscribe","subscriptions":[{"id":)", id, R"(,"channelId":)",
                      channel, "}]}");
}

// The message-data frame's fields.
struct Data {
  uint32_t subscription = 0;
  uint64_t stamp_ns = 0;
  std::string message;
};
Data ReadData(WebSocketTestClient& c) {
  absl::StatusOr<Frame> f = c.ReadFrame();
  EXPECT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->opcode, 0x2) << f->payload;
  Data d;
  const auto* b = reinterpret_cast<const uint8_t*>(f->payload.data());
  EXPECT_GE(f->payload.size(), 13u);
  EXPECT_EQ(b[0], 0x01);
  for (int i = 3; i >= 0; --i) d.subscription = d.subscription << 8 | b[1 + i];
  for (int i = 7; i >= 0; --i) d.stamp_ns = d.stamp_ns << 8 | b[5 + i];
  d.message = f->payload.substr(13);
  return d;
}

TEST_F(FoxgloveBridgeTest, OneSourceSubscriptionFansOutToEveryClient) {
  uint32_t imu_a = 0, imu_b = 0;
  std::unique_ptr<WebSocketTestClient> a = Connect(&imu_a);
  std::unique_ptr<WebSocketTestClient> b = Connect(&imu_b);
  EXPECT_EQ(imu_a, imu_b);
  EXPECT_EQ(source_.subscriptions("/sensor/imu"), 0);  // nobody watches yet

  // A client's requests are handled in order, so once the answer to a
  // later (unsupported) request arrives, its subscribe has been handled.
  auto subscribe = [](WebSocketTestClient& c, uint32_t id, uint32_t channel) {
    ASSERT_TRUE(c.SendText(Subscribe(id, channel)));
    ASSERT_TRUE(c.SendText(R"({"op":"ping"})"));
    ASSERT_TRUE(c.ReadTextContaining(R"(op \"ping\" is not supported)").ok());
  };
  subscribe(*a, 10, imu_a);
  EXPECT_EQ(source_.subscriptions("/sensor/imu"), 1);
  subscribe(*b, 20, imu_b);
  EXPECT_EQ(source_.subscriptions("/sensor/imu"), 1);  // read once for both

  const absl::Time t = absl::FromUnixNanos(1700000000123456789);
  ASSERT_EQ(source_.Publish("/sensor/imu", std::string("\x08\x2a", 2), t), 1);
  for (auto [client, subscription] : {std::pair{a.get(), 10u}, std::pair{b.get(), 20u}}) {
    const Data d = ReadData(*client);
    EXPECT_EQ(d.subscription, subscription);
    EXPECT_EQ(d.stamp_ns, 1700000000123456789u);
    EXPECT_EQ(d.message, std::string("\x08\x2a", 2));
  }
  EXPECT_EQ(bridge_->stats().forwarded, 2u);
  EXPECT_EQ(bridge_->stats().dropped, 0u);

  // a unsubscribes: still read for b; b leaves: read no more.
  ASSERT_TRUE(a->SendText(R"({"op":"unsubscribe","subscriptionIds":[10]})"));
  b.reset();
  ASSERT_TRUE(test::Eventually([&] { return source_.subscriptions("/sensor/imu") == 0; }));
  ASSERT_TRUE(test::Eventually([&] { return bridge_->stats().clients == 1; }));
}

TEST_F(FoxgloveBridgeTest, AdvertisesAndUnadvertisesAsTheGraphChanges) {
  uint32_t imu = 0;
  std::unique_ptr<WebSocketTestClient> c = Connect(&imu);
  ASSERT_TRUE(c->SendText(Subscribe(1, imu)));
  ASSERT_TRUE(test::Eventually([&] { return source_.subscriptions("/sensor/imu") == 1; }));

  source_.SetChannels({Imu(), Lidar()});
  absl::StatusOr<std::string> added = c->ReadTextContaining("\"advertise\"");
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_NE(added->find("/sensor/lidar"), std::string::npos) << *added;
  EXPECT_EQ(added->find("/sensor/imu"), std::string::npos) << *added;  // only what is new

  // /sensor/imu goes: unadvertised, its source subscription ended.
  source_.SetChannels({Lidar()});
  absl::StatusOr<std::string> removed = c->ReadTextContaining("\"unadvertise\"");
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(*removed, absl::StrCat(R"({"op":"unadvertise","channelIds":[)", imu, "]}"));
  ASSERT_TRUE(test::Eventually([&] { return source_.subscriptions("/sensor/imu") == 0; }));

  // It comes back with another schema: a new id.
  ChannelSource::Channel changed = Imu();
  changed.schema = "other";
  source_.SetChannels({Lidar(), changed});
  absl::StatusOr<std::string> again = c->ReadTextContaining("/sensor/imu");
  ASSERT_TRUE(again.ok()) << again.status();
  absl::StatusOr<JsonValue> json = ParseJson(*again);
  ASSERT_TRUE(json.ok());
  EXPECT_NE(json->Find("channels")->array.at(0).Find("id")->number, imu);
}

TEST_F(FoxgloveBridgeTest, BadRequestsGetAStatusMessage) {
  uint32_t imu = 0;
  std::unique_ptr<WebSocketTestClient> c = Connect(&imu);
  ASSERT_TRUE(c->SendText(Subscribe(1, imu + 100)));
  absl::StatusOr<std::string> unknown = c->ReadTextContaining("\"status\"");
  ASSERT_TRUE(unknown.ok()) << unknown.status();
  EXPECT_NE(unknown->find(absl::StrCat("channel id ", imu + 100, " is not advertised")),
            std::string::npos)
      << *unknown;

  ASSERT_TRUE(c->SendText(Subscribe(1, imu)));
  ASSERT_TRUE(c->SendText(Subscribe(1, imu)));
  absl::StatusOr<std::string> twice = c->ReadTextContaining("\"status\"");
  ASSERT_TRUE(twice.ok()) << twice.status();
  EXPECT_NE(twice->find("subscription id 1 is already in use"), std::string::npos) << *twice;

  ASSERT_TRUE(c->SendText(R"({"op":"getParameters","parameterNames":[]})"));
  absl::StatusOr<std::string> unsupported = c->ReadTextContaining("\"status\"");
  ASSERT_TRUE(unsupported.ok()) << unsupported.status();
  EXPECT_NE(unsupported->find("\\\"getParameters\\\" is not supported"), std::string::npos)
      << *unsupported;

  ASSERT_TRUE(c->SendText("{not json"));
  absl::StatusOr<std::string> garbage = c->ReadTextContaining("\"status\"");
  ASSERT_TRUE(garbage.ok()) << garbage.status();
  EXPECT_NE(garbage->find("JSON: expected"), std::string::npos) << *garbage;
}

TEST_F(FoxgloveBridgeTest, ClientPublishGoesToTheGraph) {
  uint32_t imu = 0;
  std::unique_ptr<WebSocketTestClient> c = Connect(&imu);
  ASSERT_TRUE(c->SendText(
      R"({"op":"advertise","channels":[{"id":3,"topic":"/cmd","encoding":"protobuf","schemaName":"demo.Cmd"},)"
      R"({"id":4,"topic":"/raw","encoding":"json","schemaName":"demo.Cmd"}]})"));
  absl::StatusOr<std::string> json = c->ReadTextContaining("\"status\"");
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_NE(json->find("encoding \\\"json\\\""), std::string::npos) << *json;
  ASSERT_TRUE(c->SendRaw(EncodeMaskedFrame(Opcode::kBinary, std::string("\x01\x03\0\0\0go", 7), 9)));
  ASSERT_TRUE(c->SendRaw(EncodeMaskedFrame(Opcode::kBinary, std::string("\x01\x08\0\0\0no", 7), 9)));
  absl::StatusOr<std::string> unknown = c->ReadTextContaining("\"status\"");
  ASSERT_TRUE(unknown.ok()) << unknown.status();
  EXPECT_NE(unknown->find("client channel 8 is not advertised"), std::string::npos) << *unknown;
  const std::vector<FakeChannelSource::Published> published = source_.published();
  ASSERT_EQ(published.size(), 1u);
  EXPECT_EQ(published[0].topic, "/cmd");
  EXPECT_EQ(published[0].type_name, "demo.Cmd");
  EXPECT_EQ(published[0].payload, "go");
  EXPECT_EQ(bridge_->stats().client_channels, 1u);
  EXPECT_EQ(bridge_->stats().published, 1u);
  ASSERT_TRUE(c->SendText(R"({"op":"unadvertise","channelIds":[3]})"));
  ASSERT_TRUE(test::Eventually([&] { return bridge_->stats().client_channels == 0; }));
}

TEST_F(FoxgloveBridgeTest, ServicesAreAdvertisedAndCalled) {
  source_.SetCallFn([](const std::string& service, absl::string_view request)
                        -> absl::StatusOr<std::string> {
    if (request == "fail") return absl::NotFoundError("no such key");
    return absl::StrCat(service, " answers ", request);
  });
  uint32_t imu = 0;
  std::unique_ptr<WebSocketTestClient> c = Connect(&imu);
  source_.SetServices({{"/map/lookup", "map.Request", "rq", "map.Response", "rs"}});
  absl::StatusOr<std::string> advertised = c->ReadTextContaining("advertiseServices");
  ASSERT_TRUE(advertised.ok()) << advertised.status();
  absl::StatusOr<JsonValue> json = ParseJson(*advertised);
  ASSERT_TRUE(json.ok());
  const JsonValue& service = json->Find("services")->array.at(0);
  EXPECT_EQ(service.Find("name")->string, "/map/lookup");
  const uint32_t id = static_cast<uint32_t>(service.Find("id")->number);

  auto request = [id](uint32_t call, const std::string& encoding, const std::string& data) {
    std::string p(1, '\x02');
    for (uint32_t v : {id, call, static_cast<uint32_t>(encoding.size())}) {
      for (int i = 0; i < 4; ++i) p.push_back(static_cast<char>(v >> (8 * i)));
    }
    return EncodeMaskedFrame(Opcode::kBinary, p + encoding + data, 5);
  };
  ASSERT_TRUE(c->SendRaw(request(1, "protobuf", "here")));
  absl::StatusOr<Frame> response = c->ReadFrame();
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->opcode, 0x2);
  EXPECT_EQ(response->payload,
            ServiceCallResponsePayload(id, 1, "protobuf", "/map/lookup answers here"));

  ASSERT_TRUE(c->SendRaw(request(2, "protobuf", "fail")));
  absl::StatusOr<std::string> failed = c->ReadTextContaining("serviceCallFailure");
  ASSERT_TRUE(failed.ok()) << failed.status();
  EXPECT_NE(failed->find("\"callId\":2"), std::string::npos) << *failed;
  EXPECT_NE(failed->find("no such key"), std::string::npos) << *failed;

  ASSERT_TRUE(c->SendRaw(request(3, "json", "{}")));
  absl::StatusOr<std::string> encoding = c->ReadTextContaining("serviceCallFailure");
  ASSERT_TRUE(encoding.ok()) << encoding.status();
  EXPECT_NE(encoding->find("takes protobuf requests only"), std::string::npos) << *encoding;

  source_.SetServices({});
  absl::StatusOr<std::string> gone = c->ReadTextContaining("unadvertiseServices");
  ASSERT_TRUE(gone.ok()) << gone.status();
  EXPECT_EQ(*gone, absl::StrCat(R"({"op":"unadvertiseServices","serviceIds":[)", id, "]}"));
}

// Destroying the bridge with clients subscribed: they get a close frame,
// and no source subscription is left.
TEST_F(FoxgloveBridgeTest, StopsWithClientsConnected) {
  uint32_t imu = 0;
  std::unique_ptr<WebSocketTestClient> c = Connect(&imu);
  ASSERT_TRUE(c->SendText(Subscribe(1, imu)));
  ASSERT_TRUE(test::Eventually([&] { return source_.subscriptions("/sensor/imu") == 1; }));
  bridge_.reset();
  EXPECT_EQ(source_.subscriptions("/sensor/imu"), 0);
  EXPECT_TRUE(c->WaitForEof());
}

}  // namespace
}  // namespace bridge
}  // namespace cyber
