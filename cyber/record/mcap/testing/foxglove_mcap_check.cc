#include "cyber/record/mcap/testing/foxglove_mcap_check.h"

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace cyber {
namespace record {
namespace testing {
namespace {

std::string ScriptPath() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  std::string base = srcdir != nullptr ? srcdir : ".";
  return absl::StrCat(base, "/", workspace != nullptr ? workspace : "cyber_timer",
                      "/cyber/record/mcap/testing/check_mcap.js");
}

std::string Quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

}  // namespace

absl::StatusOr<std::string> CheckWithFoxgloveMcap(const std::string& path, bool truncated) {
  std::string command = absl::StrCat("node ", Quoted(ScriptPath()), " ", Quoted(path),
                                     truncated ? " --truncated" : "", " 2>&1");
  std::FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) return absl::InternalError(absl::StrCat("cannot run: ", command));
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  int status = pclose(p);
  absl::string_view line = absl::StripTrailingAsciiWhitespace(out);
  if (status != 0 || !absl::StartsWith(line, "OK ")) {
    return absl::InternalError(absl::StrCat("Foxglove's MCAP reader on ", path, " (exit ",
                                            WIFEXITED(status) ? WEXITSTATUS(status) : -1,
                                            "): ", line));
  }
  return std::string(line.substr(3));
}

}  // namespace testing
}  // namespace record
}  // namespace cyber
