// MemoryUsage: this process's resident set (VmRSS, VmHWM from
// /proc/self/status) and glibc malloc's own figures (mallinfo2), and
// MemoryGrowth: how much of it grew after a warm-up — the soak's "no memory
// growth" check.
//
// Why RSS: a leak can hide anywhere (malloc, mmapped coroutine stacks, thread
// stacks); RSS is what an operator watching a robot's process sees.
//
// Why also "live" memory = VmRSS - malloc's free pool (held - in use): under
// churn that allocates a new object before freeing the old one (a new
// TimerCore per Configure()/new Timer, ~9 KiB each), glibc's arenas keep
// fragmented free chunks, and VmRSS climbs until that pool reaches its steady
// state — measured here: about one spare TimerCore per timer, reached only
// after some eight reconfigurations per timer, i.e. minutes for 100,000
// timers. Those freed chunks are not a leak and the climb stops; judging
// raw RSS would need a warm-up longer than CI's whole run. Live memory still
// rises by every byte a leak keeps (in-use heap grows, or the pool shrinks
// as the leak eats it, or non-heap pages grow), so the check keeps its
// teeth; both figures are reported, and --rss_basis=raw judges VmRSS itself.
//
// Linux only. ReadMemoryUsage() is thread-safe; MemoryGrowth is not (one
// sampling thread).

#ifndef TESTS_SOAK_MEMORY_USAGE_H_
#define TESTS_SOAK_MEMORY_USAGE_H_

#include <cstdint>
#include <vector>

#include "absl/time/time.h"

namespace cyber {
namespace soak {

struct MemoryUsage {
  int64_t rss_kib = -1;  // VmRSS; -1 if it could not be read
  int64_t hwm_kib = -1;  // VmHWM (peak RSS); -1 if it could not be read
  // Bytes malloc has handed out and not taken back, all arenas
  // (mallinfo2: uordblks + hblkhd); -1 if unknown (e.g. under a sanitizer,
  // whose allocator replaces glibc's).
  int64_t heap_in_use_kib = -1;
  // What malloc holds from the system (mallinfo2: arena + hblkhd): in use
  // plus the free chunks it keeps; -1 if unknown.
  int64_t heap_held_kib = -1;

  // VmRSS minus malloc's free pool; VmRSS if the heap figures are unknown.
  int64_t live_kib() const {
    if (rss_kib < 0 || heap_in_use_kib < 0 || heap_held_kib < 0) return rss_kib;
    return rss_kib - (heap_held_kib - heap_in_use_kib);
  }
};

MemoryUsage ReadMemoryUsage();

inline double KibToMib(int64_t kib) { return static_cast<double>(kib) / 1024.0; }

// Growth after a warm-up, on both bases: the first sample at or after the
// warm-up is the reference, growth = the largest later sample - reference.
class MemoryGrowth {
 public:
  struct Sample {
    double seconds;  // since the start
    MemoryUsage usage;
  };
  struct Basis {
    int64_t at_warmup_kib = -1;
    int64_t max_after_kib = -1;
    double GrowthMib() const {
      return at_warmup_kib < 0 ? 0.0 : KibToMib(max_after_kib - at_warmup_kib);
    }
  };

  explicit MemoryGrowth(absl::Duration warmup) : warmup_(warmup) {}

  // A sample taken `since` after the start.
  void Add(absl::Duration since, const MemoryUsage& usage);

  bool warm() const { return raw_.at_warmup_kib >= 0; }
  const Basis& raw() const { return raw_; }
  const Basis& live() const { return live_; }
  const std::vector<Sample>& samples() const { return samples_; }

 private:
  const absl::Duration warmup_;
  Basis raw_;
  Basis live_;
  std::vector<Sample> samples_;
};

}  // namespace soak
}  // namespace cyber

#endif  // TESTS_SOAK_MEMORY_USAGE_H_
