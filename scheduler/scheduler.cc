#include "scheduler/scheduler.h"

#include <chrono>
#include <thread>

#include "absl/strings/str_cat.h"
#include "cyber/common/log.h"

namespace cyber {
namespace scheduler {

namespace {

SchedulerConfig WithDefaults(SchedulerConfig config) {
  if (config.groups.empty()) {
    const int n = static_cast<int>(std::thread::hardware_concurrency());
    config = DefaultSchedulerConfig(n > 0 ? n : 1);
  }
  return config;
}

// Routines held by the batch open on this thread (Scheduler::BeginBatch),
// queued at its end. The vector keeps its capacity: holding allocates
// nothing once it has grown.
struct HeldRoutines {
  const Scheduler* owner = nullptr;  // whose batch is open; null: none
  std::vector<std::shared_ptr<CRoutine>> routines;
};
thread_local HeldRoutines t_held;

// Free routine blocks kept for reuse: a burst of this many callbacks in
// flight at once costs no allocation when it comes again.
constexpr size_t kCachedRoutineBlocks = 4096;

}  // namespace

Scheduler::Scheduler(Options options)
    : CRoutine::Host(options.name),
      options_([&] {
        options.config = WithDefaults(std::move(options.config));
        return std::move(options);
      }()),
      contexts_(options_.stack_size, /*max_cached=*/64),
      routine_memory_(std::make_shared<BlockPool>(kCachedRoutineBlocks)) {
  scope_.scheduler.store(this, std::memory_order_release);
  {
    MutexLock lock(&mu_);
    // Room for every routine it may keep: keeping one never allocates.
    recycled_.reserve(kRecycledRoutines);
  }
  for (size_t g = 0; g < options_.config.groups.size(); ++g) {
    const ProcessorGroupConfig& group = options_.config.groups[g];
    // Timer callbacks run in the first group: its processors anticipate.
    ProcessorGroup::Anticipation anticipation;
    if (g == 0 && options_.anticipate_timer_work) {
      anticipation.next_work = [this] { return ExpectedTimerWork(); };
    }
    groups_.push_back(std::make_unique<ProcessorGroup>(
        group, std::make_unique<ClassicPolicy>(group.processor_num),
        [this](std::shared_ptr<CRoutine> r, CRoutine::State s) {
          OnReturned(std::move(r), s);
        },
        options_.run_threads, std::move(anticipation)));
  }
}

Scheduler::~Scheduler() { Shutdown(); }

void Scheduler::SetTimerSystem(timer::TimerSystem* driver) {
  std::shared_ptr<timer::TimerSystemCore> system =
      driver != nullptr ? driver->system() : nullptr;
  MutexLock lock(&systems_mu_);
  if (system) systems_.push_back(system);
  // Clock first: a routine that sees the new wheel sees its clock.
  scope_.clock.store(system != nullptr ? system->clock() : nullptr,
                     std::memory_order_release);
  scope_.timers.store(system.get(), std::memory_order_release);
}

void Scheduler::ExpectWork(
    std::optional<std::chrono::steady_clock::time_point> when) {
  expected_work_ns_.store(
      when ? std::chrono::duration_cast<std::chrono::nanoseconds>(
                 when->time_since_epoch())
                 .count()
           : kNothingExpected,
      std::memory_order_relaxed);
}

std::chrono::nanoseconds Scheduler::HandOverLead() const {
  if (!options_.anticipate_timer_work || !options_.run_threads) {
    return std::chrono::nanoseconds(0);
  }
  return absl::ToChronoNanoseconds(
      std::max(options_.timer_handoff_lead, absl::ZeroDuration()));
}

std::optional<std::chrono::steady_clock::time_point>
Scheduler::ExpectedTimerWork() const {
  const int64_t ns = expected_work_ns_.load(std::memory_order_relaxed);
  if (ns == kNothingExpected) return std::nullopt;
  return std::chrono::steady_clock::time_point(std::chrono::nanoseconds(ns));
}

int Scheduler::PriorityFor(const std::string& name) const {
  return RouteFor(name).priority;
}

timer::Route Scheduler::RouteFor(const std::string& name) const {
  const int group = GroupForTask(name);
  const auto& priorities = options_.config.groups[group].task_priorities;
  const auto it = priorities.find(name);
  return timer::Route{it == priorities.end() ? 0 : it->second, group};
}

timer::Route Scheduler::CurrentRoute() const {
  const CRoutine* const current = CRoutine::Current();
  if (current == nullptr || current->host() != this) return timer::Route{};
  return timer::Route{current->priority(), current->group()};
}

int Scheduler::GroupForTask(const std::string& task) const {
  const auto it = options_.config.task_groups.find(task);
  if (it == options_.config.task_groups.end()) return 0;
  for (size_t g = 0; g < options_.config.groups.size(); ++g) {
    if (options_.config.groups[g].name == it->second) return static_cast<int>(g);
  }
  return 0;
}

absl::Status Scheduler::Admit(const std::shared_ptr<CRoutine>& routine) {
  if (stopping()) {
    return absl::FailedPreconditionError(
        absl::StrCat("scheduler \"", options_.name, "\": shut down"));
  }
  if (live_count_ >= options_.max_routines) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "scheduler \"", options_.name, "\": ", live_count_,
        " live routines reached max_routines ", options_.max_routines));
  }
  mu_.AssertHeld();
  CRoutine::LiveLink& link = routine->live_link_;
  link.self = routine;
  link.prev = nullptr;
  link.next = live_head_;
  if (live_head_ != nullptr) live_head_->live_link_.prev = routine.get();
  live_head_ = routine.get();
  ++live_count_;
  return absl::OkStatus();
}

void Scheduler::ForgetLocked(CRoutine* routine) {
  mu_.AssertHeld();
  CRoutine::LiveLink& link = routine->live_link_;
  if (link.self == nullptr) return;  // not live (never admitted)
  if (link.prev != nullptr) {
    link.prev->live_link_.next = link.next;
  } else {
    live_head_ = link.next;
  }
  if (link.next != nullptr) link.next->live_link_.prev = link.prev;
  link.prev = link.next = nullptr;
  // The caller still holds a reference: this never destroys the routine
  // under the lock.
  link.self.reset();
  --live_count_;
}

absl::Status Scheduler::ReserveRoutines(size_t routines) {
  if (routine_memory_->block_bytes() == 0) {
    // The pool learns its block size (routine plus control block, which
    // only allocate_shared knows) from a first routine, never admitted.
    std::allocate_shared<CRoutine>(PoolAllocator<CRoutine>(routine_memory_),
                                   "reserve", nullptr, 0, /*processor=*/-1, this,
                                   nullptr)
        .reset();
  }
  const size_t blocks =
      routine_memory_->Reserve(routine_memory_->block_bytes(), routines);
  const size_t contexts = contexts_.Reserve(routines);
  if (blocks < routines || contexts < routines) {
    return absl::OutOfRangeError(absl::StrCat(
        "scheduler \"", options_.name, "\": ReserveRoutines(", routines,
        "): kept ", blocks, " routine blocks and ", contexts,
        " contexts (the pools' caps)"));
  }
  return absl::OkStatus();
}

bool Scheduler::Dispatch(std::function<void()> task, int priority) {
  return Dispatch(std::move(task), priority, nullptr);
}

bool Scheduler::Dispatch(std::function<void()> task, int priority,
                         std::shared_ptr<const void> owner) {
  return Dispatch(std::move(task), timer::Route{priority, 0}, std::move(owner));
}

bool Scheduler::Dispatch(std::function<void()> task, timer::Route route,
                         std::shared_ptr<const void> owner) {
  const int group =
      route.group > 0 && static_cast<size_t>(route.group) < groups_.size()
          ? route.group
          : 0;
  std::shared_ptr<CRoutine> routine;
  {
    MutexLock lock(&mu_);
    if (!recycled_.empty() && !stopping() &&
        live_count_ < options_.max_routines) {
      // The common case: a routine that finished, given this body. (Its
      // old body and owner were released when it ended: nothing of the
      // caller's is destroyed under the lock.)
      routine = std::move(recycled_.back());
      recycled_.pop_back();
      routine->Recycle(std::move(task), route.priority, group,
                       std::move(owner));
      const absl::Status admitted = Admit(routine);
      ACHECK(admitted.ok()) << admitted;  // its conditions checked above
      ++stats_.dispatched;
    }
  }
  if (routine != nullptr) {
    Queue(std::move(routine));
    return true;
  }
  // None kept (the first dispatches, a burst beyond kRecycledRoutines, or
  // a refusal to come): one block for the routine and its control block,
  // from the pool.
  routine = std::allocate_shared<CRoutine>(
      PoolAllocator<CRoutine>(routine_memory_), "dispatched", std::move(task),
      route.priority, /*processor=*/-1, this, std::move(owner));
  routine->set_group(group);
  {
    MutexLock lock(&mu_);
    const absl::Status admitted = Admit(routine);
    if (!admitted.ok()) {
      ++stats_.refused;
      AERROR_EVERY(1000) << admitted.message() << " (refused so far: "
                         << stats_.refused << ")";
      return false;
    }
    ++stats_.dispatched;
  }
  Queue(std::move(routine));
  return true;
}

void Scheduler::Queue(std::shared_ptr<CRoutine> routine) {
  if (t_held.owner == this) {
    t_held.routines.push_back(std::move(routine));
    return;
  }
  const int group = routine->group();
  // Handed over ahead of its instant (an early tick pass on this thread,
  // maybe another scheduler's timer system's): held until then.
  groups_[group]->Enqueue(std::move(routine), timer::DispatchBatch::NotBefore());
}

void Scheduler::BeginBatch() {
  // Another scheduler's batch open on this thread: this one does not batch.
  if (t_held.owner == nullptr) t_held.owner = this;
}

void Scheduler::EndBatch() {
  if (t_held.owner != this) return;
  t_held.owner = nullptr;
  std::vector<std::shared_ptr<CRoutine>>& held = t_held.routines;
  if (held.empty()) return;
  // In dispatch order within each group, one group at a time; an early
  // batch's routines held until its instant.
  const auto not_before = timer::DispatchBatch::NotBefore();
  for (size_t g = 0; g < groups_.size(); ++g) {
    groups_[g]->EnqueueAll(&held, static_cast<int>(g), not_before);
  }
  held.clear();
}


absl::Status Scheduler::CreateTask(const std::string& name,
                                   std::function<void()> body, int priority,
                                   int processor) {
  if (name.empty() || !body) {
    return absl::InvalidArgumentError(absl::StrCat(
        "scheduler \"", options_.name, "\": CreateTask(\"", name, "\"): ",
        name.empty() ? "name is empty" : "body is empty"));
  }
  const int group = GroupForTask(name);
  const ProcessorGroupConfig& group_config = options_.config.groups[group];
  if (processor >= group_config.processor_num) {
    return absl::InvalidArgumentError(absl::StrCat(
        "scheduler \"", options_.name, "\": task \"", name, "\": processor ",
        processor, " is outside group \"", group_config.name, "\" (",
        group_config.processor_num, " processors)"));
  }
  if (priority < 0) priority = PriorityFor(name);
  auto routine =
      std::make_shared<CRoutine>(name, std::move(body), priority, processor, this);
  routine->set_group(group);
  routine->set_named_task();
  {
    MutexLock lock(&mu_);
    if (tasks_.count(name) != 0) {
      return absl::AlreadyExistsError(absl::StrCat(
          "scheduler \"", options_.name, "\": task \"", name, "\" already exists"));
    }
    const absl::Status admitted = Admit(routine);
    if (!admitted.ok()) return admitted;
    tasks_.emplace(name, routine);
  }
  Queue(std::move(routine));
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<CRoutine>> Scheduler::FindTask(
    const std::string& name, bool remove) {
  MutexLock lock(&mu_);
  const auto it = tasks_.find(name);
  if (it == tasks_.end()) {
    return absl::NotFoundError(absl::StrCat("scheduler \"", options_.name,
                                            "\": no task \"", name, "\""));
  }
  std::shared_ptr<CRoutine> routine = it->second;
  if (remove) tasks_.erase(it);
  return routine;
}

absl::Status Scheduler::NotifyTask(const std::string& name) {
  auto routine = FindTask(name, /*remove=*/false);
  if (!routine.ok()) return routine.status();
  (*routine)->Notify();
  return absl::OkStatus();
}

absl::Status Scheduler::RemoveTask(const std::string& name) {
  auto routine = FindTask(name, /*remove=*/true);
  if (!routine.ok()) return routine.status();
  (*routine)->Cancel();  // unwinds at its next suspension point
  return absl::OkStatus();
}

void Scheduler::MakeReady(std::shared_ptr<CRoutine> routine) {
  Queue(std::move(routine));
}

void Scheduler::OnReturned(std::shared_ptr<CRoutine> routine,
                           CRoutine::State state) {
  switch (state) {
    case CRoutine::State::kReady:  // yielded
      MakeReady(std::move(routine));
      return;
    case CRoutine::State::kSleep:
    case CRoutine::State::kDataWait:
      routine->AfterSwitchOut();
      return;
    case CRoutine::State::kFinished:
      break;
  }
  MutexLock lock(&mu_);
  ForgetLocked(routine.get());
  if (routine->named_task()) {
    const auto task = tasks_.find(routine->name());
    if (task != tasks_.end() && task->second == routine) tasks_.erase(task);
  }
  ++stats_.finished;
  if (live_count_ == 0) all_finished_.SignalAll();
  // A one-off routine that nobody else holds is kept for the next
  // dispatch; its body and owner were released when it ended. (Another
  // holder, e.g. a tick thread expiring a stale sleep of it, keeps it from
  // being reused under that holder.)
  if (!routine->named_task() && routine->processor() < 0 &&
      !routine->cancelled() && !stopping() &&
      recycled_.size() < kRecycledRoutines && routine.use_count() == 1) {
    recycled_.push_back(std::move(routine));
  }
}

size_t Scheduler::RunReady(size_t max_resumes) {
  ACHECK(!options_.run_threads)
      << "scheduler \"" << options_.name << "\": RunReady() with processor threads";
  size_t resumes = 0;
  bool ran = true;
  while (ran && resumes < max_resumes) {
    ran = false;
    for (auto& g : groups_) {
      while (resumes < max_resumes && g->RunOne(std::chrono::nanoseconds(0))) {
        ran = true;
        ++resumes;
      }
    }
  }
  return resumes;
}

bool Scheduler::RunOneReady(absl::Duration wait) {
  ACHECK(!options_.run_threads)
      << "scheduler \"" << options_.name << "\": RunOneReady() with processor threads";
  for (auto& g : groups_) {
    if (g->RunOne(std::chrono::nanoseconds(0))) return true;
  }
  return groups_[0]->RunOne(absl::ToChronoNanoseconds(wait));
}

size_t Scheduler::queued() const {
  size_t n = 0;
  for (const auto& g : groups_) n += g->queued();
  return n;
}

bool Scheduler::HasReady() const { return queued() > 0; }

void Scheduler::Shutdown() {
  std::vector<std::shared_ptr<CRoutine>> live;
  // The routines kept for reuse: none will be reused now. Released after
  // the lock (a routine's destructor may take a wheel's lock).
  std::vector<std::shared_ptr<CRoutine>> kept;
  {
    MutexLock lock(&mu_);
    if (shut_down_) return;
    shut_down_ = true;
    stopping_.store(true, std::memory_order_release);
    kept.swap(recycled_);
    for (CRoutine* r = live_head_; r != nullptr; r = r->live_link_.next) {
      live.push_back(r->live_link_.self);
    }
  }
  // Cancel everything: parked routines are woken, running ones unwind at
  // their next suspension point, queued ones end before their body runs.
  for (const auto& r : live) r->Cancel();
  live.clear();
  // Routines handed over ahead of their instant run now: cancelled, they
  // end without running their body, and shutdown need not wait for them.
  for (auto& g : groups_) g->ReleaseHeld();
  auto last_report = std::chrono::steady_clock::now();
  while (true) {
    {
      MutexLock lock(&mu_);
      if (live_count_ == 0) break;
      if (options_.run_threads) {
        all_finished_.WaitUntil(&mu_, std::chrono::steady_clock::now() +
                                          std::chrono::seconds(1));
      }
    }
    // Without processor threads nobody else runs the cancelled routines:
    // their unwinding runs here.
    if (!options_.run_threads) RunOneReady(absl::Milliseconds(100));
    if (std::chrono::steady_clock::now() - last_report > std::chrono::seconds(5)) {
      last_report = std::chrono::steady_clock::now();
      MutexLock lock(&mu_);
      for (CRoutine* r = live_head_; r != nullptr; r = r->live_link_.next) {
        AWARN << "scheduler \"" << options_.name << "\": shutdown waits for "
              << "routine \"" << r->name()
              << "\", which has not reached a suspension point";
      }
    }
  }
  for (auto& g : groups_) g->Stop();
  AINFO << "scheduler \"" << options_.name << "\": shut down";
}

Scheduler::Stats Scheduler::stats() const {
  MutexLock lock(&mu_);
  Stats s = stats_;
  s.live = live_count_;
  for (const auto& g : groups_) {
    const ProcessorGroup::Stats gs = g->stats();
    s.switches += gs.switches;
    s.handoffs_early += gs.held;
    s.handoff_held += absl::Nanoseconds(gs.held_ns);
    s.handoff_wakeups += gs.timed_wakes;
    s.handoff_idle_wakeups += gs.idle_wakes;
    s.processors += g->size();
  }
  return s;
}

}  // namespace scheduler
}  // namespace cyber
