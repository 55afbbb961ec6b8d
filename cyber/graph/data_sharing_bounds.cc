#include "cyber/graph/data_sharing_bounds.h"

#include "absl/strings/str_cat.h"

namespace cyber {
namespace graph {

std::optional<std::string> DataSharingBoundMismatch(const std::string& channel,
                                                    const BoundedEndpoint& writer,
                                                    const BoundedEndpoint& reader) {
  const uint32_t r = reader.data_sharing_max_bytes;
  const uint32_t w = writer.data_sharing_max_bytes;
  if (r == 0 || (w != 0 && w <= r)) return std::nullopt;
  return absl::StrCat(
      "channel \"", channel, "\": reader ", reader.name, " has data_sharing_max_bytes ", r,
      " and writer ", writer.name,
      w == 0 ? std::string(" has none") : absl::StrCat(" has ", w), ": the writer's messages over ",
      r, " bytes are dropped by the reader's DDS before they reach it, uncounted; give both the "
      "same data_sharing_max_bytes");
}

}  // namespace graph
}  // namespace cyber
