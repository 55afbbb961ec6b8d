#include "cyber/bridge/websocket_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cyber/bridge/websocket_handshake.h"
#include "cyber/common/log.h"

namespace cyber {
namespace bridge {
namespace {

// How long a blocked write may wait before the writer looks whether the
// connection is closing (a client that stopped reading must not hold Stop).
constexpr absl::Duration kWriteWakeup = absl::Seconds(1);
// How often the accept loop wakes to join the threads of closed clients.
constexpr int kReapPeriodMs = 250;
// The largest handshake request accepted.
constexpr size_t kMaxRequestBytes = 16 << 10;

std::string Errno() { return std::strerror(errno); }

std::string PeerName(const sockaddr_storage& address) {
  char host[INET6_ADDRSTRLEN] = "?";
  int port = 0;
  if (address.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&address);
    inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
    port = ntohs(in->sin_port);
    return absl::StrCat(host, ":", port);
  }
  const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&address);
  inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
  port = ntohs(in6->sin6_port);
  return absl::StrCat("[", host, "]:", port);
}

}  // namespace

// One client: its socket, its outgoing queue, its two threads.
class WebSocketServer::Connection {
 public:
  Connection(WebSocketServer* server, ClientId id, int fd, std::string peer)
      : server_(server), id_(id), fd_(fd), peer_(std::move(peer)) {}
  ~Connection() { close(fd_); }

  ClientId id() const { return id_; }
  int fd() const { return fd_; }
  const std::string& peer() const { return peer_; }

  // Queues `bytes` (a whole frame) unless the connection is not open or is
  // closing; a droppable one is dropped when the queue holds the limit.
  bool Enqueue(std::string bytes, bool droppable) {
    MutexLock lock(&mu_);
    if (!open_ || closing_) return false;
    if (droppable && droppable_queued_ >= server_->options_.max_queued_messages) {
      ++dropped_;
      server_->total_dropped_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    EnqueueLocked(std::move(bytes), droppable);
    return true;
  }

  // Queues a close frame (once) and has the writer close after it.
  void BeginClose(uint16_t code, const std::string& reason) {
    MutexLock lock(&mu_);
    if (closing_) return;
    if (open_) EnqueueLocked(EncodeFrame(Opcode::kClose, ClosePayload(code, reason)), false);
    closing_ = true;
    cv_.SignalAll();
  }

  ClientStats Stats() const {
    MutexLock lock(&mu_);
    return ClientStats{peer_, sent_, dropped_};
  }

  bool finished() const {
    return reader_done_.load(std::memory_order_acquire) &&
           writer_done_.load(std::memory_order_acquire);
  }

  void StartReader() { reader_ = std::thread([this] { ReadLoop(); }); }
  // Joins both threads. REQUIRES: the connection is closing (or finished).
  void Join() {
    if (reader_.joinable()) reader_.join();
    if (writer_.joinable()) writer_.join();
  }

 private:
  void EnqueueLocked(std::string bytes, bool droppable) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    queue_.push_back(Outgoing{std::move(bytes), droppable});
    if (droppable) ++droppable_queued_;
    cv_.SignalAll();
  }

  bool closing() const {
    MutexLock lock(&mu_);
    return closing_;
  }

  // Writes all of `bytes`; false when the socket failed, or stayed full
  // while the connection is closing.
  bool WriteAll(absl::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n > 0) {
        bytes.remove_prefix(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && !closing()) continue;
      return false;
    }
    return true;
  }

  // Reads until the request's blank line. The 101 answer to write, or
  // nullopt (the connection is over) when the client left or the request
  // was refused (answered here with an HTTP error).
  std::optional<std::string> Handshake(std::string& leftover) {
    std::string request;
    char chunk[4096];
    size_t end;
    while ((end = request.find("\r\n\r\n")) == std::string::npos) {
      if (request.size() > kMaxRequestBytes) {
        WriteAll(HttpErrorResponse("431 Request Header Fields Too Large",
                                   "the WebSocket handshake request is over 16 KiB"));
        return std::nullopt;
      }
      const ssize_t n = recv(fd_, chunk, sizeof(chunk), 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return std::nullopt;
      request.append(chunk, n);
    }
    leftover = request.substr(end + 4);
    request.resize(end + 4);
    absl::StatusOr<UpgradeRequest> upgrade = ParseUpgradeRequest(request);
    if (!upgrade.ok()) {
      WriteAll(HttpErrorResponse("400 Bad Request", upgrade.status().message()));
      LOG(WARNING) << "WebSocket client " << peer_ << ": " << upgrade.status().message();
      return std::nullopt;
    }
    const std::string& wanted = server_->options_.subprotocol;
    if (!wanted.empty()) {
      bool offered = false;
      for (const std::string& p : upgrade->subprotocols) offered |= p == wanted;
      if (!offered) {
        const std::string why = absl::StrCat(
            "this server speaks the WebSocket subprotocol \"", wanted,
            "\" only (Sec-WebSocket-Protocol); the client offered none of it");
        WriteAll(HttpErrorResponse("400 Bad Request", why));
        LOG(WARNING) << "WebSocket client " << peer_ << ": " << why;
        return std::nullopt;
      }
    }
    return UpgradeResponse(*upgrade, wanted);
  }

  void ReadLoop() {
    std::string leftover;
    std::optional<std::string> answer = Handshake(leftover);
    if (answer.has_value()) {
      // Open before the client can know it is: what is sent from now on
      // waits in the queue until the writer starts, after the answer.
      MutexLock lock(&mu_);
      open_ = !closing_;  // Stop may have begun closing during the handshake
    }
    if (!answer.has_value() || !WriteAll(*answer)) {
      shutdown(fd_, SHUT_RDWR);
      {
        MutexLock lock(&mu_);
        closing_ = true;
        queue_.clear();
      }
      writer_done_.store(true, std::memory_order_release);
      reader_done_.store(true, std::memory_order_release);
      return;
    }
    writer_ = std::thread([this] { WriteLoop(); });
    const Handlers& handlers = server_->handlers_;
    if (handlers.open) handlers.open(id_, peer_);

    FrameDecoder decoder(server_->options_.max_message_bytes);
    decoder.Feed(leftover);
    char chunk[64 << 10];
    bool done = false;
    while (!done) {
      absl::StatusOr<std::optional<WebSocketMessage>> next = decoder.Next();
      if (!next.ok()) {
        LOG(WARNING) << "WebSocket client " << peer_ << ": " << next.status().message();
        BeginClose(absl::IsResourceExhausted(next.status()) ? 1009 : 1002,
                   std::string(next.status().message().substr(0, 120)));
        break;
      }
      if (!next->has_value()) {
        const ssize_t n = recv(fd_, chunk, sizeof(chunk), 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        decoder.Feed(absl::string_view(chunk, n));
        continue;
      }
      WebSocketMessage& message = **next;
      switch (message.opcode) {
        case Opcode::kPing: {
          MutexLock lock(&mu_);
          if (!closing_) EnqueueLocked(EncodeFrame(Opcode::kPong, message.payload), false);
          break;
        }
        case Opcode::kPong:
          break;
        case Opcode::kClose: {
          // Echo the status code (RFC 6455 section 5.5.1), then close.
          MutexLock lock(&mu_);
          if (!closing_) {
            EnqueueLocked(EncodeFrame(Opcode::kClose, message.payload.substr(0, 2)), false);
            closing_ = true;
            cv_.SignalAll();
          }
          done = true;
          break;
        }
        default:
          if (handlers.message) handlers.message(id_, message);
      }
    }
    {
      MutexLock lock(&mu_);
      closing_ = true;
      cv_.SignalAll();
    }
    if (handlers.close) handlers.close(id_);
    reader_done_.store(true, std::memory_order_release);
  }

  void WriteLoop() {
    while (true) {
      Outgoing item;
      {
        MutexLock lock(&mu_);
        while (queue_.empty() && !closing_) cv_.Wait(&mu_);
        if (queue_.empty()) break;  // closing, all written
        item = std::move(queue_.front());
        queue_.pop_front();
        if (item.droppable) --droppable_queued_;
      }
      if (!WriteAll(item.bytes)) {
        MutexLock lock(&mu_);
        closing_ = true;
        queue_.clear();
        droppable_queued_ = 0;
        break;
      }
      MutexLock lock(&mu_);
      ++sent_;
    }
    // Wakes the reader if it still waits for the client.
    shutdown(fd_, SHUT_RDWR);
    writer_done_.store(true, std::memory_order_release);
  }

  struct Outgoing {
    std::string bytes;
    bool droppable = false;
  };

  WebSocketServer* const server_;
  const ClientId id_;
  const int fd_;
  const std::string peer_;
  std::thread reader_;
  std::thread writer_;  // started by the reader after the handshake
  std::atomic<bool> reader_done_{false};
  std::atomic<bool> writer_done_{false};

  mutable Mutex mu_;
  CondVar cv_;
  // mu_ protects the following state.
  std::deque<Outgoing> queue_ ABSL_GUARDED_BY(mu_);
  size_t droppable_queued_ ABSL_GUARDED_BY(mu_) = 0;
  bool open_ ABSL_GUARDED_BY(mu_) = false;     // handshake done
  bool closing_ ABSL_GUARDED_BY(mu_) = false;  // no more sends; the writer ends
  uint64_t sent_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t dropped_ ABSL_GUARDED_BY(mu_) = 0;
};

absl::StatusOr<std::unique_ptr<WebSocketServer>> WebSocketServer::Start(Options options,
                                                                        Handlers handlers) {
  sockaddr_storage address{};
  socklen_t length = 0;
  auto* in = reinterpret_cast<sockaddr_in*>(&address);
  auto* in6 = reinterpret_cast<sockaddr_in6*>(&address);
  if (options.port < 0 || options.port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("WebSocket server: port ", options.port, " is not in 0..65535"));
  }
  // The one name accepted: what users type for the loopback address.
  const std::string literal = options.address == "localhost" ? "127.0.0.1" : options.address;
  if (inet_pton(AF_INET, literal.c_str(), &in->sin_addr) == 1) {
    in->sin_family = AF_INET;
    in->sin_port = htons(options.port);
    length = sizeof(sockaddr_in);
  } else if (inet_pton(AF_INET6, literal.c_str(), &in6->sin6_addr) == 1) {
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(options.port);
    length = sizeof(sockaddr_in6);
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "WebSocket server: address \"", options.address,
        "\" is not an IPv4 or IPv6 address (127.0.0.1, 0.0.0.0, ::1, ...) nor localhost"));
  }
  const int fd = socket(address.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::UnavailableError(absl::StrCat("WebSocket server: socket: ", Errno()));
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), length) != 0 || listen(fd, 16) != 0) {
    const std::string error = Errno();
    close(fd);
    return absl::UnavailableError(absl::StrCat("WebSocket server: cannot listen on ",
                                               options.address, " port ", options.port, ": ",
                                               error));
  }
  sockaddr_storage bound{};
  socklen_t bound_length = sizeof(bound);
  getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &bound_length);
  const int port = ntohs(bound.ss_family == AF_INET
                             ? reinterpret_cast<sockaddr_in*>(&bound)->sin_port
                             : reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port);
  int wake[2];
  if (pipe2(wake, O_CLOEXEC) != 0) {
    close(fd);
    return absl::UnavailableError(absl::StrCat("WebSocket server: pipe: ", Errno()));
  }
  std::unique_ptr<WebSocketServer> server(new WebSocketServer(
      std::move(options), std::move(handlers), fd, port, wake[0], wake[1]));
  server->accept_thread_ = std::thread([s = server.get()] { s->AcceptLoop(); });
  return server;
}

WebSocketServer::WebSocketServer(Options options, Handlers handlers, int listen_fd, int port,
                                 int wake_read, int wake_write)
    : options_(std::move(options)),
      handlers_(std::move(handlers)),
      listen_fd_(listen_fd),
      port_(port),
      wake_read_(wake_read),
      wake_write_(wake_write) {}

WebSocketServer::~WebSocketServer() {
  Stop();
  close(wake_read_);
  close(wake_write_);
}

void WebSocketServer::AcceptLoop() {
  while (true) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_read_, POLLIN, 0}};
    const int ready = poll(fds, 2, kReapPeriodMs);
    if (fds[1].revents != 0) return;  // Stop
    ReapFinished();
    if (ready <= 0 || (fds[0].revents & POLLIN) == 0) continue;
    sockaddr_storage peer{};
    socklen_t peer_length = sizeof(peer);
    const int fd = accept4(listen_fd_, reinterpret_cast<sockaddr*>(&peer), &peer_length,
                           SOCK_CLOEXEC);
    if (fd < 0) continue;  // the client gave up already, or out of fds: try again
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    const timeval wakeup = absl::ToTimeval(kWriteWakeup);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &wakeup, sizeof(wakeup));
    std::shared_ptr<Connection> connection;
    {
      MutexLock lock(&mu_);
      if (stopped_) {
        close(fd);
        return;
      }
      const ClientId id = next_id_++;
      connection = std::make_shared<Connection>(this, id, fd, PeerName(peer));
      connections_[id] = connection;
    }
    connection->StartReader();
  }
}

void WebSocketServer::ReapFinished() {
  std::vector<std::shared_ptr<Connection>> finished;
  {
    MutexLock lock(&mu_);
    for (auto it = connections_.begin(); it != connections_.end();) {
      if (it->second->finished()) {
        finished.push_back(std::move(it->second));
        it = connections_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (const std::shared_ptr<Connection>& c : finished) c->Join();
}

std::shared_ptr<WebSocketServer::Connection> WebSocketServer::Find(ClientId client) const {
  MutexLock lock(&mu_);
  auto it = connections_.find(client);
  return it == connections_.end() ? nullptr : it->second;
}

bool WebSocketServer::SendText(ClientId client, std::string text) {
  std::shared_ptr<Connection> c = Find(client);
  return c != nullptr && c->Enqueue(EncodeFrame(Opcode::kText, text), false);
}

bool WebSocketServer::SendBinary(ClientId client, std::string payload, bool droppable) {
  std::shared_ptr<Connection> c = Find(client);
  return c != nullptr && c->Enqueue(EncodeFrame(Opcode::kBinary, payload), droppable);
}

void WebSocketServer::Close(ClientId client, uint16_t code, const std::string& reason) {
  std::shared_ptr<Connection> c = Find(client);
  if (c != nullptr) c->BeginClose(code, reason);
}

std::map<WebSocketServer::ClientId, WebSocketServer::ClientStats> WebSocketServer::Stats()
    const {
  std::vector<std::shared_ptr<Connection>> connections;
  {
    MutexLock lock(&mu_);
    for (const auto& [id, c] : connections_) connections.push_back(c);
  }
  std::map<ClientId, ClientStats> stats;
  for (const std::shared_ptr<Connection>& c : connections) {
    if (!c->finished()) stats[c->id()] = c->Stats();
  }
  return stats;
}

void WebSocketServer::Stop() {
  {
    MutexLock lock(&mu_);
    if (stopped_) return;
    stopped_ = true;
  }
  const char byte = 0;
  while (write(wake_write_, &byte, 1) < 0 && errno == EINTR) {
  }
  accept_thread_.join();
  close(listen_fd_);  // new connections are refused from now on
  std::map<ClientId, std::shared_ptr<Connection>> connections;
  {
    MutexLock lock(&mu_);
    connections.swap(connections_);
  }
  for (auto& [id, c] : connections) {
    c->BeginClose(1001, "server going away");
    shutdown(c->fd(), SHUT_RD);  // the reader stops waiting for the client
  }
  for (auto& [id, c] : connections) c->Join();
}

}  // namespace bridge
}  // namespace cyber
