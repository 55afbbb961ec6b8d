// FireLog: the calls of a group of timers (the oneshot scenario's), collected
// from their callbacks on the dispatcher's threads, read by the scenario's
// thread once they are all in.
//
// Why a lock and not per-timer slots: the oneshots run concurrently on
// several processors, and the scenario waits for "all N fired" with a
// deadline; one mutex and one condition variable say that directly. The
// callbacks hold the lock only to append.
//
// Threads: every method from any thread.

#ifndef TESTS_ACCURACY_FIRE_LOG_H_
#define TESTS_ACCURACY_FIRE_LOG_H_

#include <cstddef>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "cyber/common/mutex.h"
#include "cyber/time/instant.h"
#include "tests/accuracy/fire_record.h"

namespace cyber {
namespace accuracy {

class FireLog {
 public:
  void Add(const Fire& fire);
  // Blocks until at least `count` fires are in or the steady clock reaches
  // `limit`. Returns false on the latter.
  bool WaitForCount(size_t count, Instant limit);
  size_t size() const;
  // Moves the fires out (the log is empty afterwards).
  std::vector<Fire> Take();

 private:
  mutable Mutex mu_;
  CondVar added_;
  // mu_ protects the following state.
  std::vector<Fire> fires_ ABSL_GUARDED_BY(mu_);
};

}  // namespace accuracy
}  // namespace cyber

#endif  // TESTS_ACCURACY_FIRE_LOG_H_
