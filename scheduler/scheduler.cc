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

}  // namespace

Scheduler::Scheduler(Options options)
    : options_([&] {
        options.config = WithDefaults(std::move(options.config));
        return std::move(options);
      }()),
      contexts_(options_.stack_size, /*max_cached=*/64) {
  for (size_t g = 0; g < options_.config.groups.size(); ++g) {
    const ProcessorGroupConfig& group = options_.config.groups[g];
    groups_.push_back(std::make_unique<ProcessorGroup>(
        group, std::make_unique<ClassicPolicy>(group.processor_num),
        [this](std::shared_ptr<CRoutine> r, CRoutine::State s) {
          OnReturned(std::move(r), s);
        },
        options_.run_threads));
  }
}

Scheduler::~Scheduler() { Shutdown(); }

void Scheduler::SetTimerDriver(timer::TickDriver* driver) {
  std::shared_ptr<timer::WheelFrontEnd> front =
      driver != nullptr ? driver->front_end() : nullptr;
  MutexLock lock(&drivers_mu_);
  if (front) drivers_.push_back(front);
  timer_driver_.store(front.get(), std::memory_order_release);
}

int Scheduler::PriorityFor(const std::string& name) const {
  const ProcessorGroupConfig& group = options_.config.groups[GroupForTask(name)];
  const auto it = group.task_priorities.find(name);
  return it == group.task_priorities.end() ? 0 : it->second;
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
  if (live_.size() >= options_.max_routines) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "scheduler \"", options_.name, "\": ", live_.size(),
        " live routines reached max_routines ", options_.max_routines));
  }
  live_.emplace(routine->id(), routine);
  return absl::OkStatus();
}

bool Scheduler::Dispatch(std::function<void()> task, int priority) {
  auto routine = std::make_shared<CRoutine>("dispatched", std::move(task),
                                            priority, /*processor=*/-1, this);
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
  groups_[0]->Enqueue(std::move(routine));
  return true;
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
  groups_[group]->Enqueue(std::move(routine));
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
  const int group = routine->group();
  groups_[group]->Enqueue(std::move(routine));
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
  live_.erase(routine->id());
  const auto task = tasks_.find(routine->name());
  if (task != tasks_.end() && task->second == routine) tasks_.erase(task);
  ++stats_.finished;
  if (live_.empty()) all_finished_.SignalAll();
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
  {
    MutexLock lock(&mu_);
    if (shut_down_) return;
    shut_down_ = true;
    stopping_.store(true, std::memory_order_release);
    for (const auto& entry : live_) live.push_back(entry.second);
  }
  // Cancel everything: parked routines are woken, running ones unwind at
  // their next suspension point, queued ones end before their body runs.
  for (const auto& r : live) r->Cancel();
  live.clear();
  auto last_report = std::chrono::steady_clock::now();
  while (true) {
    {
      MutexLock lock(&mu_);
      if (live_.empty()) break;
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
      for (const auto& entry : live_) {
        AWARN << "scheduler \"" << options_.name << "\": shutdown waits for "
              << "routine \"" << entry.second->name()
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
  s.live = live_.size();
  for (const auto& g : groups_) {
    s.switches += g->switches();
    s.processors += g->size();
  }
  return s;
}

}  // namespace scheduler
}  // namespace cyber
