#include "cyber/transport/loan/shared_bytes.h"

namespace cyber {

std::shared_ptr<const SharedBytes> SharedBytes::Copy(absl::string_view bytes) {
  auto owned = std::make_shared<const std::string>(bytes);
  const auto* data = reinterpret_cast<const uint8_t*>(owned->data());
  const size_t size = owned->size();
  return std::make_shared<const SharedBytes>(data, size, std::move(owned));
}

}  // namespace cyber
