// WireStamp: the send stamp every benchmark message carries, and the
// 16-byte prefix the bare paths (raw DDS samples, UDP datagrams) put it in.
//
// Why nanosecond integers here, against the tree's absl::Duration rule:
// the stamp crosses a process boundary inside a message, where it has to be
// a plain integer; both processes read the same CLOCK_MONOTONIC (same
// host), so receive time - send stamp is the one-way latency. Everything
// computed from stamps (ReceiveLog's percentiles) is an absl::Duration.
//
// Threads: free functions.

#ifndef TESTS_TRANSPORT_BENCH_WIRE_STAMP_H_
#define TESTS_TRANSPORT_BENCH_WIRE_STAMP_H_

#include <time.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace cyber {
namespace transport_bench {

// CLOCK_MONOTONIC now, in nanoseconds.
inline int64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// The prefix of a raw sample or datagram: sequence number, then send stamp,
// both in host byte order (same host only).
inline constexpr size_t kStampPrefixBytes = 16;

inline void WriteStampPrefix(uint64_t seq, int64_t sent_ns, char* out) {
  std::memcpy(out, &seq, sizeof(seq));
  std::memcpy(out + sizeof(seq), &sent_ns, sizeof(sent_ns));
}

// REQUIRES: `in` holds at least kStampPrefixBytes bytes.
inline void ReadStampPrefix(const char* in, uint64_t* seq, int64_t* sent_ns) {
  std::memcpy(seq, in, sizeof(*seq));
  std::memcpy(sent_ns, in + sizeof(*seq), sizeof(*sent_ns));
}

}  // namespace transport_bench
}  // namespace cyber

#endif  // TESTS_TRANSPORT_BENCH_WIRE_STAMP_H_
