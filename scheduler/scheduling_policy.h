// Internal to this repository: not part of the API (docs/api.md lists the
// API headers); its Bazel target is visible only inside this repository.
//
// SchedulingPolicy: which ready routine a processor runs next.
//
// Why separate: the mechanism (threads, stacks, switching, waking idle
// processors) is the same for every policy; only the choice differs. A policy
// is a small data structure with no locks and no threads of its own: its
// ProcessorGroup calls it under the group's lock, so policies are trivially
// testable and swappable.
//
// ClassicPolicy (the default, after Cyber RT's "classic"): priority levels
// 0..kMaxPriority-1 shared by all processors of a group, higher first, FIFO
// within a level; a routine pinned to a processor waits in that processor's
// own queue, which the processor checks before the shared levels.

#ifndef SCHEDULER_SCHEDULING_POLICY_H_
#define SCHEDULER_SCHEDULING_POLICY_H_

#include <array>
#include <cstddef>
#include <memory>
#include <vector>

#include "scheduler/config/scheduler_config.h"
#include "scheduler/croutine.h"
#include "scheduler/ring_queue.h"

namespace cyber {
namespace scheduler {

// Priority levels 0..kMaxTaskPriority, as the conf files allow.
inline constexpr int kMaxPriority = kMaxTaskPriority + 1;
static_assert(kMinTaskPriority == 0, "levels are indexed from 0");

class SchedulingPolicy {
 public:
  virtual ~SchedulingPolicy() = default;
  // Adds a ready routine.
  virtual void Push(std::shared_ptr<CRoutine> routine) = 0;
  // The routine processor `processor` should run next, or null if none.
  virtual std::shared_ptr<CRoutine> Pop(int processor) = 0;
  // Ready routines held.
  virtual size_t size() const = 0;
};

class ClassicPolicy final : public SchedulingPolicy {
 public:
  explicit ClassicPolicy(int processors) : pinned_(processors) {}

  void Push(std::shared_ptr<CRoutine> routine) override;
  std::shared_ptr<CRoutine> Pop(int processor) override;
  size_t size() const override { return size_; }

  // Clamps a requested priority into [0, kMaxPriority).
  static int ClampPriority(int priority);

 private:
  // Rings, not deques: queueing allocates nothing in the steady state.
  std::array<RingQueue<std::shared_ptr<CRoutine>>, kMaxPriority> levels_;
  std::vector<RingQueue<std::shared_ptr<CRoutine>>> pinned_;
  size_t size_ = 0;
};

}  // namespace scheduler
}  // namespace cyber

#endif  // SCHEDULER_SCHEDULING_POLICY_H_
