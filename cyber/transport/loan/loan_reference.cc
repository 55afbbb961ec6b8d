#include "cyber/transport/loan/loan_reference.h"

#include <cstring>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/escaping.h"

namespace cyber {
namespace loan {
namespace {

constexpr char kMagic[4] = {'C', 'Y', 'L', 'R'};
constexpr uint8_t kVersion = 1;
constexpr uint8_t kInline = 0;
constexpr uint8_t kLoan = 1;
constexpr size_t kPrefix = 8;
constexpr size_t kLoanFixed = 4 + 4 + 8 + 8 + 16 + 1;

void PutLe(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t GetLe(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(p[i])) << (8 * i);
  return v;
}

std::string Prefix(uint8_t kind) {
  std::string out(kMagic, 4);
  out.push_back(static_cast<char>(kVersion));
  out.push_back(static_cast<char>(kind));
  out.append(2, '\0');
  return out;
}

BootId ReadBootId() {
  BootId id{};
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string text;
  std::getline(in, text);
  std::string hex;
  for (char c : text) {
    if (c != '-') hex.push_back(c);
  }
  if (hex.size() == 32) {
    const std::string bytes = absl::HexStringToBytes(hex);
    std::memcpy(id.data(), bytes.data(), id.size());
  }
  return id;
}

}  // namespace

const BootId& ThisHostBootId() {
  static const BootId id = ReadBootId();
  return id;
}

std::string BootIdText(const BootId& id) {
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(id.data()), id.size()));
}

std::string EncodeInline(absl::string_view bytes) {
  std::string out = Prefix(kInline);
  out.append(bytes.data(), bytes.size());
  return out;
}

std::string EncodeLoan(const LoanReference& r) {
  std::string out = Prefix(kLoan);
  PutLe(&out, r.slot, 4);
  PutLe(&out, r.generation, 4);
  PutLe(&out, r.size, 8);
  PutLe(&out, r.sequence, 8);
  out.append(reinterpret_cast<const char*>(r.host.data()), r.host.size());
  const size_t n = std::min<size_t>(r.segment.size(), 255);
  out.push_back(static_cast<char>(n));
  out.append(r.segment.data(), n);
  return out;
}

absl::StatusOr<DecodedReference> DecodeReference(absl::string_view wire) {
  if (wire.size() < kPrefix || std::memcmp(wire.data(), kMagic, 4) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "SharedBytes sample: ", wire.size(), " bytes that do not start with \"CYLR\""));
  }
  const uint8_t version = static_cast<uint8_t>(wire[4]);
  const uint8_t kind = static_cast<uint8_t>(wire[5]);
  if (version != kVersion) {
    return absl::InvalidArgumentError(
        absl::StrCat("SharedBytes sample: version ", version, " is not ", kVersion));
  }
  DecodedReference out;
  if (kind == kInline) {
    out.inline_bytes = wire.substr(kPrefix);
    return out;
  }
  if (kind != kLoan) {
    return absl::InvalidArgumentError(
        absl::StrCat("SharedBytes sample: kind ", kind, " is neither 0 (inline) nor 1 (loan)"));
  }
  if (wire.size() < kPrefix + kLoanFixed) {
    return absl::InvalidArgumentError(absl::StrCat(
        "SharedBytes sample: a loan reference of ", wire.size(), " bytes is truncated"));
  }
  const char* p = wire.data() + kPrefix;
  out.loaned = true;
  out.loan.slot = static_cast<uint32_t>(GetLe(p, 4));
  out.loan.generation = static_cast<uint32_t>(GetLe(p + 4, 4));
  out.loan.size = GetLe(p + 8, 8);
  out.loan.sequence = GetLe(p + 16, 8);
  std::memcpy(out.loan.host.data(), p + 24, 16);
  const size_t n = static_cast<uint8_t>(p[40]);
  if (wire.size() != kPrefix + kLoanFixed + n) {
    return absl::InvalidArgumentError(absl::StrCat(
        "SharedBytes sample: segment name length ", n, " does not match the ",
        wire.size(), " bytes of the reference"));
  }
  out.loan.segment.assign(p + kLoanFixed, n);
  return out;
}

}  // namespace loan
}  // namespace cyber
