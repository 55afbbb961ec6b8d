#include "tests/transport_bench/number_text.h"

#include "absl/strings/str_format.h"

namespace cyber {
namespace transport_bench {

std::string Grouped(double v) {
  const std::string digits = absl::StrFormat("%.0f", v < 0 ? -v : v);
  std::string out = v < 0 && digits != "0" ? "-" : "";
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace transport_bench
}  // namespace cyber
