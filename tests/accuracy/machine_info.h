// MachineInfo: what the accuracy report says about the machine it ran on,
// read from the kernel (uname, /proc, /sys, prctl) so that figures from
// different machines are never compared blind.
//
// The wall clock is read here once, for the report's date; no measurement
// uses it (every measured instant comes from SteadyClock).
//
// Functions are thread-safe (they only read files and system calls).

#ifndef TESTS_ACCURACY_MACHINE_INFO_H_
#define TESTS_ACCURACY_MACHINE_INFO_H_

#include <optional>
#include <string>

#include "absl/time/time.h"

namespace cyber {
namespace accuracy {

struct MachineInfo {
  unsigned online_cpus = 0;  // sysconf(_SC_NPROCESSORS_ONLN)
  std::string cpu_model;     // first "model name" of /proc/cpuinfo
  std::string kernel;        // uname: sysname release version machine
  std::string clocksource;   // the kernel's current clocksource
  // The calling thread's timer slack (prctl): how far the kernel may defer a
  // sleeper's wake-up to batch it with others; part of every floor figure.
  std::optional<absl::Duration> timer_slack;
  std::string date_utc;  // RFC 3339, wall clock
};

MachineInfo ReadMachineInfo();

struct LoadAverage {
  double one = 0;  // 1, 5 and 15 minute load averages
  double five = 0;
  double fifteen = 0;
  std::string runnable;  // "running/total" scheduling entities
};

// nullopt if /proc/loadavg cannot be read.
std::optional<LoadAverage> ReadLoadAverage();

}  // namespace accuracy
}  // namespace cyber

#endif  // TESTS_ACCURACY_MACHINE_INFO_H_
