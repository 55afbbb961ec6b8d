// FrameTopicType's serialize/deserialize without Fast-DDS's threads: a
// frame travels as the CDR payload Fast-DDS would hand a reader, and is
// received as bytes, parsed where it lies when the reader names its
// prototype, or discarded unread.

#include "cyber/transport/dds/frame_topic_type.h"

#include <cstring>
#include <string>

#include <fastdds/rtps/common/SerializedPayload.h>

#include "cyber/transport/dds/testing/test_messages.pb.h"
#include "gtest/gtest.h"

namespace cyber {
namespace dds {
namespace {

using dds_test::Ping;
using eprosima::fastrtps::rtps::SerializedPayload_t;

Ping APing() {
  Ping ping;
  ping.set_seq(7);
  ping.set_body(std::string(3000, 'b'));
  return ping;
}

// A message frame of `ping` as a writer serializes it.
void Serialize(FrameTopicType& type, const Ping& ping, FrameKind kind, SerializedPayload_t* out) {
  FrameSample sent;
  sent.message = &ping;
  sent.message_size = static_cast<uint32_t>(ping.ByteSizeLong());
  sent.header.kind = kind;
  sent.header.sequence = 11;
  sent.header.sent_ns = 12345;
  ASSERT_TRUE(type.serialize(&sent, out));
}

TEST(FrameTopicTypeTest, WithoutAPrototypeAReaderGetsTheFramesBytes) {
  FrameTopicType type("cyber.dds_test.Ping");
  SerializedPayload_t payload;
  Serialize(type, APing(), FrameKind::kMessage, &payload);
  FrameSample got;
  ASSERT_TRUE(type.deserialize(&payload, &got));
  EXPECT_EQ(got.parsed, nullptr);
  absl::StatusOr<FrameView> frame = DecodeFrame(got.bytes);
  ASSERT_TRUE(frame.ok()) << frame.status();
  Ping back;
  ASSERT_TRUE(back.ParseFromArray(frame->payload.data(), static_cast<int>(frame->payload.size())));
  EXPECT_EQ(back.SerializeAsString(), APing().SerializeAsString());
}

TEST(FrameTopicTypeTest, WithAPrototypeAMessageIsParsedWhereItLies) {
  for (uint32_t bound : {0u, 4096u}) {
    FrameTopicType type("cyber.dds_test.Ping", bound);
    SerializedPayload_t payload(type.m_typeSize);
    Serialize(type, APing(), FrameKind::kMessage, &payload);
    FrameSample got;
    got.parse_as = &Ping::default_instance();
    got.bytes = "left from an earlier sample";
    ASSERT_TRUE(type.deserialize(&payload, &got)) << bound;
    ASSERT_NE(got.parsed, nullptr) << bound;
    EXPECT_TRUE(got.bytes.empty());
    const auto* ping = dynamic_cast<const Ping*>(got.parsed.get());
    ASSERT_NE(ping, nullptr);
    EXPECT_EQ(ping->SerializeAsString(), APing().SerializeAsString());
    EXPECT_EQ(got.payload_size, APing().ByteSizeLong());
    EXPECT_EQ(got.header.sequence, 11u);
    EXPECT_EQ(got.header.sent_ns, 12345);
    EXPECT_EQ(type.parsed(), 1u);

    // The next take, by a reader of bytes: bytes, whatever the last one
    // took.
    FrameSample bytes;
    ASSERT_TRUE(type.deserialize(&payload, &bytes));
    EXPECT_EQ(bytes.parsed, nullptr);
    EXPECT_FALSE(bytes.bytes.empty());
    got.parsed.reset();
    ASSERT_TRUE(type.deserialize(&payload, &got));
    EXPECT_NE(got.parsed, nullptr) << "a reader's prototype is its own, each take";
    EXPECT_EQ(type.parsed(), 2u);
  }
}

// A sample its reader drops unread (this process wrote it) costs neither
// a parse nor a copy.
TEST(FrameTopicTypeTest, ADiscardedSampleIsNeitherParsedNorCopied) {
  FrameTopicType type("cyber.dds_test.Ping");
  SerializedPayload_t payload;
  Serialize(type, APing(), FrameKind::kMessage, &payload);
  for (const google::protobuf::MessageLite* parse_as :
       {static_cast<const google::protobuf::MessageLite*>(&Ping::default_instance()),
        static_cast<const google::protobuf::MessageLite*>(nullptr)}) {
    FrameSample got;
    got.parse_as = parse_as;
    got.discard = true;
    got.bytes = "left from an earlier sample";
    ASSERT_TRUE(type.deserialize(&payload, &got));
    EXPECT_EQ(got.parsed, nullptr);
    EXPECT_TRUE(got.bytes.empty());
  }
  EXPECT_EQ(type.discarded(), 2u);
  EXPECT_EQ(type.parsed(), 0u);
}

// What is not a message that parses is copied out as before, for the
// reader to refuse and name (or, for a service's frame, to handle).
TEST(FrameTopicTypeTest, WhatDoesNotParseIsHandedAsBytes) {
  FrameTopicType type("cyber.dds_test.Ping");

  SerializedPayload_t request;
  Serialize(type, APing(), FrameKind::kRequest, &request);
  FrameSample got;
  got.parse_as = &Ping::default_instance();
  ASSERT_TRUE(type.deserialize(&request, &got));
  EXPECT_EQ(got.parsed, nullptr);
  EXPECT_FALSE(got.bytes.empty());

  // A message without its required field.
  Ping partial;
  partial.set_body("no seq");
  SerializedPayload_t broken;
  Serialize(type, partial, FrameKind::kMessage, &broken);
  ASSERT_TRUE(type.deserialize(&broken, &got));
  EXPECT_EQ(got.parsed, nullptr);
  absl::StatusOr<FrameView> frame = DecodeFrame(got.bytes);
  ASSERT_TRUE(frame.ok()) << frame.status();
  EXPECT_EQ(frame->payload, partial.SerializePartialAsString());

  // Not a frame at all.
  SerializedPayload_t garbage(64);
  garbage.length = 20;
  std::memset(garbage.data, 0x5a, garbage.length);
  ASSERT_TRUE(type.deserialize(&garbage, &got));
  EXPECT_EQ(got.parsed, nullptr);
  EXPECT_EQ(got.bytes.size(), 16u);
  EXPECT_EQ(type.parsed(), 0u);
}

}  // namespace
}  // namespace dds
}  // namespace cyber
