#include "cyber/transport/loan/loan_inlet.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace cyber {
namespace loan {
namespace {

constexpr size_t kMappingsKept = 16;

// Holds one pin of a slot (and so the mapping) for a SharedBytes.
struct Pin {
  Pin(std::shared_ptr<LoanMapping> m, uint32_t s) : mapping(std::move(m)), slot(s) {}
  ~Pin() { mapping->Unpin(slot); }
  std::shared_ptr<LoanMapping> mapping;
  uint32_t slot;
};

}  // namespace

absl::StatusOr<std::shared_ptr<LoanMapping>> LoanInlet::MappingFor(
    const std::string& segment) {
  {
    MutexLock lock(&mu_);
    for (const auto& m : mappings_) {
      if (m->name() == segment) return m;
    }
  }
  // Opened outside the lock (a system call or three); a race opens it twice
  // and keeps both, which is harmless.
  absl::StatusOr<std::shared_ptr<LoanMapping>> opened = LoanMapping::Open(segment);
  if (!opened.ok()) return opened.status();
  std::shared_ptr<LoanMapping> dropped;  // released outside the lock
  MutexLock lock(&mu_);
  mappings_.push_back(*opened);
  if (mappings_.size() > kMappingsKept) {
    dropped = std::move(mappings_.front());
    mappings_.pop_front();
  }
  return *opened;
}

absl::StatusOr<std::shared_ptr<const SharedBytes>> LoanInlet::Resolve(absl::string_view wire) {
  absl::StatusOr<DecodedReference> decoded = DecodeReference(wire);
  auto refuse = [&](const absl::Status& status, bool overwritten) {
    MutexLock lock(&mu_);
    ++(overwritten ? stats_.overwritten : stats_.refused);
    return absl::Status(status.code(),
                        absl::StrCat("channel \"", channel_, "\": ", status.message()));
  };
  if (!decoded.ok()) return refuse(decoded.status(), false);
  if (!decoded->loaned) {
    {
      MutexLock lock(&mu_);
      ++stats_.inlined;
    }
    return SharedBytes::Copy(decoded->inline_bytes);
  }
  const LoanReference& ref = decoded->loan;
  if (ref.host != ThisHostBootId()) {
    return refuse(absl::FailedPreconditionError(absl::StrCat(
                      "a loaned message from host boot id ", BootIdText(ref.host),
                      " cannot be read on this host (boot id ", BootIdText(ThisHostBootId()),
                      "): loaned bytes are read on the writer's host only; across hosts "
                      "publish SharedBytes::Copy (inline) or a protobuf message")),
                  false);
  }
  absl::StatusOr<std::shared_ptr<LoanMapping>> mapping = MappingFor(ref.segment);
  if (!mapping.ok()) return refuse(mapping.status(), false);
  absl::StatusOr<const uint8_t*> data = (*mapping)->Pin(ref.slot, ref.generation, ref.size);
  if (!data.ok()) {
    return refuse(data.status(), data.status().code() == absl::StatusCode::kDataLoss);
  }
  {
    MutexLock lock(&mu_);
    ++stats_.loaned;
  }
  auto pin = std::make_shared<const Pin>(*mapping, ref.slot);
  return std::make_shared<const SharedBytes>(*data, ref.size, std::move(pin), ref);
}

LoanInletStats LoanInlet::stats() const {
  MutexLock lock(&mu_);
  return stats_;
}

}  // namespace loan
}  // namespace cyber
