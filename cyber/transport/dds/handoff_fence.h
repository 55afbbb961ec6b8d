// HandoffFence: a happens-before edge ThreadSanitizer can see, where
// Fast-DDS orders two of our accesses with its own locks. Compiled only
// under TSan; in every other build it is an empty inline function.
//
// Why: libfastrtps is not built with TSan. It hands our listener objects to
// its threads, and recycles the payload buffers our FrameTopicType writes
// (serialize, on the writer's thread) and reads (deserialize, on a reader's
// thread), under locks inside the library that TSan cannot see; TSan then
// reports our accesses as races although Fast-DDS orders them. Each such
// access passes this fence: an object handed to Fast-DDS at the end of its
// constructor and each callback at its start; serialize and deserialize
// before and after touching the buffer. Under TSan the edge runs through a
// lock TSan sees (one process-wide mutex, because a member mutex would
// itself be written by the constructor it must order). It adds no ordering
// Fast-DDS does not already give (the C++ memory model is satisfied by its
// locks), which is why release builds need none of it.
//
// Threads: any.

#ifndef CYBER_TRANSPORT_DDS_HANDOFF_FENCE_H_
#define CYBER_TRANSPORT_DDS_HANDOFF_FENCE_H_

#if defined(__SANITIZE_THREAD__)
#define CYBER_DDS_HANDOFF_FENCE 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CYBER_DDS_HANDOFF_FENCE 1
#endif
#endif

#if defined(CYBER_DDS_HANDOFF_FENCE)
#include <mutex>
#endif

namespace cyber {
namespace dds {

#if defined(CYBER_DDS_HANDOFF_FENCE)
inline void HandoffFence() {
  static std::mutex fence;  // constant-initialized
  std::lock_guard<std::mutex> lock(fence);
}
#else
inline void HandoffFence() {}
#endif

}  // namespace dds
}  // namespace cyber

#endif  // CYBER_TRANSPORT_DDS_HANDOFF_FENCE_H_
