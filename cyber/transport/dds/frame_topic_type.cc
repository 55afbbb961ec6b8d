#include "cyber/transport/dds/frame_topic_type.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <new>

#include "cyber/transport/dds/handoff_fence.h"

namespace cyber {
namespace dds {
namespace {

// CDR encapsulation: representation identifier CDR_LE (0x0001), options 0.
constexpr unsigned char kEncapsulation[4] = {0x00, 0x01, 0x00, 0x00};
constexpr uint32_t kEncapsulationSize = sizeof(kEncapsulation);

// The frame's size in bytes: built, or header + message.
size_t FrameSize(const FrameSample& sample) {
  return sample.message != nullptr ? kFrameHeaderSize + sample.message_size
                                   : sample.bytes.size();
}

}  // namespace

FrameTopicType::FrameTopicType(const std::string& type_name, uint32_t max_message_bytes)
    : max_message_bytes_(max_message_bytes) {
  setName(type_name.c_str());
  // Unbounded: the initial size of each pooled payload; larger frames grow
  // it (the endpoints use PREALLOCATED_WITH_REALLOC_MEMORY_MODE). Bounded:
  // the largest frame, in whole 4-byte words (Fast-DDS pads samples).
  const uint64_t bounded =
      (uint64_t{kEncapsulationSize} + kFrameHeaderSize + max_message_bytes + 3) & ~uint64_t{3};
  m_typeSize = max_message_bytes > 0
                   ? static_cast<uint32_t>(std::min<uint64_t>(bounded, UINT32_MAX & ~3u))
                   : 512;
  m_isGetKeyDefined = false;
}

bool FrameTopicType::serialize(
    void* data, eprosima::fastrtps::rtps::SerializedPayload_t* payload) {
  const auto* sample = static_cast<const FrameSample*>(data);
  const size_t needed = kEncapsulationSize + FrameSize(*sample);
  if (needed > std::numeric_limits<uint32_t>::max()) return false;
  // Bounded: Fast-DDS's payload is a fixed-size pool node (reserve() would
  // realloc a pointer into it). The publisher refuses such a message first.
  if (max_message_bytes_ > 0 && needed > m_typeSize) return false;
  HandoffFence();  // after the buffer's last reader (handoff_fence.h)
  if (payload->max_size < needed) payload->reserve(static_cast<uint32_t>(needed));
  std::memcpy(payload->data, kEncapsulation, kEncapsulationSize);
  uint8_t* out = payload->data + kEncapsulationSize;
  if (sample->message != nullptr) {
    std::string header;
    AppendFrameHeader(sample->header, sample->message_size, &header);
    std::memcpy(out, header.data(), header.size());
    uint8_t* end = sample->message->SerializeWithCachedSizesToArray(out + header.size());
    if (end != out + header.size() + sample->message_size) return false;  // changed meanwhile
  } else if (!sample->bytes.empty()) {
    std::memcpy(out, sample->bytes.data(), sample->bytes.size());
  }
  payload->length = static_cast<uint32_t>(needed);
  payload->encapsulation = CDR_LE;
  HandoffFence();  // before the buffer's readers
  return true;
}

bool FrameTopicType::deserialize(
    eprosima::fastrtps::rtps::SerializedPayload_t* payload, void* data) {
  auto* sample = static_cast<FrameSample*>(data);
  HandoffFence();  // after the buffer's writer (handoff_fence.h)
  sample->parsed.reset();
  if (sample->discard) {
    sample->bytes.clear();
    discarded_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  const google::protobuf::MessageLite* prototype = sample->parse_as;
  if (prototype != nullptr && payload->length >= kEncapsulationSize) {
    absl::StatusOr<FrameView> frame = DecodeFrame(absl::string_view(
        reinterpret_cast<const char*>(payload->data) + kEncapsulationSize,
        payload->length - kEncapsulationSize));
    if (frame.ok() && frame->header.kind == FrameKind::kMessage &&
        frame->payload.size() <= static_cast<size_t>(std::numeric_limits<int>::max())) {
      // With data sharing the writer may be overwriting these bytes (keep
      // last): Fast-DDS drops the sample after this call if it was, so a
      // torn parse is never delivered, but it must not escape: a failure
      // (or an allocation that fails on torn lengths) falls back to the
      // copy. Partial, then checked: a message missing a required field
      // is not logged here, only by the reader that refuses it.
      try {
        std::shared_ptr<google::protobuf::MessageLite> message(prototype->New());
        if (message->ParsePartialFromArray(frame->payload.data(),
                                           static_cast<int>(frame->payload.size())) &&
            message->IsInitialized()) {
          sample->header = frame->header;
          sample->payload_size = frame->payload.size();
          sample->parsed = std::move(message);
          sample->bytes.clear();
          parsed_.fetch_add(1, std::memory_order_relaxed);
          HandoffFence();  // before the buffer is written again
          return true;
        }
      } catch (const std::bad_alloc&) {
      }
    }
  }
  if (payload->length < kEncapsulationSize) {
    sample->bytes.clear();
  } else {
    sample->bytes.assign(reinterpret_cast<const char*>(payload->data) + kEncapsulationSize,
                         payload->length - kEncapsulationSize);
  }
  HandoffFence();  // before the buffer is written again
  return true;  // an empty or short frame: DecodeFrame refuses and names it
}

std::function<uint32_t()> FrameTopicType::getSerializedSizeProvider(void* data) {
  const auto* sample = static_cast<const FrameSample*>(data);
  return [sample] { return static_cast<uint32_t>(kEncapsulationSize + FrameSize(*sample)); };
}

void* FrameTopicType::createData() { return new FrameSample(); }

void FrameTopicType::deleteData(void* data) { delete static_cast<FrameSample*>(data); }

bool FrameTopicType::getKey(void*, eprosima::fastrtps::rtps::InstanceHandle_t*, bool) {
  return false;  // keyless
}

}  // namespace dds
}  // namespace cyber
