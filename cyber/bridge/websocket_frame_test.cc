#include "cyber/bridge/websocket_frame.h"

#include "gtest/gtest.h"

namespace cyber {
namespace bridge {
namespace {

std::string Bytes(std::initializer_list<int> bytes) {
  std::string s;
  for (int b : bytes) s.push_back(static_cast<char>(b));
  return s;
}

// RFC 6455 section 5.7: the examples, byte for byte.
TEST(WebSocketFrameTest, UnmaskedServerFramesAsTheRfc) {
  EXPECT_EQ(EncodeFrame(Opcode::kText, "Hello"), Bytes({0x81, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f}));
  EXPECT_EQ(EncodeFrame(Opcode::kPong, "Hello"), Bytes({0x8a, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f}));
  const std::string medium = EncodeFrame(Opcode::kBinary, std::string(256, 'x'));
  EXPECT_EQ(medium.substr(0, 4), Bytes({0x82, 0x7E, 0x01, 0x00}));
  EXPECT_EQ(medium.size(), 4u + 256);
  const std::string large = EncodeFrame(Opcode::kBinary, std::string(65536, 'x'));
  EXPECT_EQ(large.substr(0, 10), Bytes({0x82, 0x7F, 0, 0, 0, 0, 0, 0x01, 0x00, 0x00}));
  EXPECT_EQ(large.size(), 10u + 65536);
}

TEST(WebSocketFrameTest, MaskedClientFrameAsTheRfc) {
  const std::string rfc = Bytes({0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58});
  EXPECT_EQ(EncodeMaskedFrame(Opcode::kText, "Hello", 0x37fa213d), rfc);
  FrameDecoder decoder(1 << 20);
  decoder.Feed(rfc);
  absl::StatusOr<std::optional<WebSocketMessage>> m = decoder.Next();
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_TRUE(m->has_value());
  EXPECT_EQ((*m)->opcode, Opcode::kText);
  EXPECT_EQ((*m)->payload, "Hello");
  m = decoder.Next();
  ASSERT_TRUE(m.ok());
  EXPECT_FALSE(m->has_value());
}

// Fragments ("Hel", "lo") with a ping between them, fed one byte at a time:
// the ping comes out at once, the message whole after its last fragment.
TEST(WebSocketFrameTest, JoinsFragmentsAroundAControlFrame) {
  const std::string stream = EncodeMaskedFrame(Opcode::kText, "Hel", 0x01020304, false) +
                             EncodeMaskedFrame(Opcode::kPing, "p", 0x0a0b0c0d) +
                             EncodeMaskedFrame(Opcode::kContinuation, "lo", 0x11223344);
  FrameDecoder decoder(1 << 20);
  std::vector<WebSocketMessage> out;
  for (char c : stream) {
    decoder.Feed(absl::string_view(&c, 1));
    while (true) {
      absl::StatusOr<std::optional<WebSocketMessage>> m = decoder.Next();
      ASSERT_TRUE(m.ok()) << m.status();
      if (!m->has_value()) break;
      out.push_back(std::move(**m));
    }
  }
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].opcode, Opcode::kPing);
  EXPECT_EQ(out[0].payload, "p");
  EXPECT_EQ(out[1].opcode, Opcode::kText);
  EXPECT_EQ(out[1].payload, "Hello");
}

TEST(WebSocketFrameTest, LongLengthsDecode) {
  const std::string big(70000, 'z');
  FrameDecoder decoder(1 << 20);
  decoder.Feed(EncodeMaskedFrame(Opcode::kBinary, big, 0xdeadbeef));
  absl::StatusOr<std::optional<WebSocketMessage>> m = decoder.Next();
  ASSERT_TRUE(m.ok() && m->has_value());
  EXPECT_EQ((*m)->payload, big);
}

TEST(WebSocketFrameTest, ProtocolErrors) {
  {  // unmasked, from a client
    FrameDecoder d(1024);
    d.Feed(EncodeFrame(Opcode::kText, "Hello"));
    absl::StatusOr<std::optional<WebSocketMessage>> m = d.Next();
    ASSERT_FALSE(m.ok());
    EXPECT_NE(m.status().message().find("not masked"), std::string::npos);
  }
  {  // continuation with nothing begun
    FrameDecoder d(1024);
    d.Feed(EncodeMaskedFrame(Opcode::kContinuation, "x", 1));
    EXPECT_FALSE(d.Next().ok());
  }
  {  // a fragmented ping
    FrameDecoder d(1024);
    d.Feed(EncodeMaskedFrame(Opcode::kPing, "x", 1, false));
    EXPECT_FALSE(d.Next().ok());
  }
  {  // reserved opcode 0x3
    FrameDecoder d(1024);
    d.Feed(Bytes({0x83, 0x80, 0, 0, 0, 0}));
    EXPECT_FALSE(d.Next().ok());
  }
  {  // over the limit, in two fragments
    FrameDecoder d(4);
    d.Feed(EncodeMaskedFrame(Opcode::kText, "abc", 1, false) +
           EncodeMaskedFrame(Opcode::kContinuation, "de", 1));
    absl::StatusOr<std::optional<WebSocketMessage>> m = d.Next();
    ASSERT_FALSE(m.ok());
    EXPECT_TRUE(absl::IsResourceExhausted(m.status())) << m.status();
  }
}

TEST(WebSocketFrameTest, ClosePayload) {
  EXPECT_EQ(ClosePayload(1001, "bye"), Bytes({0x03, 0xE9, 'b', 'y', 'e'}));
}

}  // namespace
}  // namespace bridge
}  // namespace cyber
