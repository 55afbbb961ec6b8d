// Internal to this repository: not part of the API (docs/api.md lists the
// API headers); its Bazel target is visible only inside this repository.
//
// NearestName: "did you mean ...?" for a name that is not known — a
// service a client calls that nobody serves, say — among the names that
// are: the known name fewest single-character edits away (insertions,
// deletions, substitutions: the Levenshtein distance), if it is near
// enough to be a typo.
//
// Near enough: at most max(2, |wanted| / 3) edits, so "/planing/route"
// finds "/planning/route" but "/route" does not find "/planning/route"
// (a different name, not a typo of it). Of equally near names the first
// in sorted order wins, so the suggestion does not depend on the order
// the caller found the names in. `wanted` itself is never suggested.
//
// Cost: O(|wanted| * |name|) time per known name, O(|name|) space; meant
// for error paths and start-up checks, not for hot paths.
//
// Threads: a pure function.

#ifndef CYBER_COMMON_NEAREST_NAME_H_
#define CYBER_COMMON_NEAREST_NAME_H_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace cyber {

// The Levenshtein distance between `a` and `b`.
size_t EditDistance(absl::string_view a, absl::string_view b);

// The name of `known` nearest to `wanted` (see the header comment), or
// nullopt if none is near enough.
std::optional<std::string> NearestName(absl::string_view wanted,
                                       const std::vector<std::string>& known);

}  // namespace cyber

#endif  // CYBER_COMMON_NEAREST_NAME_H_
