// SimulatedGraph::TraceDigest(): what two runs compare (mainboard prints
// it as "trace digest: <16 hex>", graph tests assert it equal across runs).

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "cyber/simulation/simulated_graph.h"

namespace cyber {

std::string SimulatedGraph::TraceDigest() const {
  // FNV-1a, 64 bits, over each event's instant (ns since the start, the
  // machine's byte order), component name with its terminating NUL, and
  // outcome byte.
  constexpr uint64_t kOffsetBasis = 1469598103934665603ull;
  constexpr uint64_t kPrime = 1099511628211ull;
  uint64_t h = kOffsetBasis;
  auto mix = [&h](const void* data, size_t n) {
    const unsigned char* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) {
      h ^= p[i];
      h *= kPrime;
    }
  };
  for (const ProcEvent& e : Trace()) {
    const int64_t at = absl::ToInt64Nanoseconds(e.at);
    mix(&at, sizeof(at));
    mix(e.component.data(), e.component.size() + 1);
    const char ok = e.ok ? 1 : 0;
    mix(&ok, 1);
  }
  char out[17];
  std::snprintf(out, sizeof(out), "%016llx", static_cast<unsigned long long>(h));
  return out;
}

}  // namespace cyber
