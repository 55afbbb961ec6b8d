// The benchmark's "ours" path: a Writer<BenchMessage> in one process, a
// Reader<BenchMessage> in another, each process a cyber::Runtime whose bus
// is linked to the other by DdsTransport on the benchmark's domain, the
// channel's qos the default (reliable, volatile, keep last 16); "ours_ds"
// is the same with data sharing (ChannelQos::data_sharing_max_bytes) sized
// for the message.
//
// What a message costs here on top of bare Fast-DDS, by design: the source
// builds a fresh BenchMessage per write (a written message is shared and
// immutable, so it cannot be reused; the body copy happens before the
// stamp), the writer serializes it and frames it (sample_frame.h); the
// sink's transport thread parses it and hands it to the reader, whose
// callback runs later as a scheduler routine on another thread.
//
// Threads: see bench_path.h.

#ifndef TESTS_TRANSPORT_BENCH_OURS_PATH_H_
#define TESTS_TRANSPORT_BENCH_OURS_PATH_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "cyber/runtime/runtime.h"
#include "cyber/transport/dds/dds_transport.h"
#include "tests/transport_bench/bench_path.h"

namespace cyber {
namespace transport_bench {

// The channel both ends use.
inline constexpr char kOursChannel[] = "/transport_bench/ours";

// A runtime named `name` on a DdsTransport set up from `config` (domain,
// address, security, segment size), which `transport` receives: one end of
// the ours and loan paths.
std::unique_ptr<Runtime> MakeBenchRuntime(const PathConfig& config, const std::string& name,
                                          std::shared_ptr<dds::DdsTransport>* transport);

absl::StatusOr<std::unique_ptr<MessageSink>> StartOursSink(const PathConfig& config,
                                                           ReceiveLog* log);
absl::StatusOr<std::unique_ptr<MessageSource>> StartOursSource(const PathConfig& config);

}  // namespace transport_bench
}  // namespace cyber

#endif  // TESTS_TRANSPORT_BENCH_OURS_PATH_H_
