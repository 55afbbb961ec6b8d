// Internal to this repository: not part of the API (docs/api.md lists the
// API headers); its Bazel target is visible only inside this repository.
//
// Test components for stuck shutdowns (mainboard's --shutdown_deadline,
// SimulatedGraph's stuck watch), registered by class name:
//
//  * StuckStop: its Clear() stops a timer of its own ("<name>_worker",
//    every 10 ms) while holding the lock that the timer's callback needs —
//    the classic deadlock of a synchronous stop. Clear() first waits until
//    a worker call is waiting for that lock, so the Stop() surely waits for
//    a running call: it never returns.
//  * ParkedStuckStop: the same deadlock, but its worker waits for the lock
//    in a routine that sleeps 1 ms between tries (CRoutine::SleepFor), as
//    routine code should: no thread is blocked, and on simulated time,
//    with another timer running, simulated time keeps moving while the
//    stop never ends.
//  * Ticker: a well-behaved timer component (Proc() returns true).
//
// Test-only (//cyber/mainboard/testing:stuck_stop_components is testonly).

#ifndef CYBER_MAINBOARD_STUCK_STOP_COMPONENTS_H_
#define CYBER_MAINBOARD_STUCK_STOP_COMPONENTS_H_

#include <condition_variable>
#include <memory>
#include <mutex>

#include "cyber/component/timer_component.h"
#include "timer/timer.h"

namespace cyber {
namespace test_components {

class StuckStop : public TimerComponent {
 public:
  bool Init() override;
  bool Proc() override { return true; }
  void Clear() override;

 protected:
  // How Work() waits between two tries for mu_: here it sleeps the thread
  // 1 ms. Called only while Clear() holds mu_ (which it never releases).
  virtual void PauseBetweenTries();

 private:
  void Work();

  std::mutex mu_;  // what Work() needs and Clear() holds
  std::mutex waiting_mu_;
  std::condition_variable waiting_cv_;
  bool waiting_ = false;  // a Work() call is waiting for mu_
  std::unique_ptr<Timer> worker_;
};

// StuckStop whose worker parks its routine between tries.
class ParkedStuckStop : public StuckStop {
 protected:
  void PauseBetweenTries() override;  // CRoutine::SleepFor(1 ms)
};

class Ticker : public TimerComponent {
 public:
  bool Init() override { return true; }
  bool Proc() override { return true; }
};

}  // namespace test_components
}  // namespace cyber

#endif  // CYBER_MAINBOARD_STUCK_STOP_COMPONENTS_H_
