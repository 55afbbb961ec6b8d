// The benchmark's "dds" path: bare Fast-DDS 2.9, set up the way
// DdsTransport sets itself up, so that the difference to "ours" is what
// our layer adds and not a configuration:
//
//   participant  builtin transports off; shared memory (8 MiB segment) and
//                UDPv4 whitelisted to 127.0.0.1; lease 3 s, announced
//                every 1 s (dds_transport.cc, StartLocked)
//   endpoints    reliable, volatile, keep last 16; resource limits 16
//                samples of one instance (16 allocated up front);
//                PREALLOCATED_WITH_REALLOC payloads; a writer blocks at
//                most 10 ms on a full history (dds_qos.cc)
//   type         RawBytesType (raw_bytes_type.h)
//
// "dds_ds" is the same with Fast-DDS's data sharing on both endpoints
// (DataSharingQosPolicy ON: creating an endpoint fails if it cannot share):
// the writer's history lives in a shared-memory pool the reader reads, so
// no transport copies a sample; the type is the bounded RawBytesType, sized
// for the run's message, and the writer's pool holds 16 + 4 extra samples.
//
// Written out here rather than taken from cyber/transport/dds/dds_qos.h,
// so that the baseline stays what Fast-DDS does by itself even if our
// mapping changes. The sink takes each sample in
// DataReaderListener::on_data_available, on Fast-DDS's receive thread.
//
// Threads: see bench_path.h.

#ifndef TESTS_TRANSPORT_BENCH_BARE_DDS_PATH_H_
#define TESTS_TRANSPORT_BENCH_BARE_DDS_PATH_H_

#include <memory>

#include "absl/status/statusor.h"
#include "tests/transport_bench/bench_path.h"

namespace cyber {
namespace transport_bench {

inline constexpr char kBareDdsTopic[] = "transport_bench_bare";

absl::StatusOr<std::unique_ptr<MessageSink>> StartBareDdsSink(const PathConfig& config,
                                                              ReceiveLog* log);
absl::StatusOr<std::unique_ptr<MessageSource>> StartBareDdsSource(const PathConfig& config);

}  // namespace transport_bench
}  // namespace cyber

#endif  // TESTS_TRANSPORT_BENCH_BARE_DDS_PATH_H_
