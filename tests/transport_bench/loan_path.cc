#include "tests/transport_bench/loan_path.h"

#include <cstring>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "cyber/node/loan_writer.h"
#include "cyber/node/node.h"
#include "cyber/runtime/runtime.h"
#include "cyber/transport/dds/dds_transport.h"
#include "tests/transport_bench/ours_path.h"
#include "tests/transport_bench/wire_stamp.h"

namespace cyber {
namespace transport_bench {
namespace {

class LoanSink final : public MessageSink {
 public:
  explicit LoanSink(const PathConfig& config)
      : runtime_(MakeBenchRuntime(config, "bench_sink", &transport_)),
        node_("bench_sink", runtime_->scheduler(), runtime_->bus()) {}

  ~LoanSink() override {
    node_.Shutdown();
    runtime_->Shutdown();
  }

  absl::Status Start(const PathConfig& config, ReceiveLog* log) {
    ReaderConfig rc;
    rc.channel_name = kLoanChannel;
    rc.pending_queue_size = config.pending_queue_size;
    auto reader = node_.TryCreateReader<SharedBytes>(
        rc, [log](const std::shared_ptr<const SharedBytes>& m) {
          const int64_t arrived = MonotonicNs();
          uint64_t seq = 0;
          int64_t sent = 0;
          if (m->size() < kStampPrefixBytes) return;
          ReadStampPrefix(reinterpret_cast<const char*>(m->data()), &seq, &sent);
          log->Record(seq, sent, arrived);
        });
    if (!reader.ok()) return reader.status();
    reader_ = *std::move(reader);
    return absl::OkStatus();
  }

  std::string Counters() const override {
    const ReaderStats r = reader_->stats();
    std::string out = absl::StrCat("reader_overflow=", r.dropped_overflow);
    for (const RemoteChannelStats& s : transport_->ChannelStats()) {
      if (s.channel != kLoanChannel) continue;
      absl::StrAppend(&out, " dds_received=", s.received, " dds_bytes=", s.bytes_received,
                      " undecodable=", s.dropped_undecodable);
    }
    return out;
  }

 private:
  std::shared_ptr<dds::DdsTransport> transport_;
  const std::unique_ptr<Runtime> runtime_;
  Node node_;
  std::shared_ptr<Reader<SharedBytes>> reader_;
};

class LoanSource final : public MessageSource {
 public:
  explicit LoanSource(const PathConfig& config)
      : runtime_(MakeBenchRuntime(config, "bench_source", &transport_)),
        node_("bench_source", runtime_->scheduler(), runtime_->bus()),
        bytes_(std::max(config.payload_bytes, kStampPrefixBytes)) {}

  ~LoanSource() override {
    writer_.reset();
    node_.Shutdown();
    runtime_->Shutdown();
  }

  absl::Status Start() {
    LoanWriterOptions options;
    options.slots = 16;
    options.slot_bytes = bytes_;
    auto writer = LoanWriter::Create(&node_, kLoanChannel, options);
    if (!writer.ok()) return writer.status();
    writer_ = *std::move(writer);
    return absl::OkStatus();
  }

  bool Send(uint64_t seq) override {
    absl::StatusOr<LoanedBuffer> buffer = writer_->Loan();
    if (!buffer.ok()) return false;
    std::memset(buffer->data() + kStampPrefixBytes, 'x', bytes_ - kStampPrefixBytes);
    WriteStampPrefix(seq, MonotonicNs(), reinterpret_cast<char*>(buffer->data()));
    const uint64_t failures = writer_->writer().stats().remote_failures;
    if (!writer_->Publish(*std::move(buffer), bytes_).ok()) return false;
    return writer_->writer().stats().remote_failures == failures;
  }

  std::string Counters() const override {
    std::string out = absl::StrCat("loan_refusals=", writer_->stats().loan_refusals);
    for (const RemoteChannelStats& s : transport_->ChannelStats()) {
      if (s.channel != kLoanChannel) continue;
      absl::StrAppend(&out, " published=", s.sent, " send_failures=", s.send_failures);
    }
    return out;
  }

 private:
  std::shared_ptr<dds::DdsTransport> transport_;
  const std::unique_ptr<Runtime> runtime_;
  Node node_;
  const size_t bytes_;
  std::unique_ptr<LoanWriter> writer_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<MessageSink>> StartLoanSink(const PathConfig& config,
                                                           ReceiveLog* log) {
  auto sink = std::make_unique<LoanSink>(config);
  if (absl::Status s = sink->Start(config, log); !s.ok()) return s;
  return std::unique_ptr<MessageSink>(std::move(sink));
}

absl::StatusOr<std::unique_ptr<MessageSource>> StartLoanSource(const PathConfig& config) {
  auto source = std::make_unique<LoanSource>(config);
  if (absl::Status s = source->Start(); !s.ok()) return s;
  return std::unique_ptr<MessageSource>(std::move(source));
}

}  // namespace transport_bench
}  // namespace cyber
