// The three ways the benchmark moves a message from one process to another
// on the same host, behind one small interface so that every path is
// driven, stamped and timed by the same code:
//
//   ours      Writer<BenchMessage> -> Reader<BenchMessage> of two
//             cyber::Runtimes linked by DdsTransport (ours_path.h)
//   dds       bare Fast-DDS, configured like DdsTransport: a raw-bytes
//             type, DataWriter::write -> DataReaderListener (bare_dds_path.h)
//   udp       a bare UDP socket on 127.0.0.1 (udp_path.h)
//   loan      LoanWriter -> Reader<SharedBytes>: the bytes written once in
//             the source's loan segment, read in place (loan_path.h)
//
// Across hosts (PathConfig::address) the same paths use the hosts' network
// instead of loopback and shared memory.
//
// A source stamps each message (CLOCK_MONOTONIC, wire_stamp.h) as the last
// thing before handing it to the path; a sink takes the arrival time as the
// first thing once the application has the message (ours: in the reader
// callback, a scheduler routine; dds: after take; udp: after recv) and
// records both in a ReceiveLog.
//
// Whether a source reaches a sink is not asked of the path: the roles
// (roles.h) send warm-up messages until the sink has one.
//
// Threads: a sink records on the path's own threads; Send() from one
// thread.

#ifndef TESTS_TRANSPORT_BENCH_BENCH_PATH_H_
#define TESTS_TRANSPORT_BENCH_BENCH_PATH_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tests/transport_bench/receive_log.h"

namespace cyber {
namespace transport_bench {

// kBareDdsShared: bare Fast-DDS with data sharing (bare_dds_path.h);
// kOursShared: ours with it (ours_path.h).
enum class PathKind { kOurs, kBareDds, kUdp, kLoan, kBareDdsShared, kOursShared };

// "ours", "dds", "udp", "loan", "dds_ds", "ours_ds".
const char* PathName(PathKind kind);
// InvalidArgument naming the text and the choices.
absl::StatusOr<PathKind> ParsePathKind(absl::string_view text);

// The largest UDP payload sent: a datagram cannot carry 64 KiB (65,507 B
// at most over IPv4), so the 64 KiB case sends 60,000 B on UDP.
inline constexpr size_t kMaxUdpPayload = 60'000;

// The bytes a message of `requested` bytes is on `kind`: the same, but
// capped at kMaxUdpPayload on UDP.
size_t PayloadBytes(PathKind kind, size_t requested);

// Fast-DDS's shared-memory segment for a message of `payload_bytes` (ours
// and dds, configured alike): DdsTransport's 8 MiB, or enough for four such
// messages and their headers when that is more, so a 4 MiB frame is not
// refused by a segment sized for smaller messages.
inline uint32_t ShmSegmentBytes(size_t payload_bytes) {
  const size_t wanted = 4 * payload_bytes + (size_t{1} << 20);
  return static_cast<uint32_t>(wanted > (size_t{8} << 20) ? wanted : (size_t{8} << 20));
}

struct PathConfig {
  PathKind kind = PathKind::kOurs;
  // ours: the size of the bytes field; dds and udp: of the whole sample
  // or datagram (whose first 16 bytes are sequence and stamp).
  size_t payload_bytes = 64;
  uint32_t domain = 0;    // the DDS domain (ours, dds)
  uint16_t udp_port = 0;  // the sink's port (udp sources)
  // Reader queue of the ours sink (Reader's pending_queue_size).
  uint32_t pending_queue_size = 1024;
  // Across hosts (tools/hosts/bench.sh): this end's IPv4 address (ours:
  // CYBER_IP; dds: the UDP interface; udp: the sink binds it), and for a
  // udp source the sink's. Empty: loopback, shared memory on one host.
  std::string address;
  std::string peer_address;
  // DDS Security's directory for this end (ours, dds); empty: off.
  std::string security_dir;
};

// Receives into a ReceiveLog from construction to destruction.
class MessageSink {
 public:
  virtual ~MessageSink() = default;
  // Where a source reaches it ("port=N" for udp; empty for DDS paths).
  virtual std::string address() const { return ""; }
  // "key=value" counters of the path itself, for the report line.
  virtual std::string Counters() const { return ""; }
};

class MessageSource {
 public:
  virtual ~MessageSource() = default;
  // Sends message `seq` (0: a warm-up message), stamped now. False if the
  // path refused it (ours: the transport's Publish failed; dds: write
  // failed; udp: send failed).
  virtual bool Send(uint64_t seq) = 0;
  // "key=value" counters of the path itself.
  virtual std::string Counters() const { return ""; }
};

absl::StatusOr<std::unique_ptr<MessageSink>> StartSink(const PathConfig& config,
                                                       ReceiveLog* log);
absl::StatusOr<std::unique_ptr<MessageSource>> StartSource(const PathConfig& config);

}  // namespace transport_bench
}  // namespace cyber

#endif  // TESTS_TRANSPORT_BENCH_BENCH_PATH_H_
