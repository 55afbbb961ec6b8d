// Number formatting shared by the scale tools' reports and progress lines.

#ifndef TESTS_SCALE_NUMBER_FORMAT_H_
#define TESTS_SCALE_NUMBER_FORMAT_H_

#include <cstdint>
#include <string>

namespace cyber {
namespace scale {

// 1234567 -> "1,234,567".
std::string Commas(uint64_t v);

}  // namespace scale
}  // namespace cyber

#endif  // TESTS_SCALE_NUMBER_FORMAT_H_
