// LoanWriter: publishes large raw payloads (SharedBytes) that are written
// once, into shared memory, and read where they are by every reader — in
// this process and in the other processes of this host. A camera driver:
//
//   cyber::LoanWriterOptions options;
//   options.slot_bytes = 8 << 20;  // the largest frame
//   auto camera = cyber::LoanWriter::Create(&node, "/camera/front/raw", options);
//   absl::StatusOr<cyber::LoanedBuffer> frame = (*camera)->Loan();
//   if (!frame.ok()) { AERROR << frame.status(); return; }  // readers hold all
//   size_t n = sensor.ReadInto(frame->data(), frame->capacity());
//   absl::Status sent = (*camera)->Publish(*std::move(frame), n);
//
// and its readers take `std::shared_ptr<const cyber::SharedBytes>`
// (cyber/transport/loan/shared_bytes.h), as routines on their routes like
// any reader.
//
// Why a writer of its own: a loan is a slot of the writer's segment
// (cyber/transport/loan/loan_segment.h), claimed for the writing and then
// held by whoever reads it; a Writer<SharedBytes> given heap bytes copies
// them into every sample instead. The segment holds `slots` messages of up
// to `slot_bytes`: a reader that falls `slots` messages behind loses the
// oldest (counted, never read half-written), and a writer whose every slot
// is held by readers gets ResourceExhausted from Loan() (it never blocks).
//
// Other hosts cannot read a loan: their readers drop it with an error that
// names this host. Use a protobuf message (or SharedBytes::Copy) there.
//
// Threads: thread-safe. A LoanedBuffer belongs to one writer; destroying it
// unpublished gives its slot back.

#ifndef CYBER_NODE_LOAN_WRITER_H_
#define CYBER_NODE_LOAN_WRITER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cyber/node/node.h"
#include "cyber/node/writer.h"
#include "cyber/transport/channel_qos.h"
#include "cyber/transport/loan/loan_segment.h"
#include "cyber/transport/loan/shared_bytes.h"

namespace cyber {

class LoanedBuffer {
 public:
  LoanedBuffer() = default;
  LoanedBuffer(LoanedBuffer&& other) noexcept { *this = std::move(other); }
  LoanedBuffer& operator=(LoanedBuffer&& other) noexcept;
  LoanedBuffer(const LoanedBuffer&) = delete;
  LoanedBuffer& operator=(const LoanedBuffer&) = delete;
  ~LoanedBuffer();  // gives an unpublished slot back

  uint8_t* data() const { return claim_.data; }
  size_t capacity() const { return capacity_; }
  bool valid() const { return segment_ != nullptr; }

 private:
  friend class LoanWriter;
  std::shared_ptr<loan::LoanSegment> segment_;
  loan::SlotClaim claim_;
  size_t capacity_ = 0;
};

struct LoanWriterOptions {
  uint32_t slots = 8;                     // 1..256
  uint64_t slot_bytes = uint64_t{8} << 20;  // 1 B..1 GiB
  ChannelQos qos;
};

struct LoanWriterStats {
  uint64_t published = 0;
  uint64_t loan_refusals = 0;  // Loan() found every slot held
};

class LoanWriter {
 public:
  // Errors name the node and the channel: TryCreateWriter's, and the
  // segment's (a bad slots or slot_bytes: InvalidArgument with the value).
  static absl::StatusOr<std::unique_ptr<LoanWriter>> Create(Node* node,
                                                            const std::string& channel,
                                                            LoanWriterOptions options = {});
  ~LoanWriter();
  LoanWriter(const LoanWriter&) = delete;
  LoanWriter& operator=(const LoanWriter&) = delete;

  // A slot to fill (capacity slot_bytes). ResourceExhausted when readers
  // hold every slot (the message says how many are held and loaned).
  absl::StatusOr<LoanedBuffer> Loan();
  // Publishes the first `size` bytes of `buffer` to every reader.
  // InvalidArgument (naming the channel and values) for an empty buffer,
  // one of another writer, or a size over its capacity; FailedPrecondition
  // when the node is shut down (nothing rung; a shutdown racing this call
  // is named as such: other processes may have the message). The slot is
  // given back on every error.
  absl::Status Publish(LoanedBuffer buffer, size_t size);

  const std::string& channel_name() const { return writer_->channel_name(); }
  const std::string& segment_name() const { return segment_->name(); }
  LoanWriterStats stats() const;
  // The underlying writer (its counts: remote failures).
  const Writer<SharedBytes>& writer() const { return *writer_; }

 private:
  LoanWriter(std::shared_ptr<Writer<SharedBytes>> writer,
             std::shared_ptr<loan::LoanSegment> segment)
      : writer_(std::move(writer)), segment_(std::move(segment)) {}

  const std::shared_ptr<Writer<SharedBytes>> writer_;
  const std::shared_ptr<loan::LoanSegment> segment_;
  std::atomic<uint64_t> published_{0};
  std::atomic<uint64_t> loan_refusals_{0};
};

}  // namespace cyber

#endif  // CYBER_NODE_LOAN_WRITER_H_
