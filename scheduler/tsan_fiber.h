// Internal to this repository: not part of the API (docs/api.md lists the
// API headers); its Bazel target is visible only inside this repository.
//
// Announcements of stack switches to ThreadSanitizer. Boost 1.74 has no TSan
// support, so each coroutine context is registered as a TSan fiber and every
// switch is announced right before it happens. Compiles to nothing in other
// builds. Internal to scheduler/.

#ifndef SCHEDULER_TSAN_FIBER_H_
#define SCHEDULER_TSAN_FIBER_H_

#if defined(__SANITIZE_THREAD__)
#define CYBER_TSAN_FIBERS 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CYBER_TSAN_FIBERS 1
#endif
#endif

#if defined(CYBER_TSAN_FIBERS)
#include <sanitizer/tsan_interface.h>
#endif

namespace cyber {
namespace scheduler {
namespace tsan_fiber {

#if defined(CYBER_TSAN_FIBERS)
inline void* Create() { return __tsan_create_fiber(0); }
inline void Destroy(void* f) { __tsan_destroy_fiber(f); }
inline void* Current() { return __tsan_get_current_fiber(); }
inline void SwitchTo(void* f) { __tsan_switch_to_fiber(f, 0); }
#else
inline void* Create() { return nullptr; }
inline void Destroy(void*) {}
inline void* Current() { return nullptr; }
inline void SwitchTo(void*) {}
#endif

}  // namespace tsan_fiber
}  // namespace scheduler
}  // namespace cyber

#endif  // SCHEDULER_TSAN_FIBER_H_
