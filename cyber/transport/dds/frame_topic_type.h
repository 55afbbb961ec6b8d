// FrameTopicType: the DDS type of every channel — one opaque frame
// (sample_frame.h) per sample — registered under the channel's protobuf
// full name.
//
// Why one opaque type instead of a generated one per message: protobuf
// already defines the wire form of every message, and the DDS type name
// (the protobuf full name) is what makes DDS match a writer only with
// readers of the same message. The CDR payload is the 4-byte encapsulation
// header (plain CDR, little-endian) followed by the frame's bytes. Samples
// have no key: one instance per topic.
//
// Bounded (`max_message_bytes` > 0): is_bounded() is true and every pooled
// payload is sized for a frame of that message size, which is what
// Fast-DDS needs to share a writer's history with same-host readers (data
// sharing, channel_qos.h). The publisher refuses larger messages first.
//
// Parsing where the sample arrived: a reader that takes parsed messages
// names its prototype in the sample it takes into (FrameSample::parse_as,
// set before each take), and deserialize() parses a message frame straight
// from Fast-DDS's payload (its history, or a writer's data-sharing pool,
// whose node the writer may overwrite at any time: Fast-DDS checks after
// this call and drops a sample overwritten meanwhile) into a new message of
// that type, instead of copying the frame's bytes out for the reader to
// parse: one copy of the message fewer. A reader that takes bytes (a
// service's, the graph's, a lockstep inlet's) leaves parse_as null and
// gets the bytes; the choice is each take's, so readers of one type in one
// process choose independently. A frame that does not parse is copied as
// bytes (the reader then reports it). A sample the reader will drop
// unread (its own process wrote it: FrameSample::discard) is neither
// parsed nor copied.
//
// Threads: as any TopicDataType (Fast-DDS calls it from its own threads).

#ifndef CYBER_TRANSPORT_DDS_FRAME_TOPIC_TYPE_H_
#define CYBER_TRANSPORT_DDS_FRAME_TOPIC_TYPE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <fastdds/dds/topic/TopicDataType.hpp>

#include "cyber/transport/dds/sample_frame.h"
#include "google/protobuf/message_lite.h"

namespace cyber {
namespace dds {

// One sample. Received: the frame's bytes. Sent: either `bytes` (a frame
// built by the caller), or a header and a protobuf message that serialize()
// writes straight into Fast-DDS's payload, the message's only copy on the
// way out (`message_size` is its ByteSizeLong(), taken just before).
// Received and parsed (`parse_as` set): `parsed`, its frame's `header` and
// `payload_size`, and no bytes.
struct FrameSample {
  std::string bytes;
  const google::protobuf::MessageLite* message = nullptr;
  uint32_t message_size = 0;
  FrameHeader header;
  std::shared_ptr<google::protobuf::MessageLite> parsed;
  size_t payload_size = 0;
  // Set by the reader before each take. `parse_as`: its prototype (message
  // frames are parsed into new messages of that type); null: the frame's
  // bytes are copied out. `discard`: the reader drops this sample unread
  // (this process wrote it), so it is neither parsed nor copied.
  const google::protobuf::MessageLite* parse_as = nullptr;
  bool discard = false;
};

class FrameTopicType final : public eprosima::fastdds::dds::TopicDataType {
 public:
  // `max_message_bytes` 0: unbounded.
  explicit FrameTopicType(const std::string& type_name, uint32_t max_message_bytes = 0);

  bool is_bounded() const override { return max_message_bytes_ > 0; }
  uint32_t max_message_bytes() const { return max_message_bytes_; }

  // Message frames parsed where they arrived, and samples discarded
  // unread (FrameSample::discard), since construction: for tests and
  // diagnostics.
  uint64_t parsed() const { return parsed_.load(std::memory_order_relaxed); }
  uint64_t discarded() const { return discarded_.load(std::memory_order_relaxed); }

  bool serialize(void* data,
                 eprosima::fastrtps::rtps::SerializedPayload_t* payload) override;
  bool deserialize(eprosima::fastrtps::rtps::SerializedPayload_t* payload,
                   void* data) override;
  std::function<uint32_t()> getSerializedSizeProvider(void* data) override;
  void* createData() override;
  void deleteData(void* data) override;
  bool getKey(void* data, eprosima::fastrtps::rtps::InstanceHandle_t* handle,
              bool force_md5) override;

 private:
  const uint32_t max_message_bytes_;
  std::atomic<uint64_t> parsed_{0};
  std::atomic<uint64_t> discarded_{0};
};

}  // namespace dds
}  // namespace cyber

#endif  // CYBER_TRANSPORT_DDS_FRAME_TOPIC_TYPE_H_
