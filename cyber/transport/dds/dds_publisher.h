// Internal to cyber/transport/dds: the outlet of one channel (a DataWriter on its
// topic): what RemoteTransport::Publisher returns.

#ifndef CYBER_TRANSPORT_DDS_DDS_PUBLISHER_H_
#define CYBER_TRANSPORT_DDS_DDS_PUBLISHER_H_

#include "cyber/transport/dds/dds_participant.h"

namespace cyber {
namespace dds {


class PublisherImpl final : public RemotePublisher, public fdds::DataWriterListener {
 public:
  PublisherImpl(DdsTransport::Impl* impl, std::shared_ptr<ChannelState> channel,
                ChannelQos qos, size_t max_bytes)
      : channel_(std::move(channel)),
        qos_(qos),
        max_bytes_(max_bytes),
        own_prefix_(impl->own_prefix()) {
    HandoffFence();
  }

  const ChannelQos& qos() const { return qos_; }

  void Attach(fdds::DataWriter* writer) {
    MutexLock lock(&mu_);
    writer_ = writer;
  }

  // Detaches and returns the DataWriter for deletion; waits for a Publish
  // in progress.
  fdds::DataWriter* Detach() {
    MutexLock lock(&mu_);
    closed_.store(true, std::memory_order_release);
    return std::exchange(writer_, nullptr);
  }

  // False once the transport shut down: writers then stop serializing for
  // (and logging about) a network that is gone.
  bool Wanted() const override {
    if (closed_.load(std::memory_order_acquire)) return false;
    return qos_.durability == ChannelQos::Durability::kTransientLocal ||
           matched_remote_.load(std::memory_order_acquire) > 0;
  }

  absl::Status Publish(absl::string_view payload, Correlation correlation) override {
    if (absl::Status s = CheckSize(payload.size()); !s.ok()) return s;
    FrameSample sample;
    sample.bytes.reserve(kFrameHeaderSize + payload.size());
    AppendFrameHeader(Header(correlation), static_cast<uint32_t>(payload.size()),
                      &sample.bytes);
    sample.bytes.append(payload.data(), payload.size());
    return Write(&sample, payload.size());
  }

  absl::Status PublishAt(absl::string_view payload, absl::Time source_time,
                         Correlation correlation) override {
    if (source_time < absl::UnixEpoch() || source_time == absl::InfiniteFuture()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "channel \"", channel_->channel, "\": source_time ", absl::FormatTime(source_time),
          " is not a time since the epoch; not sent"));
    }
    if (absl::Status s = CheckSize(payload.size()); !s.ok()) return s;
    FrameSample sample;
    sample.bytes.reserve(kFrameHeaderSize + payload.size());
    AppendFrameHeader(Header(correlation), static_cast<uint32_t>(payload.size()), &sample.bytes);
    sample.bytes.append(payload.data(), payload.size());
    const int64_t ns = absl::ToUnixNanos(source_time);
    const eprosima::fastrtps::Time_t stamp(static_cast<int32_t>(ns / 1000000000),
                                 static_cast<uint32_t>(ns % 1000000000));
    return Write(&sample, payload.size(), &stamp);
  }

  absl::Status PublishMessage(const google::protobuf::MessageLite& message,
                              Correlation correlation) override {
    const size_t size = message.ByteSizeLong();
    if (absl::Status s = CheckSize(size); !s.ok()) return s;
    FrameSample sample;
    sample.message = &message;
    sample.message_size = static_cast<uint32_t>(size);
    sample.header = Header(correlation);
    return Write(&sample, size);
  }

  void on_publication_matched(fdds::DataWriter*,
                              const fdds::PublicationMatchedStatus& status) override {
    HandoffFence();
    const frtps::GUID_t reader = frtps::iHandle2GUID(status.last_subscription_handle);
    if (reader.guidPrefix == own_prefix_) return;  // our own reader
    matched_remote_.fetch_add(status.current_count_change, std::memory_order_acq_rel);
  }

  void on_offered_incompatible_qos(
      fdds::DataWriter*, const fdds::OfferedIncompatibleQosStatus& status) override {
    HandoffFence();
    AERROR << "channel \"" << channel_->channel << "\": a reader in another process asks for more "
           << "than this process's writer offers (" << qos_.ToString()
           << "; DDS QoS policy id " << status.last_policy_id
           << "): they do not exchange messages; give both ends the same qos_profile";
  }

 private:
  absl::Status CheckSize(size_t size) {
    const uint32_t shared = qos_.data_sharing_max_bytes;
    if (size <= max_bytes_ && (shared == 0 || size <= shared)) return absl::OkStatus();
    channel_->send_failures.fetch_add(1, std::memory_order_relaxed);
    if (shared > 0 && size > shared) {
      return absl::InvalidArgumentError(absl::StrCat(
          "channel \"", channel_->channel, "\": a message of ", size,
          " bytes is larger than the channel's data sharing bound of ", shared,
          " bytes (ChannelQos::data_sharing_max_bytes); not sent"));
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "channel \"", channel_->channel, "\": a message of ", size,
        " bytes is larger than the transport's limit of ", max_bytes_,
        " bytes (DdsTransportOptions::max_message_bytes); not sent"));
  }

  FrameHeader Header(Correlation correlation) {
    FrameHeader header;
    header.kind = static_cast<FrameKind>(correlation.kind);
    header.sequence = sequence_.fetch_add(1, std::memory_order_relaxed) + 1;
    header.sent_ns = MonotonicNs();
    header.correlation_client = correlation.client;
    header.correlation_sequence = correlation.sequence;
    header.budget_ns = correlation.budget_ns;
    header.status = correlation.status;
    return header;
  }

  // Hands `sample` to DDS (which serializes it in this call).
  // `payload_bytes` (the message's, without the frame header) is counted
  // once the sample is sent.
  // `stamp`: the source timestamp to send (null: now).
  absl::Status Write(FrameSample* sample, size_t payload_bytes,
                     const eprosima::fastrtps::Time_t* stamp = nullptr) {
    // Held across the write: Detach() waits for it. DataWriter::write
    // serializes writers of one DataWriter anyway.
    MutexLock lock(&mu_);
    if (writer_ == nullptr) {
      channel_->send_failures.fetch_add(1, std::memory_order_relaxed);
      return absl::FailedPreconditionError(absl::StrCat(
          "channel \"", channel_->channel, "\": the transport is shut down; not sent"));
    }
    const bool written =
        stamp == nullptr
            ? writer_->write(sample)
            : writer_->write_w_timestamp(sample, fdds::HANDLE_NIL, *stamp) == ReturnCode::RETCODE_OK;
    if (!written) {
      channel_->send_failures.fetch_add(1, std::memory_order_relaxed);
      return absl::UnavailableError(absl::StrCat(
          "channel \"", channel_->channel, "\": DDS refused the sample (history full for "
          "longer than 10 ms, or the message changed while it was sent)"));
    }
    channel_->sent.fetch_add(1, std::memory_order_relaxed);
    channel_->bytes_sent.fetch_add(payload_bytes, std::memory_order_relaxed);
    return absl::OkStatus();
  }

  const std::shared_ptr<ChannelState> channel_;
  const ChannelQos qos_;
  const size_t max_bytes_;
  const frtps::GuidPrefix_t own_prefix_;
  std::atomic<uint64_t> sequence_{0};
  std::atomic<int> matched_remote_{0};
  std::atomic<bool> closed_{false};
  Mutex mu_;
  fdds::DataWriter* writer_ ABSL_GUARDED_BY(mu_) = nullptr;
};

}  // namespace dds
}  // namespace cyber

#endif  // CYBER_TRANSPORT_DDS_DDS_PUBLISHER_H_
