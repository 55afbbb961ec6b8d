// The peer benchmarks' own flags (--table_out=, --peer=, ...): taken out of
// argv before Google Benchmark sees it, since it rejects flags it does not
// know.

#ifndef TESTS_PEERS_TAKE_FLAG_H_
#define TESTS_PEERS_TAKE_FLAG_H_

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

}  // namespace peers
}  // namespace cyber

#endif  // TESTS_PEERS_TAKE_FLAG_H_
