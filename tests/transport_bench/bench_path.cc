#include "tests/transport_bench/bench_path.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "tests/transport_bench/bare_dds_path.h"
#include "tests/transport_bench/loan_path.h"
#include "tests/transport_bench/ours_path.h"
#include "tests/transport_bench/udp_path.h"

namespace cyber {
namespace transport_bench {

const char* PathName(PathKind kind) {
  switch (kind) {
    case PathKind::kOurs:
      return "ours";
    case PathKind::kBareDds:
      return "dds";
    case PathKind::kUdp:
      return "udp";
    case PathKind::kLoan:
      return "loan";
    case PathKind::kBareDdsShared:
      return "dds_ds";
    case PathKind::kOursShared:
      return "ours_ds";
  }
  return "?";
}

absl::StatusOr<PathKind> ParsePathKind(absl::string_view text) {
  for (PathKind k : {PathKind::kOurs, PathKind::kBareDds, PathKind::kUdp, PathKind::kLoan,
                     PathKind::kBareDdsShared, PathKind::kOursShared}) {
    if (text == PathName(k)) return k;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("path \"", text, "\" is not one of ours, dds, udp, loan, dds_ds, ours_ds"));
}

size_t PayloadBytes(PathKind kind, size_t requested) {
  return kind == PathKind::kUdp ? std::min(requested, kMaxUdpPayload) : requested;
}

absl::StatusOr<std::unique_ptr<MessageSink>> StartSink(const PathConfig& config,
                                                       ReceiveLog* log) {
  switch (config.kind) {
    case PathKind::kOurs:
    case PathKind::kOursShared:
      return StartOursSink(config, log);
    case PathKind::kBareDds:
    case PathKind::kBareDdsShared:
      return StartBareDdsSink(config, log);
    case PathKind::kUdp:
      return StartUdpSink(config, log);
    case PathKind::kLoan:
      return StartLoanSink(config, log);
  }
  return absl::InvalidArgumentError("unknown path");
}

absl::StatusOr<std::unique_ptr<MessageSource>> StartSource(const PathConfig& config) {
  switch (config.kind) {
    case PathKind::kOurs:
    case PathKind::kOursShared:
      return StartOursSource(config);
    case PathKind::kBareDds:
    case PathKind::kBareDdsShared:
      return StartBareDdsSource(config);
    case PathKind::kUdp:
      return StartUdpSource(config);
    case PathKind::kLoan:
      return StartLoanSource(config);
  }
  return absl::InvalidArgumentError("unknown path");
}

}  // namespace transport_bench
}  // namespace cyber
