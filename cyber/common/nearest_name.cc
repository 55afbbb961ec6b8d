#include "cyber/common/nearest_name.h"

#include <algorithm>

namespace cyber {

size_t EditDistance(absl::string_view a, absl::string_view b) {
  // One row of the dynamic programme: row[j] is the distance between the
  // first i characters of `a` and the first j of `b`.
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];  // distance(a[0, i-1), b[0, j-1))
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      const size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      row[j] = std::min({above + 1, row[j - 1] + 1, substitute});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::optional<std::string> NearestName(absl::string_view wanted,
                                       const std::vector<std::string>& known) {
  const size_t limit = std::max<size_t>(2, wanted.size() / 3);
  std::optional<std::string> best;
  size_t best_distance = limit + 1;
  for (const std::string& name : known) {
    if (name == wanted) continue;
    // Too different in length to be near enough: skip the programme.
    const size_t length_gap =
        name.size() > wanted.size() ? name.size() - wanted.size() : wanted.size() - name.size();
    if (length_gap > limit) continue;
    const size_t d = EditDistance(wanted, name);
    if (d < best_distance || (d == best_distance && best.has_value() && name < *best)) {
      best_distance = d;
      best = name;
    }
  }
  return best;
}

}  // namespace cyber
