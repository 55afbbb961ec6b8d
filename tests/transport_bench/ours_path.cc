#include "tests/transport_bench/ours_path.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "cyber/runtime/runtime.h"
#include "cyber/transport/dds/dds_transport.h"
#include "cyber/node/node.h"
#include "tests/transport_bench/bench_message.pb.h"
#include "tests/transport_bench/wire_stamp.h"

namespace cyber {
namespace transport_bench {
namespace {

// The channel's qos: the default; ours_ds adds data sharing up to the
// message's serialized size (its body, and 32 bytes for seq and stamp).
ChannelQos OursQos(const PathConfig& config) {
  ChannelQos qos;
  if (config.kind == PathKind::kOursShared) {
    qos.data_sharing_max_bytes = static_cast<uint32_t>(config.payload_bytes + 32);
  }
  return qos;
}

class OursSink final : public MessageSink {
 public:
  explicit OursSink(const PathConfig& config)
      : runtime_(MakeBenchRuntime(config, "bench_sink", &transport_)),
        node_("bench_sink", runtime_->scheduler(), runtime_->bus()) {}

  ~OursSink() override {
    node_.Shutdown();
    runtime_->Shutdown();
  }

  absl::Status Start(const PathConfig& config, ReceiveLog* log) {
    ReaderConfig rc;
    rc.channel_name = kOursChannel;
    rc.pending_queue_size = config.pending_queue_size;
    rc.qos_profile = OursQos(config);
    auto reader = node_.TryCreateReader<BenchMessage>(
        rc, [log](const std::shared_ptr<const BenchMessage>& m) {
          const int64_t arrived = MonotonicNs();
          log->Record(m->seq(), m->sent_ns(), arrived);
        });
    if (!reader.ok()) return reader.status();
    reader_ = *std::move(reader);
    return absl::OkStatus();
  }

  std::string Counters() const override {
    const ReaderStats r = reader_->stats();
    std::string out = absl::StrCat("reader_overflow=", r.dropped_overflow,
                                   " dispatch_refusals=", r.dispatch_refusals);
    for (const RemoteChannelStats& s : transport_->ChannelStats()) {
      if (s.channel != kOursChannel) continue;
      // latency_p99_ns: the transport's own histogram, at hand-over to the
      // reader queue (before the scheduler runs the callback), to 12.5%.
      absl::StrAppend(&out, " dds_received=", s.received, " dds_lost=", s.lost,
                      " undecodable=", s.dropped_undecodable,
                      " handover_p99_ns=", s.latency_p99_ns);
    }
    return out;
  }

 private:
  std::shared_ptr<dds::DdsTransport> transport_;
  const std::unique_ptr<Runtime> runtime_;
  Node node_;
  std::shared_ptr<Reader<BenchMessage>> reader_;
};

class OursSource final : public MessageSource {
 public:
  explicit OursSource(const PathConfig& config)
      : runtime_(MakeBenchRuntime(config, "bench_source", &transport_)),
        node_("bench_source", runtime_->scheduler(), runtime_->bus()),
        body_(config.payload_bytes, 'x') {}

  ~OursSource() override {
    node_.Shutdown();
    runtime_->Shutdown();
  }

  absl::Status Start(const PathConfig& config) {
    auto writer = node_.TryCreateWriter<BenchMessage>(kOursChannel, OursQos(config));
    if (!writer.ok()) return writer.status();
    writer_ = *std::move(writer);
    return absl::OkStatus();
  }

  bool Send(uint64_t seq) override {
    auto m = std::make_shared<BenchMessage>();
    m->set_seq(seq);
    m->set_body(body_);
    const uint64_t failures = writer_->stats().remote_failures;
    m->set_sent_ns(MonotonicNs());
    writer_->Write(std::shared_ptr<const BenchMessage>(std::move(m)));
    return writer_->stats().remote_failures == failures;
  }

  std::string Counters() const override {
    for (const RemoteChannelStats& s : transport_->ChannelStats()) {
      if (s.channel != kOursChannel) continue;
      return absl::StrCat("published=", s.sent, " send_failures=", s.send_failures);
    }
    return "";
  }

 private:
  std::shared_ptr<dds::DdsTransport> transport_;
  const std::unique_ptr<Runtime> runtime_;
  Node node_;
  const std::string body_;
  std::shared_ptr<Writer<BenchMessage>> writer_;
};

}  // namespace

std::unique_ptr<Runtime> MakeBenchRuntime(const PathConfig& config, const std::string& name,
                                          std::shared_ptr<dds::DdsTransport>* transport) {
  dds::DdsTransportOptions t;
  t.domain_id = config.domain;
  t.process_name = name;
  t.interface_address = config.address;
  t.security_dir = config.security_dir;
  t.shm_segment_bytes = ShmSegmentBytes(config.payload_bytes);
  *transport = std::make_shared<dds::DdsTransport>(t);
  Runtime::Options o;
  o.name = name;
  o.remote = *transport;
  return std::make_unique<Runtime>(std::move(o));
}

absl::StatusOr<std::unique_ptr<MessageSink>> StartOursSink(const PathConfig& config,
                                                           ReceiveLog* log) {
  auto sink = std::make_unique<OursSink>(config);
  if (absl::Status s = sink->Start(config, log); !s.ok()) return s;
  return std::unique_ptr<MessageSink>(std::move(sink));
}

absl::StatusOr<std::unique_ptr<MessageSource>> StartOursSource(const PathConfig& config) {
  auto source = std::make_unique<OursSource>(config);
  if (absl::Status s = source->Start(config); !s.ok()) return s;
  return std::unique_ptr<MessageSource>(std::move(source));
}

}  // namespace transport_bench
}  // namespace cyber
