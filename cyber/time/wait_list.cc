#include "cyber/time/wait_list.h"

namespace cyber {

namespace {
using coroutine_internal::t_coroutine;
// One per thread: its address names the thread.
thread_local char t_thread_token;
}  // namespace

// Not inline: a coroutine may resume on another thread, so the thread_local
// must be looked up afresh on every call, never cached across a switch.
__attribute__((noinline)) Parkable* CurrentCoroutine() { return t_coroutine; }

__attribute__((noinline)) void SetCurrentCoroutine(Parkable* coroutine) {
  t_coroutine = coroutine;
}

__attribute__((noinline)) const void* CurrentExecutionId() {
  if (Parkable* c = t_coroutine) return c;
  return &t_thread_token;
}

void WaitList::WakeAll() {
  Node* n = head_;
  head_ = nullptr;
  while (n != nullptr) {
    Node* const next = n->next;  // read before the waiter may leave
    Parkable* const coroutine = n->coroutine;
    n->woken.store(1, std::memory_order_release);
    if (coroutine != nullptr) {
      coroutine->Unpark();
    } else {
      FutexWake(&n->woken, 1);
    }
    n = next;
  }
}

}  // namespace cyber
