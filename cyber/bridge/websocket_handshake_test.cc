#include "cyber/bridge/websocket_handshake.h"

#include "absl/strings/escaping.h"
#include "cyber/bridge/sha1.h"
#include "gtest/gtest.h"

namespace cyber {
namespace bridge {
namespace {

std::string Hex(const std::array<uint8_t, 20>& digest) {
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(digest.data()), digest.size()));
}

// FIPS 180-2 appendix A's examples, and one over several blocks.
TEST(Sha1Test, KnownDigests) {
  EXPECT_EQ(Hex(Sha1("abc")), "a9993e364706816aba3e25717850c26c9cd0d89d");
  EXPECT_EQ(Hex(Sha1("")), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  EXPECT_EQ(Hex(Sha1("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
  EXPECT_EQ(Hex(Sha1(std::string(1000000, 'a'))), "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
}

// RFC 6455 section 1.3's example: SHA-1 of the key and the GUID is
// 0xb3 0x7a 0x4f 0x2c 0xc0 0x62 0x4f 0x16 0x90 0xf6 0x46 0x06 0xcf 0x38
// 0x59 0x45 0xb2 0xbe 0xc4 0xea, in base64 "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=".
TEST(WebSocketHandshakeTest, AcceptOfTheRfcKey) {
  EXPECT_EQ(WebSocketAccept("dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
}

constexpr char kRequest[] =
    "GET /chat HTTP/1.1\r\n"
    "Host: server.example.com\r\n"
    "Upgrade: websocket\r\n"
    "Connection: keep-alive, Upgrade\r\n"
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
    "Origin: http://example.com\r\n"
    "Sec-WebSocket-Protocol: chat, foxglove.websocket.v1\r\n"
    "Sec-WebSocket-Version: 13\r\n"
    "\r\n";

TEST(WebSocketHandshakeTest, ParsesTheRequestAndAnswers) {
  absl::StatusOr<UpgradeRequest> request = ParseUpgradeRequest(kRequest);
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(request->path, "/chat");
  EXPECT_EQ(request->key, "dGhlIHNhbXBsZSBub25jZQ==");
  EXPECT_EQ(request->subprotocols, (std::vector<std::string>{"chat", "foxglove.websocket.v1"}));
  EXPECT_EQ(UpgradeResponse(*request, "foxglove.websocket.v1"),
            "HTTP/1.1 101 Switching Protocols\r\n"
            "Upgrade: websocket\r\n"
            "Connection: Upgrade\r\n"
            "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"
            "Sec-WebSocket-Protocol: foxglove.websocket.v1\r\n"
            "\r\n");
}

TEST(WebSocketHandshakeTest, RefusesWhatIsNotAnUpgrade) {
  absl::StatusOr<UpgradeRequest> plain =
      ParseUpgradeRequest("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_FALSE(plain.ok());
  EXPECT_NE(plain.status().message().find("Upgrade: websocket"), std::string::npos)
      << plain.status();

  absl::StatusOr<UpgradeRequest> post = ParseUpgradeRequest("POST / HTTP/1.1\r\n\r\n");
  ASSERT_FALSE(post.ok());
  EXPECT_NE(post.status().message().find("POST / HTTP/1.1"), std::string::npos);

  std::string bad_key = kRequest;
  bad_key.replace(bad_key.find("dGhl"), 24, "short");
  absl::StatusOr<UpgradeRequest> key = ParseUpgradeRequest(bad_key);
  ASSERT_FALSE(key.ok());
  EXPECT_NE(key.status().message().find("\"short\""), std::string::npos) << key.status();

  std::string old_version = kRequest;
  old_version.replace(old_version.find("Version: 13"), 11, "Version: 8");
  absl::StatusOr<UpgradeRequest> version = ParseUpgradeRequest(old_version);
  ASSERT_FALSE(version.ok());
  EXPECT_NE(version.status().message().find("\"8\""), std::string::npos) << version.status();
}

}  // namespace
}  // namespace bridge
}  // namespace cyber
