// Numbers as the reports print them: "1,234,567" and "-1,234".
//
// Threads: pure functions.

#ifndef TESTS_TRANSPORT_BENCH_NUMBER_TEXT_H_
#define TESTS_TRANSPORT_BENCH_NUMBER_TEXT_H_

#include <string>

namespace cyber {
namespace transport_bench {

// `v` rounded to a whole number, with thousands separators.
std::string Grouped(double v);

}  // namespace transport_bench
}  // namespace cyber

#endif  // TESTS_TRANSPORT_BENCH_NUMBER_TEXT_H_
