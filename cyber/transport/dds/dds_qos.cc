#include "cyber/transport/dds/dds_qos.h"

#include <algorithm>
#include <cstdint>

namespace cyber {
namespace dds {
namespace {

namespace fdds = eprosima::fastdds::dds;

// The policies a writer and a reader share, on either kind of QoS.
template <typename Qos>
void ApplyCommon(const ChannelQos& qos, Qos* out) {
  const int32_t depth = static_cast<int32_t>(std::max<uint32_t>(qos.depth, 1));
  out->reliability().kind = qos.reliability == ChannelQos::Reliability::kReliable
                                ? fdds::RELIABLE_RELIABILITY_QOS
                                : fdds::BEST_EFFORT_RELIABILITY_QOS;
  out->durability().kind = qos.durability == ChannelQos::Durability::kTransientLocal
                               ? fdds::TRANSIENT_LOCAL_DURABILITY_QOS
                               : fdds::VOLATILE_DURABILITY_QOS;
  out->history().kind = qos.history == ChannelQos::History::kKeepLast
                            ? fdds::KEEP_LAST_HISTORY_QOS
                            : fdds::KEEP_ALL_HISTORY_QOS;
  out->history().depth = depth;
  out->resource_limits().max_instances = 1;
  out->resource_limits().max_samples_per_instance = depth;
  out->resource_limits().max_samples = depth;
  out->resource_limits().allocated_samples = std::min(depth, 16);
  out->endpoint().history_memory_policy =
      eprosima::fastrtps::rtps::PREALLOCATED_WITH_REALLOC_MEMORY_MODE;
  // Data sharing only where the channel asks for it (its type is then
  // bounded); automatic: with a reader that cannot share (another host,
  // a reader that did not ask) the transports carry the message.
  if (qos.data_sharing_max_bytes > 0) {
    out->data_sharing().automatic();
    out->resource_limits().extra_samples = kExtraSharedSamples;
  } else {
    out->data_sharing().off();
  }
}

}  // namespace

fdds::DataWriterQos WriterQos(const ChannelQos& qos) {
  fdds::DataWriterQos out = fdds::DATAWRITER_QOS_DEFAULT;
  ApplyCommon(qos, &out);
  out.reliability().max_blocking_time = eprosima::fastrtps::Duration_t(0, 10'000'000);
  // Repairs in time on a lossy link (see dds_qos.h).
  out.reliable_writer_qos().times.heartbeatPeriod =
      eprosima::fastrtps::Duration_t(0, static_cast<uint32_t>(kHeartbeatPeriodNs));
  out.reliable_writer_qos().times.nackResponseDelay = eprosima::fastrtps::Duration_t(0, 0);
  return out;
}

fdds::DataReaderQos ReaderQos(const ChannelQos& qos) {
  fdds::DataReaderQos out = fdds::DATAREADER_QOS_DEFAULT;
  ApplyCommon(qos, &out);
  // A heartbeat that shows a gap is answered at once (see dds_qos.h).
  out.reliable_reader_qos().times.heartbeatResponseDelay = eprosima::fastrtps::Duration_t(0, 0);
  return out;
}

}  // namespace dds
}  // namespace cyber
