#include "cyber/bridge/testing/websocket_test_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "cyber/bridge/websocket_frame.h"

namespace cyber {
namespace bridge {
namespace testing {

absl::StatusOr<std::unique_ptr<WebSocketTestClient>> WebSocketTestClient::Connect(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::UnavailableError(std::strerror(errno));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    const std::string error = std::strerror(errno);
    close(fd);
    return absl::UnavailableError(absl::StrCat("connect to 127.0.0.1:", port, ": ", error));
  }
  return std::unique_ptr<WebSocketTestClient>(new WebSocketTestClient(fd));
}

WebSocketTestClient::~WebSocketTestClient() { Close(); }

void WebSocketTestClient::Close() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

bool WebSocketTestClient::SendRaw(const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = send(fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += n;
  }
  return true;
}

bool WebSocketTestClient::SendText(const std::string& text) {
  return SendRaw(EncodeMaskedFrame(Opcode::kText, text, 0x37FA213D));
}

absl::Status WebSocketTestClient::Fill(size_t n, absl::Time deadline) {
  char chunk[65536];
  while (buffer_.size() < n) {
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) return absl::DeadlineExceededError("no data from server");
    pollfd p{fd_, POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(left)) + 1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    const ssize_t got = recv(fd_, chunk, sizeof(chunk), 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return absl::UnavailableError("the server closed the connection");
    buffer_.append(chunk, got);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> WebSocketTestClient::Handshake(const std::string& subprotocol,
                                                           const std::string& key) {
  std::string request = absl::StrCat(
      "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
      "Sec-WebSocket-Key: ",
      key, "\r\nSec-WebSocket-Version: 13\r\n");
  if (!subprotocol.empty()) absl::StrAppend(&request, "Sec-WebSocket-Protocol: ", subprotocol, "\r\n");
  request += "\r\n";
  if (!SendRaw(request)) return absl::UnavailableError("could not send the request");
  const absl::Time deadline = absl::Now() + kTestTimeout;
  size_t end;
  while ((end = buffer_.find("\r\n\r\n")) == std::string::npos) {
    absl::Status status = Fill(buffer_.size() + 1, deadline);
    if (!status.ok()) {
      if (!buffer_.empty()) return buffer_;  // an error response, then closed
      return status;
    }
  }
  std::string head = buffer_.substr(0, end + 4);
  buffer_.erase(0, end + 4);
  return head;
}

absl::StatusOr<Frame> WebSocketTestClient::ReadFrame(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  absl::Status status = Fill(2, deadline);
  if (!status.ok()) return status;
  const auto* b = reinterpret_cast<const uint8_t*>(buffer_.data());
  Frame frame;
  frame.final_frame = (b[0] & 0x80) != 0;
  frame.opcode = b[0] & 0x0F;
  if ((b[1] & 0x80) != 0) return absl::InvalidArgumentError("a server frame is masked");
  uint64_t length = b[1] & 0x7F;
  size_t header = 2;
  if (length == 126) {
    if (!(status = Fill(4, deadline)).ok()) return status;
    b = reinterpret_cast<const uint8_t*>(buffer_.data());
    length = uint64_t{b[2]} << 8 | b[3];
    header = 4;
  } else if (length == 127) {
    if (!(status = Fill(10, deadline)).ok()) return status;
    b = reinterpret_cast<const uint8_t*>(buffer_.data());
    length = 0;
    for (int i = 0; i < 8; ++i) length = length << 8 | b[2 + i];
    header = 10;
  }
  if (!(status = Fill(header + length, deadline)).ok()) return status;
  frame.payload = buffer_.substr(header, length);
  buffer_.erase(0, header + length);
  return frame;
}

absl::StatusOr<std::string> WebSocketTestClient::ReadTextContaining(const std::string& needle,
                                                                    absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    absl::StatusOr<Frame> frame = ReadFrame(deadline - absl::Now());
    if (!frame.ok()) {
      return absl::Status(frame.status().code(),
                          absl::StrCat("waiting for text with \"", needle, "\": ",
                                       frame.status().message()));
    }
    if (frame->opcode == 0x1 && frame->payload.find(needle) != std::string::npos) {
      return frame->payload;
    }
  }
}

bool WebSocketTestClient::WaitForEof(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    absl::Status status = Fill(buffer_.size() + 1, deadline);
    if (absl::IsUnavailable(status)) return true;
    if (!status.ok()) return false;
  }
}

}  // namespace testing
}  // namespace bridge
}  // namespace cyber
