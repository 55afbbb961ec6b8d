#include "cyber/node/loan_writer.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "cyber/common/log.h"
#include "cyber/transport/loan/loan_reference.h"

namespace cyber {
namespace {

// What keeps a slot held by this process while its readers hold the
// message (pin bit 31 of the slot).
struct LocalPin {
  LocalPin(std::shared_ptr<loan::LoanSegment> s, uint32_t i) : segment(std::move(s)), slot(i) {}
  ~LocalPin() { segment->ReleaseLocalPin(slot); }
  std::shared_ptr<loan::LoanSegment> segment;
  uint32_t slot;
};

}  // namespace

LoanedBuffer& LoanedBuffer::operator=(LoanedBuffer&& other) noexcept {
  if (this != &other) {
    if (segment_ != nullptr) segment_->Abandon(claim_);
    segment_ = std::move(other.segment_);
    claim_ = other.claim_;
    capacity_ = other.capacity_;
    other.segment_ = nullptr;
    other.claim_ = {};
    other.capacity_ = 0;
  }
  return *this;
}

LoanedBuffer::~LoanedBuffer() {
  if (segment_ != nullptr) segment_->Abandon(claim_);
}

absl::StatusOr<std::unique_ptr<LoanWriter>> LoanWriter::Create(Node* node,
                                                                const std::string& channel,
                                                                LoanWriterOptions options) {
  absl::StatusOr<std::shared_ptr<Writer<SharedBytes>>> writer =
      node->TryCreateWriter<SharedBytes>(channel, options.qos);
  if (!writer.ok()) return writer.status();
  absl::StatusOr<std::shared_ptr<loan::LoanSegment>> segment =
      loan::LoanSegment::Create(channel, options.slots, options.slot_bytes);
  if (!segment.ok()) {
    return absl::Status(segment.status().code(),
                        absl::StrCat("node \"", node->name(), "\": ", segment.status().message()));
  }
  return std::unique_ptr<LoanWriter>(new LoanWriter(*std::move(writer), *std::move(segment)));
}

LoanWriter::~LoanWriter() = default;

absl::StatusOr<LoanedBuffer> LoanWriter::Loan() {
  absl::StatusOr<loan::SlotClaim> claim = segment_->Claim();
  if (!claim.ok()) {
    loan_refusals_.fetch_add(1, std::memory_order_relaxed);
    AWARN_EVERY(100) << "node \"" << writer_->node_name() << "\": " << claim.status().message();
    return claim.status();
  }
  LoanedBuffer buffer;
  buffer.segment_ = segment_;
  buffer.claim_ = *claim;
  buffer.capacity_ = segment_->slot_bytes();
  return buffer;
}

absl::Status LoanWriter::Publish(LoanedBuffer buffer, size_t size) {
  const std::string who =
      absl::StrCat("node \"", writer_->node_name(), "\": loan writer on channel \"",
                   channel_name(), "\"");
  if (!buffer.valid()) {
    return absl::InvalidArgumentError(absl::StrCat(who, ": the buffer is empty (moved from, "
                                                   "or published already)"));
  }
  if (buffer.segment_ != segment_) {
    return absl::InvalidArgumentError(absl::StrCat(
        who, ": the buffer was loaned by another writer (segment ", buffer.segment_->name(),
        ", not ", segment_->name(), ")"));
  }
  if (size > buffer.capacity()) {
    return absl::InvalidArgumentError(absl::StrCat(who, ": size ", size,
                                                   " is over the buffer's capacity ",
                                                   buffer.capacity()));
  }
  // Before the segment's doorbell rings: its readers in other processes
  // take a rung publish at once, so one the node refuses must not ring.
  if (writer_->closed()) {
    return absl::FailedPreconditionError(
        absl::StrCat(who, ": not published (the node is shut down)"));
  }
  const loan::SlotClaim claim = buffer.claim_;
  buffer.segment_ = nullptr;  // published from here on: not abandoned
  const loan::Published published = segment_->Publish(claim, size, /*local_pin=*/true);
  loan::LoanReference reference;
  reference.segment = segment_->name();
  reference.slot = published.slot;
  reference.generation = published.generation;
  reference.size = size;
  reference.sequence = published.sequence;
  reference.host = loan::ThisHostBootId();
  auto message = std::make_shared<const SharedBytes>(
      claim.data, size, std::make_shared<const LocalPin>(segment_, claim.slot),
      std::move(reference), segment_->channel());
  if (!writer_->Write(std::move(message))) {
    return absl::FailedPreconditionError(absl::StrCat(
        who, ": the node shut down during this publish: this process's readers did not get it; "
             "readers in other processes on this host may have"));
  }
  published_.fetch_add(1, std::memory_order_relaxed);
  return absl::OkStatus();
}

LoanWriterStats LoanWriter::stats() const {
  LoanWriterStats s;
  s.published = published_.load(std::memory_order_relaxed);
  s.loan_refusals = loan_refusals_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace cyber
