#include "cyber/bridge/json.h"

#include "gtest/gtest.h"

namespace cyber {
namespace bridge {
namespace {

TEST(JsonTest, ParsesASubscribe) {
  absl::StatusOr<JsonValue> v = ParseJson(
      R"( {"op":"subscribe","subscriptions":[{"id":0,"channelId":3},{"id":1,"channelId":4294967295}]} )");
  ASSERT_TRUE(v.ok()) << v.status();
  ASSERT_NE(v->Find("op"), nullptr);
  EXPECT_EQ(v->Find("op")->string, "subscribe");
  const JsonValue* subs = v->Find("subscriptions");
  ASSERT_NE(subs, nullptr);
  ASSERT_EQ(subs->array.size(), 2u);
  EXPECT_EQ(subs->array[1].Find("channelId")->number, 4294967295.0);
  EXPECT_EQ(v->Find("nothing"), nullptr);
}

TEST(JsonTest, ScalarsAndEscapes) {
  absl::StatusOr<JsonValue> v =
      ParseJson(R"([true,false,null,-1.5e2,"a\"b\\c\/\n\u00e9\ud83d\ude00"])");
  ASSERT_TRUE(v.ok()) << v.status();
  ASSERT_EQ(v->array.size(), 5u);
  EXPECT_TRUE(v->array[0].boolean);
  EXPECT_EQ(v->array[1].kind, JsonValue::Kind::kBool);
  EXPECT_EQ(v->array[2].kind, JsonValue::Kind::kNull);
  EXPECT_EQ(v->array[3].number, -150);
  EXPECT_EQ(v->array[4].string, "a\"b\\c/\n\xc3\xa9\xf0\x9f\x98\x80");
}

TEST(JsonTest, ErrorsSayWhere) {
  absl::StatusOr<JsonValue> v = ParseJson(R"({"op" "x"})");
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("':' at byte 6"), std::string::npos) << v.status();
  EXPECT_FALSE(ParseJson("[1,2").ok());
  EXPECT_FALSE(ParseJson("{} x").ok());
  EXPECT_FALSE(ParseJson(std::string(100, '[') + std::string(100, ']')).ok());  // too deep
}

TEST(JsonTest, QuoteRoundTrips) {
  const std::string s = "tab\there \"quoted\" back\\slash \x01 /sensor/imu";
  EXPECT_EQ(JsonQuote("a\"b"), R"("a\"b")");
  absl::StatusOr<JsonValue> v = ParseJson(JsonQuote(s));
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->string, s);
}

}  // namespace
}  // namespace bridge
}  // namespace cyber
