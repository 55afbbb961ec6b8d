// InlineScope: marks the calling thread as inside lockstep work that runs
// on whatever thread delivered its cause (a grant published by the
// coordinator, a step run by a member on the transport's thread).
//
// Why: between participants of one process, Fast-DDS delivers on the
// writer's thread, inside write(). A grant published under the
// coordinator's lock would then run a member's step, whose report would
// come back to the coordinator on the same thread: its lock taken twice,
// or steps nested without end. So work that would run inline checks
// InlineScope::active() first and, inside one, hands over to its own
// thread instead. Between processes nothing nests and every step runs
// inline.

#ifndef CYBER_LOCKSTEP_INLINE_SCOPE_H_
#define CYBER_LOCKSTEP_INLINE_SCOPE_H_

namespace cyber {
namespace lockstep {

class InlineScope {
 public:
  InlineScope() { ++depth_; }
  ~InlineScope() { --depth_; }
  InlineScope(const InlineScope&) = delete;
  InlineScope& operator=(const InlineScope&) = delete;

  // Whether the calling thread is inside one.
  static bool active() { return depth_ > 0; }

 private:
  static inline thread_local int depth_ = 0;
};

}  // namespace lockstep
}  // namespace cyber

#endif  // CYBER_LOCKSTEP_INLINE_SCOPE_H_
