#include "tests/transport_bench/raw_bytes_type.h"

#include <cstring>

namespace cyber {
namespace transport_bench {
namespace {

// CDR encapsulation: representation identifier CDR_LE (0x0001), options 0.
constexpr unsigned char kEncapsulation[4] = {0x00, 0x01, 0x00, 0x00};
constexpr uint32_t kEncapsulationSize = sizeof(kEncapsulation);

}  // namespace

RawBytesType::RawBytesType(uint32_t max_bytes) : max_bytes_(max_bytes) {
  // The bounded type has a name of its own: a reader never matches a writer
  // of the other kind by accident.
  setName(max_bytes > 0 ? "transport_bench::BoundedRawBytes" : "transport_bench::RawBytes");
  // Rounded up to whole 4-byte words, as Fast-DDS pads samples.
  m_typeSize = max_bytes > 0 ? ((kEncapsulationSize + max_bytes + 3) & ~3u) : 512;
  m_isGetKeyDefined = false;
}

bool RawBytesType::serialize(void* data,
                             eprosima::fastrtps::rtps::SerializedPayload_t* payload) {
  const auto* sample = static_cast<const RawSample*>(data);
  if (max_bytes_ > 0 && sample->bytes.size() > max_bytes_) return false;
  const uint32_t needed = kEncapsulationSize + static_cast<uint32_t>(sample->bytes.size());
  if (payload->max_size < needed) payload->reserve(needed);
  std::memcpy(payload->data, kEncapsulation, kEncapsulationSize);
  std::memcpy(payload->data + kEncapsulationSize, sample->bytes.data(), sample->bytes.size());
  payload->length = needed;
  payload->encapsulation = CDR_LE;
  return true;
}

bool RawBytesType::deserialize(eprosima::fastrtps::rtps::SerializedPayload_t* payload,
                               void* data) {
  auto* sample = static_cast<RawSample*>(data);
  if (payload->length < kEncapsulationSize) {
    sample->bytes.clear();
    return true;
  }
  sample->bytes.assign(reinterpret_cast<const char*>(payload->data) + kEncapsulationSize,
                       payload->length - kEncapsulationSize);
  return true;
}

std::function<uint32_t()> RawBytesType::getSerializedSizeProvider(void* data) {
  const auto* sample = static_cast<const RawSample*>(data);
  return [sample] { return kEncapsulationSize + static_cast<uint32_t>(sample->bytes.size()); };
}

void* RawBytesType::createData() { return new RawSample(); }

void RawBytesType::deleteData(void* data) { delete static_cast<RawSample*>(data); }

bool RawBytesType::getKey(void*, eprosima::fastrtps::rtps::InstanceHandle_t*, bool) {
  return false;
}

}  // namespace transport_bench
}  // namespace cyber
