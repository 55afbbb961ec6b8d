// Internal to this repository: not part of the API (docs/api.md lists the
// API headers); its Bazel target is visible only inside this repository.
//
// AllocationCounter: counts calls of the global operator new, process-wide,
// so a test or a benchmark can say "this path allocated nothing".
//
// Why a replacement of operator new and not a malloc hook: glibc 2.34
// removed __malloc_hook, and the fire path's allocations (std::function
// captures, make_shared, map nodes) all go through operator new. Linking
// this library (alwayslink) replaces the global operator new/delete of the
// binary; the replacements call malloc/free, which the sanitizers still
// intercept, so they work in every config.
//
// Counting is across every thread (the fire path spans the tick thread and
// the scheduler's processors): keep other threads of the test quiet in the
// measured window.
//
// Threads: everything from any thread.

#ifndef CYBER_TESTING_ALLOCATION_COUNTER_H_
#define CYBER_TESTING_ALLOCATION_COUNTER_H_

#include <cstdint>

namespace cyber {
namespace testing {

// Calls of any global operator new (every form) since the process started.
uint64_t AllocationsSoFar();

// Allocations between its construction and Count().
class AllocationWindow {
 public:
  AllocationWindow() : start_(AllocationsSoFar()) {}
  uint64_t Count() const { return AllocationsSoFar() - start_; }

 private:
  const uint64_t start_;
};

}  // namespace testing
}  // namespace cyber

#endif  // CYBER_TESTING_ALLOCATION_COUNTER_H_
