// Internal to cyber/transport/dds: the inlet of one channel (a DataReader on its
// topic, samples handed to the channel's handler): what
// RemoteTransport::Subscribe returns.

#ifndef CYBER_TRANSPORT_DDS_DDS_SUBSCRIPTION_H_
#define CYBER_TRANSPORT_DDS_DDS_SUBSCRIPTION_H_

#include <cstring>
#include <map>
#include <optional>
#include <string>

#include <fastrtps/xmlparser/XMLProfileManager.h>

#include "cyber/transport/dds/dds_participant.h"

namespace cyber {
namespace dds {


// The DataReader's listener. Fast-DDS 2.9 may still be inside a listener
// call while delete_datareader runs (eProsima/Fast-DDS#3303; seen here by
// tsan as a callback locking `mu_` of a deleted listener), so a closed one
// is kept by the transport until its participant is deleted
// (DdsTransport::Impl::CloseSubscription); it answers nothing after Detach.
class SubscriptionImpl final : public fdds::DataReaderListener {
 public:
  // `prototype`: the reader takes messages parsed into new messages of
  // its type (null: the frames' bytes).
  SubscriptionImpl(DdsTransport::Impl* impl, std::shared_ptr<ChannelState> channel,
                   ChannelQos qos, const google::protobuf::MessageLite* prototype,
                   RemoteTransport::SampleHandler handler)
      : impl_(impl),
        channel_(std::move(channel)),
        qos_(qos),
        own_prefix_(impl_->own_prefix()),
        discard_own_(
            eprosima::fastrtps::xmlparser::XMLProfileManager::library_settings()
                .intraprocess_delivery == eprosima::fastrtps::INTRAPROCESS_FULL),
        prototype_(prototype),
        handler_(std::move(handler)) {
    HandoffFence();
  }

  void Attach(fdds::DataReader* reader) {
    MutexLock lock(&mu_);
    reader_ = reader;
  }

  // No handler call runs after this returns; returns the DataReader for
  // deletion.
  fdds::DataReader* Detach() {
    MutexLock lock(&mu_);
    closed_ = true;
    return std::exchange(reader_, nullptr);
  }

  // After Detach: lets go of the handler and what it holds (a retired
  // listener must not keep a channel's state alive). Not under the
  // transport's locks: what the handler holds may call into it.
  void ReleaseHandler() {
    RemoteTransport::SampleHandler handler;  // destroyed outside the lock
    MutexLock lock(&mu_);
    handler = std::move(handler_);
    handler_ = nullptr;
  }

  // Samples this process wrote (Fast-DDS matches its own readers and
  // writers) are dropped unread: when the process writes the channel, each
  // take first looks at whose the next sample is, and one of its own is
  // taken without a parse or a copy (FrameSample::discard). That look names
  // the sample the take takes only while Fast-DDS delivers this process's
  // samples in-process (its intraprocess delivery, on unless a profile or
  // the library settings turn it off: `discard_own_`): a take steps over a
  // sample it cannot hand out yet (a data-sharing sample overwritten
  // meanwhile, one that arrived ahead of a gap), which an in-process sample
  // never is, so an own sample at the front is the one taken. Without it,
  // own samples are parsed and dropped. A sample looked at as own and taken
  // as another's would be lost: it is counted lost and named, not dropped
  // silently. Fast-DDS 2.9 calls this for one reader with that reader's
  // lock held, so calls do not overlap and no sample comes between the look
  // and the take; `take_mu_` keeps them together whatever Fast-DDS does.
  void on_data_available(fdds::DataReader* reader) override {
    HandoffFence();
    MutexLock take(&take_mu_);
    FrameSample sample;
    sample.parse_as = prototype_;
    fdds::SampleInfo info;
    fdds::SampleInfo next;
    while (true) {
      sample.discard = false;
      if (discard_own_ && channel_->written_here.load(std::memory_order_acquire)) {
        if (reader->get_first_untaken_info(&next) != ReturnCode::RETCODE_OK) return;
        sample.discard = next.valid_data &&
                         next.sample_identity.writer_guid().guidPrefix == own_prefix_;
      }
      if (reader->take_next_sample(&sample, &info) != ReturnCode::RETCODE_OK) return;
      if (!info.valid_data) continue;
      const frtps::GUID_t writer = info.sample_identity.writer_guid();
      const bool own = writer.guidPrefix == own_prefix_;
      MutexLock lock(&mu_);
      if (closed_) return;
      if (own) continue;
      if (sample.discard) {
        channel_->lost.fetch_add(1, std::memory_order_relaxed);
        AERROR_EVERY(100) << "channel \"" << channel_->channel << "\": a sample from "
                          << impl_->PeerName(writer.guidPrefix)
                          << " was taken where this process's own was expected, and dropped "
                             "unread (counted lost)";
        continue;
      }
      Handle(writer, sample, info.source_timestamp);
    }
  }

  void on_sample_lost(fdds::DataReader*, const fdds::SampleLostStatus& status) override {
    HandoffFence();
    channel_->lost.fetch_add(static_cast<uint64_t>(std::max(status.total_count_change, 0)),
                             std::memory_order_relaxed);
  }

  void on_requested_incompatible_qos(
      fdds::DataReader*, const fdds::RequestedIncompatibleQosStatus& status) override {
    HandoffFence();
    AERROR << "channel \"" << channel_->channel << "\": a writer in another process offers less "
           << "than this process's reader asks for (" << qos_.ToString()
           << "; DDS QoS policy id " << status.last_policy_id
           << "): they do not exchange messages; give both ends the same qos_profile";
  }

 private:
  // `sample` as the type's deserialize() left it: parsed already (its
  // header and message), or the frame's bytes.
  void Handle(const frtps::GUID_t& writer, FrameSample& sample,
              const frtps::Time_t& source_time) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    RemoteSample remote;
    FrameHeader header;
    size_t payload_size = 0;
    if (sample.parsed != nullptr) {
      header = sample.header;
      payload_size = sample.payload_size;
      remote.message = std::move(sample.parsed);
    } else {
      absl::StatusOr<FrameView> frame = DecodeFrame(sample.bytes);
      if (!frame.ok()) {
        Drop(writer, frame.status().message());
        return;
      }
      header = frame->header;
      payload_size = frame->payload.size();
      remote.payload = frame->payload;
    }
    if (SameHost(writer.guidPrefix, own_prefix_) && header.sent_ns > 0) {
      const int64_t latency = MonotonicNs() - header.sent_ns;
      if (latency >= 0) {
        MutexLock lock(&channel_->latency_mu);
        channel_->latency.Record(absl::Nanoseconds(latency));
      }
    }
    remote.correlation.kind = static_cast<Correlation::Kind>(header.kind);
    remote.correlation.client = header.correlation_client;
    remote.correlation.sequence = header.correlation_sequence;
    remote.correlation.budget_ns = header.budget_ns;
    remote.correlation.status = header.status;
    remote.origin.sender = Sender(writer.guidPrefix);
    std::memcpy(remote.origin.writer_guid.data(), writer.guidPrefix.value, 12);
    std::memcpy(remote.origin.writer_guid.data() + 12, writer.entityId.value, 4);
    remote.origin.sequence = header.sequence;
    remote.origin.source_time_ns = source_time.to_ns();
    if (!handler_(remote)) {
      Drop(writer, remote.message != nullptr
                       ? absl::StrCat("the reader refused the message parsed as ",
                                      remote.message->GetTypeName(), " (", payload_size, " bytes)")
                       : absl::StrCat("the payload (", payload_size, " bytes) does not parse as ",
                                      channel_->type_name));
      return;
    }
    channel_->received.fetch_add(1, std::memory_order_relaxed);
    channel_->bytes_received.fetch_add(payload_size, std::memory_order_relaxed);
  }

  // The sending process, looked up once per peer (a GUID prefix names one
  // participant for its whole life).
  const RemotePeer* Sender(const frtps::GuidPrefix_t& prefix) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const std::string key = PrefixKey(prefix);
    auto it = senders_.find(key);
    if (it != senders_.end()) return &it->second;
    std::optional<RemotePeer> peer = impl_->PeerOf(prefix);
    if (!peer.has_value()) return nullptr;  // not discovered yet: asked again next time
    if (senders_.size() >= 256) senders_.clear();  // bounded: peers come and go
    return &senders_.emplace(key, *std::move(peer)).first->second;
  }

  void Drop(const frtps::GUID_t& writer, absl::string_view why) {
    const uint64_t n = channel_->dropped_undecodable.fetch_add(1, std::memory_order_relaxed) + 1;
    // The first few, then one in 100.
    if (n <= 5 || n % 100 == 0) {
      AERROR << "channel \"" << channel_->channel << "\": dropped a sample from "
             << impl_->PeerName(writer.guidPrefix) << ": " << why << " (" << n
             << " dropped so far on this channel)";
    }
  }

  // Alive while the subscription is open (its handle holds it); not used
  // after Detach.
  DdsTransport::Impl* const impl_;
  const std::shared_ptr<ChannelState> channel_;
  const ChannelQos qos_;
  const frtps::GuidPrefix_t own_prefix_;
  // Own samples are taken unread (see on_data_available).
  const bool discard_own_;
  const google::protobuf::MessageLite* const prototype_;
  // Held by on_data_available for its whole run (see there); before mu_.
  Mutex take_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  // Held while a handler runs (Detach waits for it).
  Mutex mu_;
  RemoteTransport::SampleHandler handler_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  fdds::DataReader* reader_ ABSL_GUARDED_BY(mu_) = nullptr;
  std::map<std::string, RemotePeer> senders_ ABSL_GUARDED_BY(mu_);
};

// What RemoteTransport::Subscribe returns: closing it detaches the
// listener and deletes the DataReader.
class SubscriptionHandle final : public RemoteSubscription {
 public:
  SubscriptionHandle(std::shared_ptr<DdsTransport::Impl> impl,
                     std::shared_ptr<SubscriptionImpl> sub)
      : impl_(std::move(impl)), sub_(std::move(sub)) {}
  ~SubscriptionHandle() override { impl_->CloseSubscription(sub_); }

 private:
  const std::shared_ptr<DdsTransport::Impl> impl_;
  const std::shared_ptr<SubscriptionImpl> sub_;
};

}  // namespace dds
}  // namespace cyber

#endif  // CYBER_TRANSPORT_DDS_DDS_SUBSCRIPTION_H_
