#include "cyber/transport/dds/frame_topic_type.h"

#include <cstring>
#include <limits>

#include "cyber/transport/dds/handoff_fence.h"

namespace cyber {
namespace dds {
namespace {

// CDR encapsulation: representation identifier CDR_LE (0x0001), options 0.
constexpr unsigned char kEncapsulation[4] = {0x00, 0x01, 0x00, 0x00};
constexpr uint32_t kEncapsulationSize = sizeof(kEncapsulation);

}  // namespace

FrameTopicType::FrameTopicType(const std::string& type_name) {
  setName(type_name.c_str());
  // The initial size of each pooled payload; larger frames grow it
  // (the endpoints use PREALLOCATED_WITH_REALLOC_MEMORY_MODE).
  m_typeSize = 512;
  m_isGetKeyDefined = false;
}

bool FrameTopicType::serialize(
    void* data, eprosima::fastrtps::rtps::SerializedPayload_t* payload) {
  const auto* sample = static_cast<const FrameSample*>(data);
  const size_t needed = kEncapsulationSize + sample->bytes.size();
  if (needed > std::numeric_limits<uint32_t>::max()) return false;
  HandoffFence();  // after the buffer's last reader (handoff_fence.h)
  if (payload->max_size < needed) payload->reserve(static_cast<uint32_t>(needed));
  std::memcpy(payload->data, kEncapsulation, kEncapsulationSize);
  if (!sample->bytes.empty()) {
    std::memcpy(payload->data + kEncapsulationSize, sample->bytes.data(),
                sample->bytes.size());
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
  return [sample] {
    return static_cast<uint32_t>(kEncapsulationSize + sample->bytes.size());
  };
}

void* FrameTopicType::createData() { return new FrameSample(); }

void FrameTopicType::deleteData(void* data) { delete static_cast<FrameSample*>(data); }

bool FrameTopicType::getKey(void*, eprosima::fastrtps::rtps::InstanceHandle_t*, bool) {
  return false;  // keyless
}

}  // namespace dds
}  // namespace cyber
