#include "cyber/transport/loan/loan_inlet.h"

#include <pthread.h>

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cyber/common/log.h"

namespace cyber {
namespace loan {
namespace {

constexpr size_t kMappingsKept = 16;
// A doorbell thread looks whether its writer is still there this often
// when nothing is published.
constexpr int kIdleCheckMs = 200;

// Holds one pin of a slot (and so the mapping) for a SharedBytes.
struct Pin {
  Pin(std::shared_ptr<LoanMapping> m, uint32_t s) : mapping(std::move(m)), slot(s) {}
  ~Pin() { mapping->Unpin(slot); }
  std::shared_ptr<LoanMapping> mapping;
  uint32_t slot;
};

}  // namespace

LoanInlet::~LoanInlet() { Stop(); }

void LoanInlet::End(const std::shared_ptr<Watched>& watched) {
  watched->stop.store(true, std::memory_order_release);
  watched->mapping->RingDoorbell();
  if (watched->thread.joinable()) watched->thread.join();
}

void LoanInlet::Stop() {
  std::deque<std::shared_ptr<Watched>> all;
  {
    MutexLock lock(&mu_);
    stopped_ = true;
    all = mappings_;
  }
  for (const auto& w : all) End(w);
}

absl::StatusOr<std::shared_ptr<LoanInlet::Watched>> LoanInlet::WatchedFor(
    const std::string& segment) {
  {
    MutexLock lock(&mu_);
    for (const auto& w : mappings_) {
      if (w->mapping->name() == segment) return w;
    }
  }
  // Opened outside the lock (a few system calls); a race opens it twice
  // and keeps both, which is harmless.
  absl::StatusOr<std::shared_ptr<LoanMapping>> opened = LoanMapping::Open(segment);
  if (!opened.ok()) return opened.status();
  auto watched = std::make_shared<Watched>();
  watched->mapping = *std::move(opened);
  std::shared_ptr<Watched> dropped;  // ended outside the lock
  {
    MutexLock lock(&mu_);
    mappings_.push_back(watched);
    if (mappings_.size() > kMappingsKept) {
      dropped = std::move(mappings_.front());
      mappings_.pop_front();
    }
  }
  if (dropped != nullptr) End(dropped);
  return watched;
}

std::shared_ptr<const SharedBytes> LoanInlet::PinToMessage(
    const std::shared_ptr<LoanMapping>& mapping, LoanReference reference, absl::Status* error) {
  absl::StatusOr<const uint8_t*> data =
      mapping->Pin(reference.slot, reference.generation, reference.size);
  if (!data.ok()) {
    *error = data.status();
    return nullptr;
  }
  auto pin = std::make_shared<const Pin>(mapping, reference.slot);
  const uint64_t size = reference.size;
  return std::make_shared<const SharedBytes>(*data, size, std::move(pin), std::move(reference));
}

absl::StatusOr<std::shared_ptr<const SharedBytes>> LoanInlet::Resolve(absl::string_view wire) {
  absl::StatusOr<DecodedReference> decoded = DecodeReference(wire);
  auto refuse = [&](const absl::Status& status) {
    MutexLock lock(&mu_);
    ++(status.code() == absl::StatusCode::kDataLoss ? stats_.overwritten : stats_.refused);
    return absl::Status(status.code(),
                        absl::StrCat("channel \"", channel_, "\": ", status.message()));
  };
  if (!decoded.ok()) return refuse(decoded.status());
  if (!decoded->loaned) {
    {
      MutexLock lock(&mu_);
      ++stats_.inlined;
    }
    return SharedBytes::Copy(decoded->inline_bytes);
  }
  LoanReference& ref = decoded->loan;
  if (ref.host != ThisHostBootId()) {
    return refuse(absl::FailedPreconditionError(absl::StrCat(
        "a loaned message from host boot id ", BootIdText(ref.host),
        " cannot be read on this host (boot id ", BootIdText(ThisHostBootId()),
        "): loaned bytes are read on the writer's host only; across hosts publish "
        "SharedBytes::Copy (inline) or a protobuf message")));
  }
  absl::StatusOr<std::shared_ptr<Watched>> watched = WatchedFor(ref.segment);
  if (!watched.ok()) return refuse(watched.status());
  bool start_doorbell = false;
  {
    MutexLock lock(&mu_);
    const bool ringing = (*watched)->thread.joinable() &&
                         !(*watched)->stop.load(std::memory_order_acquire) &&
                         !(*watched)->ended.load(std::memory_order_acquire);
    if (ringing) {
      ++stats_.confirmed;
      return std::shared_ptr<const SharedBytes>();
    }
    start_doorbell = deliver_ != nullptr && !stopped_ && !(*watched)->thread.joinable();
  }
  absl::Status error;
  std::shared_ptr<const SharedBytes> message = PinToMessage((*watched)->mapping, ref, &error);
  if (message == nullptr) return refuse(error);
  bool stopped;
  {
    MutexLock lock(&mu_);
    ++stats_.loaned;
    stopped = stopped_;
  }
  if (deliver_ == nullptr || stopped) return message;
  // Handed over here, before the doorbell thread starts: it hands over
  // what comes after, so the readers see the publish order.
  deliver_(std::move(message));
  if (start_doorbell) {
    MutexLock lock(&mu_);
    // Started under the lock so that Stop() cannot miss it.
    if (!stopped_ && !(*watched)->thread.joinable()) {
      (*watched)->thread = std::thread(&LoanInlet::Watch, this, *watched, ref);
      // Named here, not in the thread: it is known by name when this returns.
      pthread_setname_np((*watched)->thread.native_handle(), "cyber_loan_bell");
    }
  }
  return std::shared_ptr<const SharedBytes>();
}

void LoanInlet::Watch(std::shared_ptr<Watched> watched, LoanReference first) {
  const std::shared_ptr<LoanMapping>& mapping = watched->mapping;
  uint64_t last = first.sequence;  // delivered through Resolve
  while (!watched->stop.load(std::memory_order_acquire)) {
    const uint32_t bell = mapping->Doorbell();
    const uint64_t newest = mapping->LastSequence();
    while (last < newest && !watched->stop.load(std::memory_order_acquire)) {
      uint64_t next = last + 1;
      uint64_t lost = 0;
      if (newest - next >= kRingEntries) {  // fell behind the ring
        lost = newest - kRingEntries + 1 - next;
        next = newest - kRingEntries + 1;
      }
      last = next;
      Published p;
      absl::Status error;
      std::shared_ptr<const SharedBytes> message;
      if (mapping->ReadRing(next, &p)) {
        LoanReference ref = first;
        ref.slot = p.slot;
        ref.generation = p.generation;
        ref.size = p.size;
        ref.sequence = p.sequence;
        message = PinToMessage(mapping, std::move(ref), &error);
      }
      {
        MutexLock lock(&mu_);
        stats_.overwritten += lost + (message == nullptr ? 1 : 0);
        if (message != nullptr) ++stats_.doorbell;
      }
      if (message == nullptr) {
        AWARN_EVERY(100) << "channel \"" << channel_ << "\": publish " << next
                         << " of loan segment " << mapping->name()
                         << " was written over before this process read it (lost)";
        continue;
      }
      deliver_(std::move(message));
    }
    if (mapping->LastSequence() != newest) continue;
    mapping->WaitDoorbell(bell, kIdleCheckMs);
    if (mapping->Doorbell() == bell && !mapping->WriterAlive()) break;
  }
  watched->ended.store(true, std::memory_order_release);
}

LoanInletStats LoanInlet::stats() const {
  MutexLock lock(&mu_);
  return stats_;
}

}  // namespace loan
}  // namespace cyber
