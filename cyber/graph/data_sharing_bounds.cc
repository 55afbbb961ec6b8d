#include "cyber/graph/data_sharing_bounds.h"

#include <set>

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

std::vector<std::string> DataSharingBoundMismatchesAmong(
    const std::string& channel, const std::vector<AnnouncedEndpoint>& endpoints) {
  std::set<std::string> said;
  for (const AnnouncedEndpoint& w : endpoints) {
    if (!w.writer) continue;
    for (const AnnouncedEndpoint& r : endpoints) {
      if (r.writer || r.process == w.process || r.type_name != w.type_name) continue;
      std::optional<std::string> mismatch = DataSharingBoundMismatch(
          channel, {absl::StrCat(w.process, " (", w.node, ")"), w.data_sharing_max_bytes},
          {absl::StrCat(r.process, " (", r.node, ")"), r.data_sharing_max_bytes});
      if (mismatch.has_value()) said.insert(*std::move(mismatch));
    }
  }
  return {said.begin(), said.end()};
}

}  // namespace graph
}  // namespace cyber
