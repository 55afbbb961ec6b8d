#include "cyber/transport/dds/fastdds_shm_names.h"

#include <cctype>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace cyber {
namespace dds {
namespace {

constexpr absl::string_view kPrefix = "fastrtps_";
constexpr absl::string_view kPortPrefix = "fastrtps_port";
constexpr absl::string_view kMutexPrefix = "sem.fastrtps_port";
constexpr absl::string_view kMutexSuffix = "_mutex";
constexpr absl::string_view kPoolPrefix = "fast_datasharing_";
constexpr absl::string_view kExclusiveSuffix = "_el";
constexpr absl::string_view kSharedSuffix = "_sl";
// SharedMemSegment::Id is a UUID<8>, printed as 16 hex digits.
constexpr size_t kSegmentIdDigits = 16;

// A port number: decimal digits only (SimpleAtoi would also take a sign or
// spaces), within uint32_t.
std::optional<uint32_t> ParsePort(absl::string_view digits) {
  if (digits.empty() || digits.size() > 10) return std::nullopt;
  for (char c : digits) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
  }
  uint32_t port = 0;
  if (!absl::SimpleAtoi(digits, &port)) return std::nullopt;
  return port;
}

bool IsSegmentId(absl::string_view id) {
  if (id.size() != kSegmentIdDigits) return false;
  for (char c : id) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

}  // namespace

bool HasFastDdsShmPrefix(absl::string_view name) {
  return absl::StartsWith(name, kPrefix) ||
         absl::StartsWith(name, "sem.fastrtps_") ||
         absl::StartsWith(name, kPoolPrefix);
}

std::optional<FastDdsShmName> ParseFastDdsShmName(absl::string_view name) {
  using Kind = FastDdsShmName::Kind;
  if (absl::StartsWith(name, kPoolPrefix) && name.size() > kPoolPrefix.size()) {
    return FastDdsShmName{Kind::kDataSharingPool, std::string(name), 0};
  }
  if (absl::StartsWith(name, kMutexPrefix) &&
      absl::EndsWith(name, kMutexSuffix)) {
    absl::string_view digits =
        name.substr(kMutexPrefix.size(),
                    name.size() - kMutexPrefix.size() - kMutexSuffix.size());
    if (auto port = ParsePort(digits)) {
      return FastDdsShmName{Kind::kPortMutex, "", *port};
    }
    return std::nullopt;
  }
  if (absl::StartsWith(name, kPortPrefix)) {
    absl::string_view rest = name.substr(kPortPrefix.size());
    Kind kind = Kind::kPort;
    if (absl::EndsWith(rest, kExclusiveSuffix)) {
      kind = Kind::kPortReaderLock;
      rest.remove_suffix(kExclusiveSuffix.size());
    } else if (absl::EndsWith(rest, kSharedSuffix)) {
      kind = Kind::kPortReadersLock;
      rest.remove_suffix(kSharedSuffix.size());
    }
    if (auto port = ParsePort(rest)) return FastDdsShmName{kind, "", *port};
    return std::nullopt;
  }
  if (absl::StartsWith(name, kPrefix)) {
    absl::string_view rest = name.substr(kPrefix.size());
    Kind kind = Kind::kSegment;
    if (absl::EndsWith(rest, kExclusiveSuffix)) {
      kind = Kind::kSegmentLock;
      rest.remove_suffix(kExclusiveSuffix.size());
    }
    if (IsSegmentId(rest)) return FastDdsShmName{kind, std::string(rest), 0};
  }
  return std::nullopt;
}

std::string SegmentFileName(absl::string_view hex) {
  return absl::StrCat(kPrefix, hex);
}
std::string SegmentLockFileName(absl::string_view hex) {
  return absl::StrCat(kPrefix, hex, kExclusiveSuffix);
}
std::string PortFileName(uint32_t port) {
  return absl::StrCat(kPortPrefix, port);
}
std::string PortReaderLockFileName(uint32_t port) {
  return absl::StrCat(kPortPrefix, port, kExclusiveSuffix);
}
std::string PortReadersLockFileName(uint32_t port) {
  return absl::StrCat(kPortPrefix, port, kSharedSuffix);
}
std::string PortMutexFileName(uint32_t port) {
  return absl::StrCat(kMutexPrefix, port, kMutexSuffix);
}
std::string PortMutexSemaphoreName(uint32_t port) {
  return absl::StrCat("/fastrtps_port", port, kMutexSuffix);
}

}  // namespace dds
}  // namespace cyber
