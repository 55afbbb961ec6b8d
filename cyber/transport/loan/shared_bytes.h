// SharedBytes: the message type of a channel of large raw payloads — a
// camera image, a point cloud buffer — that readers read where the writer
// put them.
//
// Why a type of its own (and not a protobuf `bytes` field): a protobuf
// message is serialized by its writer and parsed by each reader process, two
// copies of every byte at ~1 ms per MiB. SharedBytes is a read-only view of
// bytes plus what keeps them alive: in the writer's process the readers get
// the writer's own buffer; in another process on the same host they get the
// bytes where the writer's LoanWriter (cyber/node/loan_writer.h) put them,
// in its loan segment, pinned for as long as any reader holds the message
// (loan_segment.h). No copy at all, at any size.
//
// SharedBytes::Copy makes one on the heap: it crosses processes (and hosts)
// inline in the sample, copied as a protobuf message would be. A loaned one
// crosses processes on one host only; a reader on another host drops it
// with an error naming the writer's host (loan_reference.h).
//
//   auto reader = node.TryCreateReader<cyber::SharedBytes>(
//       "/camera/front/raw",
//       [](const std::shared_ptr<const cyber::SharedBytes>& image) {
//         Detect(image->data(), image->size());  // in place, no copy
//       });
//
// Hold a message only as long as needed: a pinned slot is one the writer
// cannot reuse, and a writer whose every slot is held cannot publish.
//
// Threads: immutable after construction; share freely.

#ifndef CYBER_TRANSPORT_LOAN_SHARED_BYTES_H_
#define CYBER_TRANSPORT_LOAN_SHARED_BYTES_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/strings/string_view.h"
#include "cyber/transport/loan/loan_reference.h"

namespace cyber {

class SharedBytes {
 public:
  // The DDS type name of every SharedBytes channel.
  static constexpr absl::string_view kTypeName = "cyber.SharedBytes";

  // A copy of `bytes` on the heap.
  static std::shared_ptr<const SharedBytes> Copy(absl::string_view bytes);

  // `data` stays valid while `keeper` lives.
  SharedBytes(const uint8_t* data, size_t size, std::shared_ptr<const void> keeper)
      : data_(data), size_(size), keeper_(std::move(keeper)) {}
  // The same for bytes that lie in a loan segment at `loan`.
  // `written_here_for`: the channel whose segment this process writes
  // (a LoanWriter's message); empty for another process's segment.
  SharedBytes(const uint8_t* data, size_t size, std::shared_ptr<const void> keeper,
              loan::LoanReference loan, std::string written_here_for)
      : data_(data), size_(size), keeper_(std::move(keeper)), loaned_(true),
        loan_(std::move(loan)), written_here_for_(std::move(written_here_for)) {}

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  absl::string_view view() const {
    return absl::string_view(reinterpret_cast<const char*>(data_), size_);
  }
  // Where the bytes lie in a loan segment (this process's or another's);
  // null for bytes on the heap.
  const loan::LoanReference* loan() const { return loaned_ ? &loan_ : nullptr; }
  // Whether a writer on `channel` sends the loan reference (its readers on
  // this host read in place) rather than the bytes: only for this
  // process's own segment of that channel. Bytes received from another
  // process, or loaned for another channel, and written again go inline:
  // their segment's doorbell and slots are another channel's, and its
  // writer may reuse them at any time.
  bool SendsAsLoanOn(absl::string_view channel) const {
    return loaned_ && !written_here_for_.empty() && written_here_for_ == channel;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  std::shared_ptr<const void> keeper_;
  bool loaned_ = false;
  loan::LoanReference loan_;
  std::string written_here_for_;
};

}  // namespace cyber

#endif  // CYBER_TRANSPORT_LOAN_SHARED_BYTES_H_
