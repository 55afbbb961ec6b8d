// sched_conf_fuzzer: arbitrary bytes as a Cyber RT scheduler conf, through
// ParseSchedulerConfig (scheduler/config/scheduler_config.h).
//
// Why: the scheduler conf is the other protobuf-text file a robot process
// reads at start-up, parsed by the same position machinery as graph files
// (cyber/common/text_proto.h) and validated by hand-written checks (CPU
// lists, policies and their priority ranges, duplicate groups and tasks).
// Its promise is the same: every bad value is an InvalidArgument naming
// "file:line:column", nothing is clamped, and a conf that parses yields a
// layout the scheduler can run.
//
// Checked, for each input (as text, and from a file via LoadSchedulerConfig,
// which must agree):
//   - an error is InvalidArgument and starts with "<file>:<line>:<column>: ";
//   - a result has at least one group; group names non-empty and unique;
//     processor_num in 1..kMaxProcessorsPerGroup; CPUs in 0..CPU_SETSIZE-1,
//     none twice, and some for "1to1" affinity; a known policy with a
//     priority in its range; task priorities in 0..19; every task in exactly
//     one group, and task_groups naming that group.

#include <sched.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <system_error>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "scheduler/config/scheduler_config.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/quiet_logging.h"

namespace cyber {
namespace fuzz {
namespace {

namespace fs = std::filesystem;
using scheduler::ProcessorGroupConfig;
using scheduler::SchedulerConfig;

std::string* scratch_file = nullptr;

void RemoveScratch() {
  if (scratch_file == nullptr) return;
  std::error_code ignored;
  fs::remove_all(fs::path(*scratch_file).parent_path(), ignored);
}

void CheckConfig(const SchedulerConfig& c, const std::string& source) {
  FUZZ_CHECK(!c.groups.empty()) << source << ": no groups";
  std::set<std::string> group_names;
  std::map<std::string, std::string> task_owner;  // task -> group listing it
  for (const ProcessorGroupConfig& g : c.groups) {
    FUZZ_CHECK(!g.name.empty() && group_names.insert(g.name).second)
        << "group name \"" << g.name << "\" empty or repeated";
    FUZZ_CHECK(g.processor_num >= 1 && g.processor_num <= scheduler::kMaxProcessorsPerGroup)
        << "group \"" << g.name << "\": processor_num " << g.processor_num;
    std::set<int> cpus;
    for (int cpu : g.cpuset) {
      FUZZ_CHECK(cpu >= 0 && cpu < CPU_SETSIZE && cpus.insert(cpu).second)
          << "group \"" << g.name << "\": CPU " << cpu << " out of range or repeated";
    }
    if (g.affinity == ProcessorGroupConfig::Affinity::kOneToOne) {
      FUZZ_CHECK(!g.cpuset.empty()) << "group \"" << g.name << "\": 1to1 without CPUs";
    }
    if (g.policy == SCHED_OTHER) {
      FUZZ_CHECK(g.priority >= -20 && g.priority <= 19)
          << "group \"" << g.name << "\": nice " << g.priority;
    } else {
      FUZZ_CHECK((g.policy == SCHED_FIFO || g.policy == SCHED_RR) && g.priority >= 1 &&
                 g.priority <= 99)
          << "group \"" << g.name << "\": policy " << g.policy << " priority " << g.priority;
    }
    for (const auto& [task, prio] : g.task_priorities) {
      FUZZ_CHECK(!task.empty() && prio >= scheduler::kMinTaskPriority &&
                 prio <= scheduler::kMaxTaskPriority)
          << "group \"" << g.name << "\": task \"" << task << "\" priority " << prio;
      FUZZ_CHECK(task_owner.emplace(task, g.name).second)
          << "task \"" << task << "\" in two groups";
    }
  }
  FUZZ_CHECK(task_owner.size() == c.task_groups.size())
      << task_owner.size() << " tasks listed, " << c.task_groups.size() << " mapped";
  for (const auto& [task, group] : c.task_groups) {
    const auto it = task_owner.find(task);
    FUZZ_CHECK(it != task_owner.end() && it->second == group)
        << "task \"" << task << "\" mapped to group \"" << group << "\"";
  }
}

bool SameConfig(const SchedulerConfig& a, const SchedulerConfig& b) {
  if (a.groups.size() != b.groups.size() || a.task_groups != b.task_groups) return false;
  for (size_t i = 0; i < a.groups.size(); ++i) {
    const ProcessorGroupConfig& x = a.groups[i];
    const ProcessorGroupConfig& y = b.groups[i];
    if (x.name != y.name || x.processor_num != y.processor_num ||
        x.affinity != y.affinity || x.cpuset != y.cpuset || x.policy != y.policy ||
        x.priority != y.priority || x.task_priorities != y.task_priorities) {
      return false;
    }
  }
  return true;
}

void FuzzConf(const std::string& text) {
  const std::string source = "fuzz/sched.conf";
  const absl::StatusOr<SchedulerConfig> parsed = scheduler::ParseSchedulerConfig(text, source);
  if (parsed.ok()) {
    CheckConfig(*parsed, source);
  } else {
    FUZZ_CHECK(parsed.status().code() == absl::StatusCode::kInvalidArgument)
        << "unexpected code: " << parsed.status();
    FUZZ_CHECK(StartsWithLocation(std::string(parsed.status().message()), source))
        << "the message does not start with \"" << source
        << ":line:column: \": " << parsed.status();
  }
  {
    std::ofstream out(*scratch_file, std::ios::binary | std::ios::trunc);
    out << text;
    FUZZ_CHECK(out.good()) << "cannot write " << *scratch_file;
  }
  const absl::StatusOr<SchedulerConfig> loaded = scheduler::LoadSchedulerConfig(*scratch_file);
  const absl::StatusOr<SchedulerConfig> reparsed =
      scheduler::ParseSchedulerConfig(text, *scratch_file);
  FUZZ_CHECK(loaded.status() == reparsed.status())
      << "LoadSchedulerConfig: " << loaded.status() << "; ParseSchedulerConfig: "
      << reparsed.status();
  if (loaded.ok()) {
    FUZZ_CHECK(parsed.ok() && SameConfig(*loaded, *reparsed) && SameConfig(*loaded, *parsed))
        << "the file and the text give different layouts";
  }
}

}  // namespace
}  // namespace fuzz
}  // namespace cyber

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  cyber::fuzz::QuietLogging();
  const char* base = std::getenv("TEST_TMPDIR");
  if (base == nullptr) base = std::getenv("TMPDIR");
  std::string dir = std::string(base != nullptr ? base : "/tmp") + "/sched_conf_fuzzer.XXXXXX";
  FUZZ_CHECK(mkdtemp(dir.data()) != nullptr) << "mkdtemp " << dir;
  cyber::fuzz::scratch_file = new std::string(dir + "/sched.conf");
  std::atexit(cyber::fuzz::RemoveScratch);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  cyber::fuzz::FuzzConf(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
