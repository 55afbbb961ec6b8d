#include "tests/transport_bench/udp_path.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/transport_bench/wire_stamp.h"

namespace cyber {
namespace transport_bench {
namespace {

constexpr int kWakeEveryMs = 50;  // how soon the receive thread notices the end

absl::Status Errno(const char* what) {
  return absl::UnavailableError(absl::StrCat("udp: ", what, ": ", std::strerror(errno)));
}

// `address` (dotted IPv4), or loopback when empty.
sockaddr_in Address(const std::string& address, uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (!address.empty()) inet_pton(AF_INET, address.c_str(), &a.sin_addr);
  return a;
}

class UdpSink final : public MessageSink {
 public:
  explicit UdpSink(ReceiveLog* log) : log_(log) {}

  ~UdpSink() override {
    stop_.store(true, std::memory_order_release);
    if (thread_.joinable()) thread_.join();
    if (fd_ >= 0) close(fd_);
  }

  absl::Status Start(const std::string& address) {
    fd_ = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) return Errno("socket");
    sockaddr_in a = Address(address, 0);
    if (bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) return Errno("bind");
    socklen_t len = sizeof(a);
    if (getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
      return Errno("getsockname");
    }
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { Receive(); });
    return absl::OkStatus();
  }

  std::string address() const override { return absl::StrCat("port=", port_); }

  std::string Counters() const override {
    return absl::StrCat("malformed=", malformed_.load(std::memory_order_relaxed));
  }

 private:
  void Receive() {
    std::vector<char> buf(64 * 1024);
    while (!stop_.load(std::memory_order_acquire)) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, kWakeEveryMs) <= 0) continue;
      for (;;) {  // everything queued, then poll again
        const ssize_t n = recv(fd_, buf.data(), buf.size(), MSG_DONTWAIT);
        if (n < 0) break;
        const int64_t arrived = MonotonicNs();
        if (static_cast<size_t>(n) < kStampPrefixBytes) {
          malformed_.fetch_add(1, std::memory_order_relaxed);
          continue;
        }
        uint64_t seq = 0;
        int64_t sent = 0;
        ReadStampPrefix(buf.data(), &seq, &sent);
        log_->Record(seq, sent, arrived);
      }
    }
  }

  ReceiveLog* const log_;
  int fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> malformed_{0};
  std::thread thread_;
};

class UdpSource final : public MessageSource {
 public:
  ~UdpSource() override {
    if (fd_ >= 0) close(fd_);
  }

  absl::Status Start(const PathConfig& config) {
    if (config.udp_port == 0) return absl::InvalidArgumentError("udp: no sink port given");
    fd_ = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) return Errno("socket");
    sockaddr_in a = Address(config.peer_address, config.udp_port);
    if (connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) return Errno("connect");
    buf_.assign(std::max(PayloadBytes(PathKind::kUdp, config.payload_bytes), kStampPrefixBytes),
                'x');
    return absl::OkStatus();
  }

  bool Send(uint64_t seq) override {
    WriteStampPrefix(seq, MonotonicNs(), buf_.data());
    return send(fd_, buf_.data(), buf_.size(), 0) == static_cast<ssize_t>(buf_.size());
  }

 private:
  int fd_ = -1;
  std::vector<char> buf_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<MessageSink>> StartUdpSink(const PathConfig& config, ReceiveLog* log) {
  auto sink = std::make_unique<UdpSink>(log);
  if (absl::Status s = sink->Start(config.address); !s.ok()) return s;
  return std::unique_ptr<MessageSink>(std::move(sink));
}

absl::StatusOr<std::unique_ptr<MessageSource>> StartUdpSource(const PathConfig& config) {
  auto source = std::make_unique<UdpSource>();
  if (absl::Status s = source->Start(config); !s.ok()) return s;
  return std::unique_ptr<MessageSource>(std::move(source));
}

}  // namespace transport_bench
}  // namespace cyber
