#include "scheduler/config/thread_attributes.h"

#include <linux/capability.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace cyber {
namespace scheduler {
namespace {

using Affinity = ProcessorGroupConfig::Affinity;

// Attribute changes run on a fresh thread so the test's main thread (and the
// tests after it) keep their affinity, policy and nice value.
void OnFreshThread(const std::function<void()>& body) {
  std::thread thread(body);
  thread.join();
}

bool Contains(absl::string_view text, absl::string_view piece) {
  return text.find(piece) != absl::string_view::npos;
}

std::vector<int> CurrentThreadCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  EXPECT_EQ(pthread_getaffinity_np(pthread_self(), sizeof(set), &set), 0);
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

int CurrentThreadNice() {
  errno = 0;
  const int nice = getpriority(PRIO_PROCESS, static_cast<id_t>(gettid()));
  EXPECT_EQ(errno, 0);
  return nice;
}

ProcessorGroupConfig Group(Affinity affinity, std::vector<int> cpuset) {
  ProcessorGroupConfig group;
  group.name = "g";
  group.processor_num = 4;
  group.affinity = affinity;
  group.cpuset = std::move(cpuset);
  return group;
}

TEST(CpusForProcessorTest, RangeGivesEveryProcessorTheWholeCpuset) {
  const ProcessorGroupConfig group = Group(Affinity::kRange, {0, 1, 2, 3});
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(CpusForProcessor(group, i), (std::vector<int>{0, 1, 2, 3}));
  }
}

TEST(CpusForProcessorTest, OneToOneGivesProcessorIItsOwnCpuWrappingAround) {
  const ProcessorGroupConfig group = Group(Affinity::kOneToOne, {4, 2, 7});
  EXPECT_EQ(CpusForProcessor(group, 0), (std::vector<int>{4}));
  EXPECT_EQ(CpusForProcessor(group, 1), (std::vector<int>{2}));
  EXPECT_EQ(CpusForProcessor(group, 2), (std::vector<int>{7}));
  EXPECT_EQ(CpusForProcessor(group, 3), (std::vector<int>{4}));  // 3 % 3
}

TEST(CpusForProcessorTest, NoCpusetMeansNoPinning) {
  EXPECT_TRUE(CpusForProcessor(Group(Affinity::kRange, {}), 0).empty());
  EXPECT_TRUE(CpusForProcessor(Group(Affinity::kOneToOne, {}), 1).empty());
}

TEST(SetCurrentThreadAffinityTest, PinsToOneCpuAndReadsItBack) {
  // CPU 0 on an unrestricted machine; the lowest allowed one if the test
  // runs under taskset or a cgroup that excludes CPU 0.
  const int cpu = CurrentThreadCpus().front();
  OnFreshThread([cpu] {
    absl::Status status = SetCurrentThreadAffinity({cpu}, "pinned");
    ASSERT_TRUE(status.ok()) << status;
    EXPECT_EQ(CurrentThreadCpus(), (std::vector<int>{cpu}));
  });
}

TEST(SetCurrentThreadAffinityTest, EmptyListChangesNothing) {
  OnFreshThread([] {
    const std::vector<int> before = CurrentThreadCpus();
    EXPECT_TRUE(SetCurrentThreadAffinity({}, "unpinned").ok());
    EXPECT_EQ(CurrentThreadCpus(), before);
  });
}

TEST(SetCurrentThreadAffinityTest, MissingCpuIsAnErrorNotACrash) {
  OnFreshThread([] {
    const std::vector<int> before = CurrentThreadCpus();
    absl::Status status = SetCurrentThreadAffinity({1000}, "far_away");
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(Contains(status.message(), "thread \"far_away\"")) << status;
    EXPECT_TRUE(Contains(status.message(), "CPUs 1000")) << status;
    EXPECT_TRUE(Contains(status.message(), "none of them is usable")) << status;
    EXPECT_EQ(CurrentThreadCpus(), before);
  });
}

TEST(SetCurrentThreadAffinityTest, MissingCpusAmongUsableOnesAreLeftOut) {
  const int cpu = CurrentThreadCpus().front();
  OnFreshThread([cpu] {
    absl::Status status = SetCurrentThreadAffinity({cpu, 1000}, "partial");
    ASSERT_TRUE(status.ok()) << status;  // the kernel pins to what exists
    EXPECT_EQ(CurrentThreadCpus(), (std::vector<int>{cpu}));
  });
}

TEST(SetCurrentThreadAffinityTest, IndexBeyondCpuSetIsRejected) {
  OnFreshThread([] {
    for (int cpu : {-1, 1024, 5000}) {
      absl::Status status = SetCurrentThreadAffinity({0, cpu}, "bad_index");
      ASSERT_FALSE(status.ok()) << cpu;
      EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
      EXPECT_TRUE(Contains(status.message(), "thread \"bad_index\"")) << status;
      EXPECT_TRUE(Contains(status.message(), "outside 0..1023")) << status;
    }
  });
}

TEST(SetCurrentThreadPolicyTest, SchedOtherNiceValue) {
  OnFreshThread([] {
    // 0 normally; a test run under `nice` starts higher, and lowering it
    // back would need privileges.
    const int nice = std::max(0, CurrentThreadNice());
    absl::Status status = SetCurrentThreadPolicy(SCHED_OTHER, nice, "other");
    ASSERT_TRUE(status.ok()) << status;
    EXPECT_EQ(CurrentThreadNice(), nice);
    int policy = -1;
    sched_param param{};
    ASSERT_EQ(pthread_getschedparam(pthread_self(), &policy, &param), 0);
    EXPECT_EQ(policy, SCHED_OTHER);

    // Raising the nice value is always allowed, and affects only this thread.
    status =
        SetCurrentThreadPolicy(SCHED_OTHER, std::min(nice + 5, 19), "other");
    ASSERT_TRUE(status.ok()) << status;
    EXPECT_EQ(CurrentThreadNice(), std::min(nice + 5, 19));
  });
}

TEST(SetCurrentThreadPolicyTest, NiceValueIsPerThread) {
  const int main_nice = CurrentThreadNice();
  OnFreshThread([main_nice] {
    ASSERT_TRUE(SetCurrentThreadPolicy(SCHED_OTHER, std::min(main_nice + 3, 19),
                                       "niced")
                    .ok());
  });
  EXPECT_EQ(CurrentThreadNice(), main_nice);
}

TEST(SetCurrentThreadPolicyTest, SchedFifoSucceedsOrExplains) {
  OnFreshThread([] {
    absl::Status status = SetCurrentThreadPolicy(SCHED_FIFO, 10, "rt_worker");
    if (status.ok()) {  // privileged (CAP_SYS_NICE or RLIMIT_RTPRIO)
      int policy = -1;
      sched_param param{};
      ASSERT_EQ(pthread_getschedparam(pthread_self(), &policy, &param), 0);
      EXPECT_EQ(policy, SCHED_FIFO);
      EXPECT_EQ(param.sched_priority, 10);
      // Back to normal before the thread ends.
      EXPECT_TRUE(SetCurrentThreadPolicy(SCHED_OTHER, 0, "rt_worker").ok());
      return;
    }
    EXPECT_FALSE(status.message().empty());
    EXPECT_TRUE(Contains(status.message(), "thread \"rt_worker\"")) << status;
    EXPECT_TRUE(Contains(status.message(), "SCHED_FIFO priority 10")) << status;
  });
}

// Clears the calling thread's effective capabilities (Linux keeps them per
// thread), so a test running as root can see what an unprivileged robot
// process gets. False if the kernel refuses.
bool DropEffectiveCapabilities() {
  __user_cap_header_struct header{};
  header.version = _LINUX_CAPABILITY_VERSION_3;
  header.pid = 0;  // the calling thread
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  if (syscall(SYS_capget, &header, data) != 0) return false;
  for (__user_cap_data_struct& word : data) word.effective = 0;
  return syscall(SYS_capset, &header, data) == 0;
}

TEST(SetCurrentThreadPolicyTest, UnprivilegedThreadGetsPermissionDenied) {
  rlimit rtprio{};
  ASSERT_EQ(getrlimit(RLIMIT_RTPRIO, &rtprio), 0);
  if (rtprio.rlim_cur >= 10) {
    GTEST_SKIP() << "RLIMIT_RTPRIO " << rtprio.rlim_cur
                 << " allows SCHED_FIFO 10 without privileges";
  }
  rlimit nice_limit{};
  ASSERT_EQ(getrlimit(RLIMIT_NICE, &nice_limit), 0);
  const bool nice_limited = nice_limit.rlim_cur == 0;  // no lowering allowed
  OnFreshThread([nice_limited] {
    ASSERT_TRUE(DropEffectiveCapabilities());
    absl::Status status = SetCurrentThreadPolicy(SCHED_FIFO, 10, "rt_worker");
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied) << status;
    EXPECT_TRUE(Contains(status.message(),
                         "thread \"rt_worker\": cannot set SCHED_FIFO "
                         "priority 10"))
        << status;
    EXPECT_TRUE(Contains(status.message(), "CAP_SYS_NICE")) << status;
    EXPECT_TRUE(Contains(status.message(), "Operation not permitted"))
        << status;
    int policy = -1;
    sched_param param{};
    ASSERT_EQ(pthread_getschedparam(pthread_self(), &policy, &param), 0);
    EXPECT_EQ(policy, SCHED_OTHER);  // unchanged

    if (nice_limited) {
      status = SetCurrentThreadPolicy(SCHED_OTHER, -5, "greedy");
      ASSERT_FALSE(status.ok());
      EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied) << status;
      EXPECT_TRUE(Contains(status.message(),
                           "thread \"greedy\": cannot set SCHED_OTHER nice "
                           "value -5"))
          << status;
    }
  });
}

TEST(SetCurrentThreadPolicyTest, BadArgumentsAreRejectedBeforeTheKernel) {
  OnFreshThread([] {
    struct Case {
      int policy;
      int priority;
      const char* message;
    };
    for (const Case& c : {Case{SCHED_OTHER, 20, "nice value 20"},
                          Case{SCHED_OTHER, -21, "out of range -20..19"},
                          Case{SCHED_FIFO, 0, "out of range 1..99"},
                          Case{SCHED_RR, 100, "SCHED_RR priority 100"},
                          Case{SCHED_BATCH, 0, "policy 3 is not one of"}}) {
      absl::Status status = SetCurrentThreadPolicy(c.policy, c.priority, "t");
      ASSERT_FALSE(status.ok()) << c.message;
      EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
      EXPECT_TRUE(Contains(status.message(), "thread \"t\"")) << status;
      EXPECT_TRUE(Contains(status.message(), c.message)) << status;
    }
  });
}

}  // namespace
}  // namespace scheduler
}  // namespace cyber
