// HandoffFence: a happens-before edge ThreadSanitizer can see, where
// Fast-DDS orders two of our accesses with its own locks.
//
// Why: libfastrtps is not built with TSan. It hands our listener objects to
// its threads, and recycles the payload buffers our FrameTopicType writes
// (serialize, on the writer's thread) and reads (deserialize, on a reader's
// thread), under locks inside the library that TSan cannot see; TSan then
// reports our accesses as races although Fast-DDS orders them. Each such
// access passes this fence: an object handed to Fast-DDS at the end of its
// constructor and each callback at its start; serialize and deserialize
// before and after touching the buffer. The edge then runs through a lock
// TSan sees. It adds no ordering Fast-DDS does not already give (the C++
// memory model is satisfied by its locks); it costs one uncontended lock,
// a few tens of nanoseconds, per call. One process-wide mutex, because a
// member mutex would itself be written by the constructor it must order.
//
// Threads: any.

#ifndef CYBER_TRANSPORT_DDS_HANDOFF_FENCE_H_
#define CYBER_TRANSPORT_DDS_HANDOFF_FENCE_H_

#include <mutex>

namespace cyber {
namespace dds {

inline void HandoffFence() {
  static std::mutex fence;  // constant-initialized
  std::lock_guard<std::mutex> lock(fence);
}

}  // namespace dds
}  // namespace cyber

#endif  // CYBER_TRANSPORT_DDS_HANDOFF_FENCE_H_
