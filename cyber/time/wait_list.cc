#include "cyber/time/wait_list.h"

namespace cyber {

namespace {
using coroutine_internal::t_coroutine;
// One per thread: its address names the thread.
thread_local char t_thread_token;
// The thread's ScopedWaitReport flag (plain threads only: never read
// across a coroutine switch).
thread_local std::atomic<bool>* t_wait_report = nullptr;
}  // namespace

ScopedWaitReport::ScopedWaitReport(std::atomic<bool>* waiting) : previous_(t_wait_report) {
  t_wait_report = waiting;
}

ScopedWaitReport::~ScopedWaitReport() { t_wait_report = previous_; }

std::atomic<bool>* wait_list_internal::CurrentWaitReport() { return t_wait_report; }

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
    if (n->report != nullptr) n->report->store(false, std::memory_order_release);
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
