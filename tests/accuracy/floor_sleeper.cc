#include "tests/accuracy/floor_sleeper.h"

#include <time.h>

#include <utility>

#include "cyber/common/log.h"

namespace cyber {
namespace accuracy {

FloorSleeper::~FloorSleeper() {
  if (thread_.joinable()) thread_.join();
}

void FloorSleeper::Start(std::vector<Deadline> deadlines) {
  ACHECK(!thread_.joinable()) << "FloorSleeper started twice";
  fires_.clear();
  fires_.reserve(deadlines.size());
  cpu_ = absl::ZeroDuration();
  thread_ = std::thread([this, deadlines = std::move(deadlines)] {
    for (const Deadline& d : deadlines) {
      clock_->SleepUntil(d.at);  // clock_nanosleep, TIMER_ABSTIME
      Fire fire;
      fire.index = d.index;
      fire.expected = d.at;
      fire.actual = clock_->Now();
      fires_.push_back(fire);
    }
    timespec used;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &used) == 0) {
      cpu_ = absl::DurationFromTimespec(used);
    }
  });
}

std::vector<Fire> FloorSleeper::Join() {
  if (thread_.joinable()) thread_.join();
  return std::exchange(fires_, {});
}

}  // namespace accuracy
}  // namespace cyber
