#include "tests/soak/memory_usage.h"

#include <malloc.h>

#include <algorithm>
#include <cstdio>

namespace cyber {
namespace soak {

MemoryUsage ReadMemoryUsage() {
  MemoryUsage usage;
  if (std::FILE* f = std::fopen("/proc/self/status", "r"); f != nullptr) {
    char line[256];
    while (std::fgets(line, sizeof(line), f) != nullptr) {
      long long kib = 0;
      // Lines look like "VmRSS:\t  123456 kB".
      if (std::sscanf(line, "VmRSS: %lld kB", &kib) == 1) {
        usage.rss_kib = kib;
      } else if (std::sscanf(line, "VmHWM: %lld kB", &kib) == 1) {
        usage.hwm_kib = kib;
      }
    }
    std::fclose(f);
  }
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  const struct mallinfo2 mi = mallinfo2();
  // Zero when another allocator replaces glibc's (the sanitizers' do): then
  // the figures are unknown and live memory falls back to VmRSS.
  if (mi.arena + mi.hblkhd > 0) {
    usage.heap_in_use_kib = static_cast<int64_t>((mi.uordblks + mi.hblkhd) / 1024);
    usage.heap_held_kib = static_cast<int64_t>((mi.arena + mi.hblkhd) / 1024);
  }
#endif
  return usage;
}

void MemoryGrowth::Add(absl::Duration since, const MemoryUsage& usage) {
  samples_.push_back({absl::ToDoubleSeconds(since), usage});
  if (since < warmup_ || usage.rss_kib < 0) return;
  const auto add = [](Basis* b, int64_t kib) {
    if (b->at_warmup_kib < 0) b->at_warmup_kib = kib;
    b->max_after_kib = std::max(b->max_after_kib, kib);
  };
  add(&raw_, usage.rss_kib);
  add(&live_, usage.live_kib());
}

}  // namespace soak
}  // namespace cyber
