#include "tests/transport_bench/bare_dds_path.h"

#include "cyber/transport/dds/dds_security.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>

#include <fastdds/dds/domain/DomainParticipant.hpp>
#include <fastdds/dds/domain/DomainParticipantFactory.hpp>
#include <fastdds/dds/domain/qos/DomainParticipantQos.hpp>
#include <fastdds/dds/publisher/DataWriter.hpp>
#include <fastdds/dds/publisher/Publisher.hpp>
#include <fastdds/dds/subscriber/DataReader.hpp>
#include <fastdds/dds/subscriber/DataReaderListener.hpp>
#include <fastdds/dds/subscriber/SampleInfo.hpp>
#include <fastdds/dds/subscriber/Subscriber.hpp>
#include <fastdds/dds/topic/Topic.hpp>
#include <fastdds/dds/topic/TypeSupport.hpp>
#include <fastdds/rtps/transport/UDPv4TransportDescriptor.h>
#include <fastdds/rtps/transport/shared_mem/SharedMemTransportDescriptor.h>

#include "absl/strings/str_cat.h"
#include "tests/transport_bench/raw_bytes_type.h"
#include "tests/transport_bench/wire_stamp.h"

namespace cyber {
namespace transport_bench {
namespace {

namespace fdds = eprosima::fastdds::dds;
using ReturnCode = eprosima::fastrtps::types::ReturnCode_t;

constexpr int32_t kDepth = 16;
// Pool samples beyond the history (dds_ds): a reader may still be reading
// a sample the writer's history has let go.
constexpr int32_t kExtraSharedSamples = 4;

bool SharesData(const PathConfig& config) { return config.kind == PathKind::kBareDdsShared; }

// The participant, publisher or subscriber and topic of one end.
class BareEnd {
 public:
  ~BareEnd() {
    if (participant_ == nullptr) return;
    participant_->delete_contained_entities();
    fdds::DomainParticipantFactory::get_instance()->delete_participant(participant_);
  }

  absl::Status Start(uint32_t domain, const std::string& name, const PathConfig& config) {
    fdds::DomainParticipantFactory* factory = fdds::DomainParticipantFactory::get_instance();
    fdds::DomainParticipantQos qos = fdds::PARTICIPANT_QOS_DEFAULT;
    qos.name(name);
    qos.transport().use_builtin_transports = false;
    auto shm = std::make_shared<eprosima::fastdds::rtps::SharedMemTransportDescriptor>();
    shm->segment_size(ShmSegmentBytes(config.payload_bytes));
    qos.transport().user_transports.push_back(shm);
    auto udp = std::make_shared<eprosima::fastdds::rtps::UDPv4TransportDescriptor>();
    udp->interfaceWhiteList.push_back(config.address.empty() ? "127.0.0.1" : config.address);
    if (!config.security_dir.empty()) {
      absl::StatusOr<dds::DdsSecurityFiles> files =
          dds::DdsSecurityFilesIn(config.security_dir, "bare DDS: security directory");
      if (!files.ok()) return files.status();
      for (const auto& p : dds::DdsSecurityProperties(*files)) {
        qos.properties().properties().emplace_back(p.first, p.second);
      }
    }
    qos.transport().user_transports.push_back(udp);
    auto& discovery = qos.wire_protocol().builtin.discovery_config;
    discovery.leaseDuration = eprosima::fastrtps::Duration_t(3, 0);
    discovery.leaseDuration_announcementperiod = eprosima::fastrtps::Duration_t(1, 0);
    participant_ = factory->create_participant(domain, qos);
    if (participant_ == nullptr) {
      return absl::UnavailableError(absl::StrCat("bare DDS: no participant on domain ", domain));
    }
    fdds::TypeSupport type(new RawBytesType(
        SharesData(config) ? static_cast<uint32_t>(std::max(config.payload_bytes, kStampPrefixBytes))
                           : 0));
    if (type.register_type(participant_) != ReturnCode::RETCODE_OK) {
      return absl::UnavailableError("bare DDS: could not register the raw-bytes type");
    }
    topic_ = participant_->create_topic(kBareDdsTopic, type.get_type_name(),
                                        fdds::TOPIC_QOS_DEFAULT);
    if (topic_ == nullptr) return absl::UnavailableError("bare DDS: no topic");
    return absl::OkStatus();
  }

  fdds::DomainParticipant* participant() { return participant_; }
  fdds::Topic* topic() { return topic_; }

 private:
  fdds::DomainParticipant* participant_ = nullptr;
  fdds::Topic* topic_ = nullptr;
};

// dds_qos.cc's ApplyCommon for ChannelQos{} (reliable, volatile, keep last 16).
// With data sharing (dds_ds) on as well: creation fails if it cannot be.
template <typename Qos>
void ApplyChannelDefaults(const PathConfig& config, Qos* q) {
  q->reliability().kind = fdds::RELIABLE_RELIABILITY_QOS;
  q->durability().kind = fdds::VOLATILE_DURABILITY_QOS;
  q->history().kind = fdds::KEEP_LAST_HISTORY_QOS;
  q->history().depth = kDepth;
  q->resource_limits().max_instances = 1;
  q->resource_limits().max_samples_per_instance = kDepth;
  q->resource_limits().max_samples = kDepth;
  q->resource_limits().allocated_samples = kDepth;
  q->endpoint().history_memory_policy =
      eprosima::fastrtps::rtps::PREALLOCATED_WITH_REALLOC_MEMORY_MODE;
  if (SharesData(config)) {
    q->data_sharing().on("");  // Fast-DDS's default directory
    q->resource_limits().extra_samples = kExtraSharedSamples;
  } else {
    q->data_sharing().off();
  }
}

class BareDdsSink final : public MessageSink, public fdds::DataReaderListener {
 public:
  explicit BareDdsSink(ReceiveLog* log) : log_(log) {}

  ~BareDdsSink() override {
    if (reader_ != nullptr) {
      reader_->set_listener(nullptr);  // no callback after this returns
      subscriber_->delete_datareader(reader_);
    }
  }

  absl::Status Start(const PathConfig& config) {
    if (absl::Status s = end_.Start(config.domain, "transport_bench/bare_sink", config); !s.ok()) {
      return s;
    }
    subscriber_ = end_.participant()->create_subscriber(fdds::SUBSCRIBER_QOS_DEFAULT);
    if (subscriber_ == nullptr) return absl::UnavailableError("bare DDS: no subscriber");
    fdds::DataReaderQos qos = fdds::DATAREADER_QOS_DEFAULT;
    ApplyChannelDefaults(config, &qos);
    reader_ = subscriber_->create_datareader(end_.topic(), qos, this,
                                             fdds::StatusMask::data_available());
    if (reader_ == nullptr) {
      return absl::UnavailableError(absl::StrCat("bare DDS: no data reader (", PathName(config.kind),
                                                 ")"));
    }
    return absl::OkStatus();
  }

  void on_data_available(fdds::DataReader* reader) override {
    fdds::SampleInfo info;
    while (reader->take_next_sample(&sample_, &info) == ReturnCode::RETCODE_OK) {
      const int64_t arrived = MonotonicNs();
      if (!info.valid_data || sample_.bytes.size() < kStampPrefixBytes) {
        malformed_.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      uint64_t seq = 0;
      int64_t sent = 0;
      ReadStampPrefix(sample_.bytes.data(), &seq, &sent);
      log_->Record(seq, sent, arrived);
    }
  }

  std::string Counters() const override {
    return absl::StrCat("malformed=", malformed_.load(std::memory_order_relaxed));
  }

 private:
  ReceiveLog* const log_;
  BareEnd end_;  // destroyed last: the reader is deleted first
  fdds::Subscriber* subscriber_ = nullptr;
  fdds::DataReader* reader_ = nullptr;
  RawSample sample_;  // Fast-DDS's receive thread only
  std::atomic<uint64_t> malformed_{0};
};

class BareDdsSource final : public MessageSource {
 public:
  absl::Status Start(const PathConfig& config) {
    if (absl::Status s = end_.Start(config.domain, "transport_bench/bare_source", config); !s.ok()) {
      return s;
    }
    publisher_ = end_.participant()->create_publisher(fdds::PUBLISHER_QOS_DEFAULT);
    if (publisher_ == nullptr) return absl::UnavailableError("bare DDS: no publisher");
    fdds::DataWriterQos qos = fdds::DATAWRITER_QOS_DEFAULT;
    ApplyChannelDefaults(config, &qos);
    qos.reliability().max_blocking_time = eprosima::fastrtps::Duration_t(0, 10'000'000);
    writer_ = publisher_->create_datawriter(end_.topic(), qos);
    if (writer_ == nullptr) {
      return absl::UnavailableError(absl::StrCat("bare DDS: no data writer (", PathName(config.kind),
                                                 ")"));
    }
    sample_.bytes.assign(std::max(config.payload_bytes, kStampPrefixBytes), 'x');
    return absl::OkStatus();
  }

  bool Send(uint64_t seq) override {
    WriteStampPrefix(seq, MonotonicNs(), sample_.bytes.data());
    return writer_->write(&sample_);
  }

 private:
  BareEnd end_;
  fdds::Publisher* publisher_ = nullptr;
  fdds::DataWriter* writer_ = nullptr;
  RawSample sample_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<MessageSink>> StartBareDdsSink(const PathConfig& config,
                                                              ReceiveLog* log) {
  auto sink = std::make_unique<BareDdsSink>(log);
  if (absl::Status s = sink->Start(config); !s.ok()) return s;
  return std::unique_ptr<MessageSink>(std::move(sink));
}

absl::StatusOr<std::unique_ptr<MessageSource>> StartBareDdsSource(const PathConfig& config) {
  auto source = std::make_unique<BareDdsSource>();
  if (absl::Status s = source->Start(config); !s.ok()) return s;
  return std::unique_ptr<MessageSource>(std::move(source));
}

}  // namespace transport_bench
}  // namespace cyber
