// The "loan" path: LoanWriter -> Reader<SharedBytes> of two cyber::Runtimes
// linked by DdsTransport, the bytes written once into the source's loan
// segment and read in place by the sink (cyber/node/loan_writer.h). The
// stamp is the first 16 bytes of the buffer, written last before Publish;
// the rest of the payload is written before it, as a sensor fills a frame.
//
// Threads: as bench_path.h.

#ifndef TESTS_TRANSPORT_BENCH_LOAN_PATH_H_
#define TESTS_TRANSPORT_BENCH_LOAN_PATH_H_

#include <memory>

#include "absl/status/statusor.h"
#include "tests/transport_bench/bench_path.h"
#include "tests/transport_bench/receive_log.h"

namespace cyber {
namespace transport_bench {

inline constexpr char kLoanChannel[] = "/transport_bench/loan";

absl::StatusOr<std::unique_ptr<MessageSink>> StartLoanSink(const PathConfig& config,
                                                           ReceiveLog* log);
absl::StatusOr<std::unique_ptr<MessageSource>> StartLoanSource(const PathConfig& config);

}  // namespace transport_bench
}  // namespace cyber

#endif  // TESTS_TRANSPORT_BENCH_LOAN_PATH_H_
