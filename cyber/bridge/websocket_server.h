// WebSocketServer: a small RFC 6455 server on a TCP socket, for the bridge
// (a handful of viewer connections, each sent a stream of small binary
// messages). It does the handshake (websocket_handshake.h), framing
// (websocket_frame.h), answers pings, and closes cleanly; what the
// messages mean is its user's business (Handlers).
//
// Why threads and blocking sockets instead of an event loop: a bridge has
// few clients (a person with Foxglove, a test), and a thread pair per
// client — a reader that decodes and calls the handlers, a writer that
// drains the client's queue — keeps a slow client from delaying another
// or the publisher, with no I/O multiplexing to get wrong.
//
// Slow clients: Send* only queue. Messages sent with `droppable` (message
// data) are dropped, and counted, once `max_queued_messages` of them wait
// for one client; the others (advertise, status, pongs, close) always
// queue — they are rare. So whoever calls Send (a DDS thread) never blocks
// on a client's socket.
//
// Threads: Send*, Close, Stats and Stop from any thread, including the
// handlers. Handlers run on the client's reader thread, with no lock of the
// server held; `open` runs before any `message` of that client and `close`
// once, last (also when Stop closes the connection). Stop (and the
// destructor) returns when every thread has ended and every socket is
// closed; it must not be called from a handler.

#ifndef CYBER_BRIDGE_WEBSOCKET_SERVER_H_
#define CYBER_BRIDGE_WEBSOCKET_SERVER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "cyber/bridge/websocket_frame.h"
#include "cyber/common/mutex.h"

namespace cyber {
namespace bridge {

class WebSocketServer {
 public:
  struct Options {
    // The address to listen on: loopback unless the user asks otherwise
    // (anyone who reaches the port reads every channel).
    std::string address = "127.0.0.1";
    int port = 8765;  // 0: a free port chosen by the system (see port())
    // The subprotocol a client must offer (Sec-WebSocket-Protocol); empty:
    // none required.
    std::string subprotocol;
    // Droppable messages waiting per client before more are dropped.
    size_t max_queued_messages = 1000;
    // Largest message accepted from a client.
    size_t max_message_bytes = 16 << 20;
  };
  using ClientId = uint64_t;
  struct Handlers {
    std::function<void(ClientId, const std::string& peer)> open;
    // Text and binary messages (control frames are handled here).
    std::function<void(ClientId, const WebSocketMessage&)> message;
    std::function<void(ClientId)> close;
  };
  struct ClientStats {
    std::string peer;      // "127.0.0.1:53422"
    uint64_t sent = 0;     // messages written to the socket
    uint64_t dropped = 0;  // droppable messages dropped (queue full)
  };

  // Binds and listens; InvalidArgument for an address that is not an IPv4
  // or IPv6 literal (or "localhost", taken as 127.0.0.1), Unavailable naming the address and port when it
  // cannot bind (in use, no permission).
  static absl::StatusOr<std::unique_ptr<WebSocketServer>> Start(Options options,
                                                                Handlers handlers);
  ~WebSocketServer();  // Stop()
  WebSocketServer(const WebSocketServer&) = delete;
  WebSocketServer& operator=(const WebSocketServer&) = delete;

  int port() const { return port_; }

  // Queue a message for `client`; false if the client is gone (or not yet
  // open) or, when droppable, its queue is full (counted as dropped).
  bool SendText(ClientId client, std::string text);
  bool SendBinary(ClientId client, std::string payload, bool droppable);
  // Sends a close frame with `code` and `reason`, then closes.
  void Close(ClientId client, uint16_t code, const std::string& reason);

  std::map<ClientId, ClientStats> Stats() const;
  // Droppable messages dropped so far, over every client (gone ones too).
  uint64_t total_dropped() const { return total_dropped_.load(std::memory_order_relaxed); }

  // Closes every connection (close code 1001, "going away") and the
  // listening socket, joins every thread. Idempotent.
  void Stop();

  class Connection;

 private:
  WebSocketServer(Options options, Handlers handlers, int listen_fd, int port, int wake_read,
                  int wake_write);
  void AcceptLoop();
  void ReapFinished();
  std::shared_ptr<Connection> Find(ClientId client) const;

  const Options options_;
  const Handlers handlers_;
  const int listen_fd_;   // closed by Stop
  const int port_;
  const int wake_read_;   // a pipe written by Stop to wake the accept loop
  const int wake_write_;
  std::atomic<uint64_t> total_dropped_{0};
  std::thread accept_thread_;

  mutable Mutex mu_;
  // mu_ protects the following state.
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  ClientId next_id_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<ClientId, std::shared_ptr<Connection>> connections_ ABSL_GUARDED_BY(mu_);
};

}  // namespace bridge
}  // namespace cyber

#endif  // CYBER_BRIDGE_WEBSOCKET_SERVER_H_
