#include "tests/transport_bench/child_side.h"

#include <signal.h>

#include <atomic>
#include <memory>

#include <fastdds/dds/log/Log.hpp>
#include <fastdds/dds/log/StdoutErrConsumer.hpp>

#include "glog/logging.h"

namespace cyber {
namespace transport_bench {
namespace {

std::atomic<bool> stop_requested{false};
static_assert(std::atomic<bool>::is_always_lock_free, "set from a signal handler");

void OnStopSignal(int) { stop_requested.store(true, std::memory_order_relaxed); }

}  // namespace

void PrepareChild() {
  namespace fdds = eprosima::fastdds::dds;
  fdds::Log::ClearConsumers();
  auto consumer = std::make_unique<fdds::StdoutErrConsumer>();
  consumer->stderr_threshold(fdds::Log::Kind::Info);  // everything to stderr
  fdds::Log::RegisterConsumer(std::move(consumer));
  if (FLAGS_minloglevel < google::GLOG_WARNING) FLAGS_minloglevel = google::GLOG_WARNING;
  struct sigaction sa {};
  sa.sa_handler = OnStopSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);
  // An orchestrator gone closes our stdout too: a report line must fail,
  // not kill us before the participant is deleted.
  signal(SIGPIPE, SIG_IGN);
}

bool StopRequested() { return stop_requested.load(std::memory_order_relaxed); }

}  // namespace transport_bench
}  // namespace cyber
