#include "tests/transport_bench/raw_bytes_type.h"

#include <cstring>

namespace cyber {
namespace transport_bench {
namespace {

// CDR encapsulation: representation identifier CDR_LE (0x0001), options 0.
constexpr unsigned char kEncapsulation[4] = {0x00, 0x01, 0x00, 0x00};
constexpr uint32_t kEncapsulationSize = sizeof(kEncapsulation);

}  // namespace

RawBytesType::RawBytesType() {
  setName("transport_bench::RawBytes");
  m_typeSize = 512;
  m_isGetKeyDefined = false;
}

bool RawBytesType::serialize(void* data,
                             eprosima::fastrtps::rtps::SerializedPayload_t* payload) {
  const auto* sample = static_cast<const RawSample*>(data);
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
