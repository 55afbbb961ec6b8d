#include "cyber/runtime/runtime.h"

#include <memory>
#include <thread>
#include <utility>

#include "cyber/time/steady_clock.h"

namespace cyber {

namespace {

scheduler::Scheduler::Options SchedulerOptions(Runtime::Options& o) {
  scheduler::Scheduler::Options s;
  s.name = o.name;
  if (o.config.groups.empty() && !o.run_threads) {
    // Routines run on the owner's thread, one at a time: one group.
    s.config = scheduler::DefaultSchedulerConfig(1);
  } else {
    s.config = std::move(o.config);  // empty: one processor per core
  }
  s.stack_size = o.stack_size;
  s.run_threads = o.run_threads;
  s.anticipate_timer_work = o.anticipate_timer_work;
  return s;
}

timer::TimerSystem::Options TimerOptions(const Runtime::Options& o) {
  timer::TimerSystem::Options d;
  d.name = o.tick_thread_name.empty() ? o.name + "-tick" : o.tick_thread_name;
  d.tick = o.tick;
  d.run_thread = o.run_threads;
  d.max_pending_timers = o.max_pending_timers;
  return d;
}

}  // namespace

Runtime::Runtime(Options options)
    : name_(options.name),
      clock_(options.clock != nullptr ? options.clock : SteadyClock::Get()),
      bus_(std::make_unique<ChannelBus>()),
      remote_(std::move(options.remote)),
      scheduler_(SchedulerOptions(options)),
      timers_(clock_, &scheduler_, TimerOptions(options)) {
  scheduler_.SetTimerSystem(&timers_);
  scheduler_.scope()->bus.store(bus_.get(), std::memory_order_release);
  if (remote_ != nullptr) bus_->SetRemote(remote_);
}

Runtime::~Runtime() { Shutdown(); }

void Runtime::Shutdown() {
  if (remote_ != nullptr) {
    bus_->ClearRemote(remote_.get());
    remote_->Shutdown();  // waits for deliveries in progress
  }
  timers_.Shutdown();
  scheduler_.Shutdown();
}

}  // namespace cyber
