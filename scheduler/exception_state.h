// Internal to this repository: not part of the API (docs/api.md lists the
// API headers); its Bazel target is visible only inside this repository.
//
// ExceptionState: the C++ runtime's per-thread record of exceptions, carried
// by the routine whose stack it describes.
//
// Why: the Itanium C++ ABI's runtime (gcc's libsupc++, LLVM's libc++abi)
// keeps, per thread, the exceptions being handled (a stack through the
// exception objects of the catch handlers not yet ended: what
// std::current_exception() returns and `throw;` rethrows; an object is
// freed when its last handler ends) and the number of exceptions thrown and
// not yet caught (what std::uncaught_exceptions() returns). Both describe
// frames of the stack that is running: handlers, and destructors that
// unwinding runs. A routine that suspends in such a frame keeps the frame on
// its own stack, so the record has to go with it. Left on the thread,
// another routine run there meanwhile would see the first one's exception
// as its own (rethrow it, free it when its handler ends: a use after free
// in the first), and the first, continued on another thread, would find
// that thread's record instead of its own.
//
// So every switch into a routine installs the routine's record on the
// thread and every switch back keeps what the routine left and puts the
// thread's own back (ExecutionContext, execution_context.h: Exchange()
// around the switch in Enter(), ScopedExceptionState around the rarer ones
// that make and unwind a context). A routine starts with an empty record
// and, having returned from its body, ends with one.
//
// Trade-off: the record's layout is the ABI's (`__cxa_eh_globals`, which no
// public header defines: two words on x86-64), reached through
// abi::__cxa_get_globals(). Exchanging it costs a few loads and stores per
// resume (0.5 ns of a 13 ns round trip, docs/performance.md); the thread's
// record is looked up once per thread and its address cached.
//
// Threads: each function acts on the calling thread's record and is for
// the thread that switches into routines (a processor), never for code
// inside a routine: a routine may continue on another thread after any
// switch, and an address kept across it would be the first thread's.

#ifndef SCHEDULER_EXCEPTION_STATE_H_
#define SCHEDULER_EXCEPTION_STATE_H_

namespace cyber {
namespace scheduler {

// The ABI's __cxa_eh_globals, field for field.
struct ExceptionState {
  void* caught = nullptr;     // caughtExceptions: the innermost handled one
  unsigned int uncaught = 0;  // uncaughtExceptions: thrown, not yet caught
#if defined(__ARM_EABI_UNWINDER__)
  void* propagating = nullptr;  // propagatingExceptions (ARM EHABI only)
#endif
  bool empty() const { return caught == nullptr && uncaught == 0; }
};

namespace exception_state_internal {
// The calling thread's record, from the C++ runtime (out of line: a call
// into it on each use would cost as much as the switch it goes with).
ExceptionState* LookUpThreadRecord();
// Its address, cached on the thread's first switch: fixed for the thread's
// life.
inline thread_local ExceptionState* t_thread_record = nullptr;
}  // namespace exception_state_internal

// The calling thread's record. REQUIRES: not kept across a switch out of a
// routine (see the header comment).
inline ExceptionState* ThreadExceptionState() {
  ExceptionState*& record = exception_state_internal::t_thread_record;
  if (__builtin_expect(record == nullptr, 0)) {
    record = exception_state_internal::LookUpThreadRecord();
  }
  return record;
}

// Stores `next` in `*record` and returns what was there. Field by field:
// a copy of the whole struct reads it in one 16-byte load, which cannot be
// forwarded from the two narrower stores of the last exchange and stalls
// (measured: 5 ns more per round trip, 18 ns instead of 13).
inline ExceptionState Exchange(ExceptionState* record, ExceptionState next) {
  ExceptionState last;
  last.caught = record->caught;
  last.uncaught = record->uncaught;
  record->caught = next.caught;
  record->uncaught = next.uncaught;
#if defined(__ARM_EABI_UNWINDER__)
  last.propagating = record->propagating;
  record->propagating = next.propagating;
#endif
  return last;
}

// For one switch into a routine: installs `*routine` (the routine's record)
// on the calling thread; the destructor, when the routine has switched back
// (on this same thread), stores what the routine left in `*routine` and
// puts the thread's own record back.
class ScopedExceptionState {
 public:
  explicit ScopedExceptionState(ExceptionState* routine)
      : routine_(routine),
        thread_(ThreadExceptionState()),
        outside_(Exchange(thread_, *routine_)) {}
  ~ScopedExceptionState() { *routine_ = Exchange(thread_, outside_); }
  ScopedExceptionState(const ScopedExceptionState&) = delete;
  ScopedExceptionState& operator=(const ScopedExceptionState&) = delete;

 private:
  ExceptionState* const routine_;
  ExceptionState* const thread_;
  const ExceptionState outside_;
};

}  // namespace scheduler
}  // namespace cyber

#endif  // SCHEDULER_EXCEPTION_STATE_H_
