// Internal to this repository: not part of the API (docs/api.md lists the
// API headers); its Bazel target is visible only inside this repository.
//
// CpuRelax: one step of a spin-wait.
//
// Why: a thread that polls a flag should tell the core it is only waiting
// (x86 `pause`, Arm `yield`), so a hyperthread sibling runs faster and the
// loop leaves the pipeline gently when the flag changes. One definition for
// the scheduler's anticipating watcher and the benchmarks that spin.

#ifndef CYBER_COMMON_CPU_RELAX_H_
#define CYBER_COMMON_CPU_RELAX_H_

namespace cyber {

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

}  // namespace cyber

#endif  // CYBER_COMMON_CPU_RELAX_H_
