#include "tests/scale/number_format.h"

#include "absl/strings/str_cat.h"

namespace cyber {
namespace scale {

std::string Commas(uint64_t v) {
  const std::string digits = absl::StrCat(v);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

}  // namespace scale
}  // namespace cyber
