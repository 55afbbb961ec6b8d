// What the peer benchmarks' main() functions share: their own flags
// (--table_out=, --peer=, ...), taken out of argv before Google Benchmark
// sees it, since it rejects flags it does not know; and the Markdown table
// they print and write.

#ifndef TESTS_PEERS_BENCHMARK_IO_H_
#define TESTS_PEERS_BENCHMARK_IO_H_

#include <cstdio>
#include <string>

namespace cyber {
namespace peers {

// Removes every --<name>=<value> from argv; returns the last value, "" if
// absent.
inline std::string TakeFlag(const std::string& name, int* argc, char** argv) {
  const std::string prefix = "--" + name + "=";
  std::string value;
  int kept = 1;
  for (int i = 1; i < *argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind(prefix, 0) == 0) {
      value = arg.substr(prefix.size());
    } else {
      argv[kept++] = argv[i];
    }
  }
  *argc = kept;
  return value;
}

// Prints `table` under the heading "## <title>" and, if `path` is not
// empty, writes it there. False (with a message) if it cannot be written.
inline bool EmitTable(const std::string& title, const std::string& table,
                      const std::string& path) {
  std::printf("\n## %s\n\n%s", title.c_str(), table.c_str());
  if (path.empty()) return true;
  FILE* f = std::fopen(path.c_str(), "w");
  const bool written = f != nullptr && std::fputs(table.c_str(), f) >= 0;
  if (f != nullptr) std::fclose(f);
  if (!written) std::fprintf(stderr, "cannot write --table_out=%s\n", path.c_str());
  return written;
}

}  // namespace peers
}  // namespace cyber

#endif  // TESTS_PEERS_BENCHMARK_IO_H_
