#include "cyber/common/wait_list.h"

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

// Lives on the waiter's stack; linked while it waits. Valid until the waiter
// re-acquires the mutex after being woken, so WakeAll (which holds it) may
// touch it freely.
struct WaitList::Node {
  Node* next = nullptr;
  bool woken = false;
  Parkable* coroutine = nullptr;
  CondVar cv;  // for a thread waiter
};

void WaitList::Wait(Mutex* mu) {
  Node node;
  node.coroutine = CurrentCoroutine();
  node.next = head_;
  head_ = &node;
  while (!node.woken) {
    if (node.coroutine != nullptr) {
      mu->Unlock();
      node.coroutine->Park();  // returns at once if already unparked
      mu->Lock();
    } else {
      node.cv.Wait(mu);
    }
  }
}

void WaitList::WakeAll() {
  Node* n = head_;
  head_ = nullptr;
  while (n != nullptr) {
    Node* const next = n->next;  // read before the waiter may leave
    n->woken = true;
    if (n->coroutine != nullptr) {
      n->coroutine->Unpark();
    } else {
      n->cv.Signal();
    }
    n = next;
  }
}

}  // namespace cyber
