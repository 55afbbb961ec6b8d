#include "cyber/bridge/websocket_server.h"

#include <atomic>
#include <vector>

#include "absl/strings/str_cat.h"

#include "cyber/bridge/testing/websocket_test_client.h"
#include "cyber/common/test_waits.h"
#include "gtest/gtest.h"

namespace cyber {
namespace bridge {
namespace {

using testing::Frame;
using testing::WebSocketTestClient;

// A server that echoes text back and records what its handlers saw.
struct EchoServer {
  std::atomic<int> opened{0};
  std::atomic<int> closed{0};
  std::unique_ptr<WebSocketServer> server;

  explicit EchoServer(WebSocketServer::Options options = {}) {
    options.port = 0;
    options.subprotocol = "foxglove.websocket.v1";
    WebSocketServer::Handlers handlers;
    handlers.open = [this](WebSocketServer::ClientId, const std::string& peer) {
      EXPECT_EQ(peer.rfind("127.0.0.1:", 0), 0u) << peer;
      ++opened;
    };
    handlers.message = [this](WebSocketServer::ClientId client, const WebSocketMessage& m) {
      if (m.opcode == Opcode::kText) server->SendText(client, "echo:" + m.payload);
    };
    handlers.close = [this](WebSocketServer::ClientId) { ++closed; };
    absl::StatusOr<std::unique_ptr<WebSocketServer>> s =
        WebSocketServer::Start(options, std::move(handlers));
    EXPECT_TRUE(s.ok()) << s.status();
    if (s.ok()) server = std::move(*s);
  }
};

std::unique_ptr<WebSocketTestClient> Open(int port) {
  absl::StatusOr<std::unique_ptr<WebSocketTestClient>> c = WebSocketTestClient::Connect(port);
  EXPECT_TRUE(c.ok()) << c.status();
  absl::StatusOr<std::string> head = (*c)->Handshake("foxglove.websocket.v1");
  EXPECT_TRUE(head.ok()) << head.status();
  EXPECT_NE(head->find("HTTP/1.1 101 Switching Protocols\r\n"), std::string::npos) << *head;
  EXPECT_NE(head->find("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"),
            std::string::npos)
      << *head;
  EXPECT_NE(head->find("Sec-WebSocket-Protocol: foxglove.websocket.v1\r\n"), std::string::npos);
  return std::move(*c);
}

TEST(WebSocketServerTest, HandshakeEchoPingClose) {
  EchoServer echo;
  ASSERT_NE(echo.server, nullptr);
  std::unique_ptr<WebSocketTestClient> client = Open(echo.server->port());
  ASSERT_TRUE(test::Eventually([&] { return echo.opened == 1; }));

  // A text message in two fragments, a ping between them.
  ASSERT_TRUE(client->SendRaw(EncodeMaskedFrame(Opcode::kText, "hel", 0x11111111, false) +
                              EncodeMaskedFrame(Opcode::kPing, "are you there", 0x22222222) +
                              EncodeMaskedFrame(Opcode::kContinuation, "lo", 0x33333333)));
  absl::StatusOr<Frame> pong = client->ReadFrame();
  ASSERT_TRUE(pong.ok()) << pong.status();
  EXPECT_EQ(pong->opcode, 0xA);
  EXPECT_EQ(pong->payload, "are you there");
  absl::StatusOr<Frame> echoed = client->ReadFrame();
  ASSERT_TRUE(echoed.ok()) << echoed.status();
  EXPECT_EQ(echoed->opcode, 0x1);
  EXPECT_EQ(echoed->payload, "echo:hello");

  // The client closes: the server echoes the code, closes the TCP
  // connection, and calls the close handler once.
  ASSERT_TRUE(client->SendRaw(EncodeMaskedFrame(Opcode::kClose, ClosePayload(1000, "done"), 7)));
  absl::StatusOr<Frame> close = client->ReadFrame();
  ASSERT_TRUE(close.ok()) << close.status();
  EXPECT_EQ(close->opcode, 0x8);
  EXPECT_EQ(close->payload, ClosePayload(1000, ""));
  EXPECT_TRUE(client->WaitForEof());
  ASSERT_TRUE(test::Eventually([&] { return echo.closed == 1; }));
  ASSERT_TRUE(test::Eventually([&] { return echo.server->Stats().empty(); }));
}

TEST(WebSocketServerTest, RefusesAClientWithoutTheSubprotocol) {
  EchoServer echo;
  ASSERT_NE(echo.server, nullptr);
  absl::StatusOr<std::unique_ptr<WebSocketTestClient>> c =
      WebSocketTestClient::Connect(echo.server->port());
  ASSERT_TRUE(c.ok()) << c.status();
  absl::StatusOr<std::string> head = (*c)->Handshake("");
  ASSERT_TRUE(head.ok()) << head.status();
  EXPECT_NE(head->find("HTTP/1.1 400 Bad Request"), std::string::npos) << *head;
  EXPECT_TRUE((*c)->WaitForEof());
  EXPECT_EQ(echo.opened, 0);
}

TEST(WebSocketServerTest, AProtocolErrorClosesWith1002) {
  EchoServer echo;
  ASSERT_NE(echo.server, nullptr);
  std::unique_ptr<WebSocketTestClient> client = Open(echo.server->port());
  ASSERT_TRUE(client->SendRaw(EncodeFrame(Opcode::kText, "unmasked")));
  absl::StatusOr<Frame> close = client->ReadFrame();
  ASSERT_TRUE(close.ok()) << close.status();
  EXPECT_EQ(close->opcode, 0x8);
  EXPECT_EQ(close->payload.substr(0, 2), std::string("\x03\xEA", 2));  // 1002
  EXPECT_TRUE(client->WaitForEof());
  ASSERT_TRUE(test::Eventually([&] { return echo.closed == 1; }));
}

// A client that never reads: droppable messages are dropped once its queue
// and the socket's buffers are full, and SendBinary never blocks the
// caller. 200 MiB offered is far over any socket buffer (a few MiB), so
// most are dropped; Stop then returns although the client still does not
// read.
TEST(WebSocketServerTest, ASlowClientGetsMessagesDroppedNeverBlocksTheSender) {
  WebSocketServer::Options options;
  options.max_queued_messages = 4;
  EchoServer echo(options);
  ASSERT_NE(echo.server, nullptr);
  std::unique_ptr<WebSocketTestClient> client = Open(echo.server->port());
  ASSERT_TRUE(test::Eventually([&] { return echo.server->Stats().size() == 1; }));
  const WebSocketServer::ClientId id = echo.server->Stats().begin()->first;
  const std::string big(1 << 20, 'x');
  int accepted = 0;
  for (int i = 0; i < 200; ++i) accepted += echo.server->SendBinary(id, big, /*droppable=*/true);
  const uint64_t dropped = echo.server->total_dropped();
  EXPECT_EQ(static_cast<uint64_t>(accepted) + dropped, 200u);
  EXPECT_GT(dropped, 100u);
  EXPECT_EQ(echo.server->Stats().at(id).dropped, dropped);
  echo.server->Stop();
  EXPECT_EQ(echo.closed, 1);
}

TEST(WebSocketServerTest, StopClosesClientsWith1001) {
  EchoServer echo;
  ASSERT_NE(echo.server, nullptr);
  std::unique_ptr<WebSocketTestClient> a = Open(echo.server->port());
  std::unique_ptr<WebSocketTestClient> b = Open(echo.server->port());
  ASSERT_TRUE(test::Eventually([&] { return echo.opened == 2; }));
  echo.server->Stop();
  EXPECT_EQ(echo.closed, 2);
  for (WebSocketTestClient* c : {a.get(), b.get()}) {
    absl::StatusOr<Frame> close = c->ReadFrame();
    ASSERT_TRUE(close.ok()) << close.status();
    EXPECT_EQ(close->opcode, 0x8);
    EXPECT_EQ(close->payload.substr(0, 2), std::string("\x03\xE9", 2));  // 1001
    EXPECT_TRUE(c->WaitForEof());
  }
  // A new connection is refused.
  EXPECT_FALSE(WebSocketTestClient::Connect(echo.server->port()).ok());
}

TEST(WebSocketServerTest, BadAddressAndPortInUse) {
  WebSocketServer::Options options;
  options.address = "robot.local";  // a name, not an address literal
  absl::StatusOr<std::unique_ptr<WebSocketServer>> named = WebSocketServer::Start(options, {});
  ASSERT_FALSE(named.ok());
  EXPECT_NE(named.status().message().find("\"robot.local\""), std::string::npos);
  options.address = "localhost";  // the one name taken: 127.0.0.1
  options.port = 0;
  EXPECT_TRUE(WebSocketServer::Start(options, {}).ok());

  EchoServer first;
  ASSERT_NE(first.server, nullptr);
  options.address = "127.0.0.1";
  options.port = first.server->port();
  absl::StatusOr<std::unique_ptr<WebSocketServer>> second = WebSocketServer::Start(options, {});
  ASSERT_FALSE(second.ok());
  EXPECT_TRUE(absl::IsUnavailable(second.status())) << second.status();
  EXPECT_NE(second.status().message().find(absl::StrCat("port ", options.port)),
            std::string::npos)
      << second.status();
}

}  // namespace
}  // namespace bridge
}  // namespace cyber
