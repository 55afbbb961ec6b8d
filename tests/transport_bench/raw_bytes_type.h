// RawBytesType: the smallest Fast-DDS TopicDataType that carries bytes —
// the bare-DDS baseline of the benchmark.
//
// Why it mirrors cyber/transport/dds/frame_topic_type.h instead of being an
// IDL-generated sequence<octet>: the baseline must differ from our path
// only by what our path adds (protobuf, the frame header, the hand-over to
// a scheduler routine), not by how Fast-DDS sizes and pools payloads. So:
// a std::string per sample, the 4-byte CDR encapsulation then the bytes,
// no key, an initial payload size of 512 bytes that grows on demand (the
// endpoints use PREALLOCATED_WITH_REALLOC, as ours do).
//
// Bounded (`max_bytes` > 0), for the data-sharing baseline: Fast-DDS
// shares a writer's history with same-host readers only for a type whose
// is_bounded() is true, and sizes each pooled sample by m_typeSize, so the
// type declares the largest sample it carries and serialize() refuses a
// larger one.
//
// Threads: immutable after construction; Fast-DDS calls it from its threads.

#ifndef TESTS_TRANSPORT_BENCH_RAW_BYTES_TYPE_H_
#define TESTS_TRANSPORT_BENCH_RAW_BYTES_TYPE_H_

#include <cstdint>
#include <functional>
#include <string>

#include <fastdds/dds/topic/TopicDataType.hpp>

namespace cyber {
namespace transport_bench {

struct RawSample {
  std::string bytes;
};

class RawBytesType final : public eprosima::fastdds::dds::TopicDataType {
 public:
  // `max_bytes` 0: unbounded (payloads grow on demand).
  explicit RawBytesType(uint32_t max_bytes = 0);

  bool is_bounded() const override { return max_bytes_ > 0; }
  bool serialize(void* data, eprosima::fastrtps::rtps::SerializedPayload_t* payload) override;
  bool deserialize(eprosima::fastrtps::rtps::SerializedPayload_t* payload, void* data) override;
  std::function<uint32_t()> getSerializedSizeProvider(void* data) override;
  void* createData() override;
  void deleteData(void* data) override;
  bool getKey(void* data, eprosima::fastrtps::rtps::InstanceHandle_t* handle,
              bool force_md5) override;

 private:
  const uint32_t max_bytes_;
};

}  // namespace transport_bench
}  // namespace cyber

#endif  // TESTS_TRANSPORT_BENCH_RAW_BYTES_TYPE_H_
