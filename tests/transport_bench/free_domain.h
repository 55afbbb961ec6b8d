// PickFreeDomain: a random DDS domain that no participant on this host is
// using now, for one benchmark pair.
//
// Why check (tests just pick at random): this machine is shared, and
// other people's cross-process tests sit on random domains too; a pair
// that lands on a busy domain measures their discovery traffic as well.
// A domain is taken when its first participant's unicast discovery port,
// 7410 + 250 x domain (DDS's port mapping: PB 7400, DG 250, d1 10), is
// bound: Fast-DDS binds it without SO_REUSEADDR, so a bind here fails.
// Someone may still arrive between the check and the pair's start; that
// is rare, not impossible.
//
// Threads: any.

#ifndef TESTS_TRANSPORT_BENCH_FREE_DOMAIN_H_
#define TESTS_TRANSPORT_BENCH_FREE_DOMAIN_H_

#include <cstdint>

namespace cyber {
namespace transport_bench {

// The largest domain id DDS's port mapping allows.
inline constexpr uint32_t kMaxDomainId = 232;

// A domain in 1..kMaxDomainId whose discovery port is free (after 50 tries,
// the last one drawn).
uint32_t PickFreeDomain();

}  // namespace transport_bench
}  // namespace cyber

#endif  // TESTS_TRANSPORT_BENCH_FREE_DOMAIN_H_
