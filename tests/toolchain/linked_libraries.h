// Whether a shared library is mapped into this process, read from
// /proc/self/maps: what the no-Fast-DDS tests ask of their own binaries.
#ifndef TESTS_TOOLCHAIN_LINKED_LIBRARIES_H_
#define TESTS_TOOLCHAIN_LINKED_LIBRARIES_H_

#include <fstream>
#include <string>

namespace cyber {
namespace testing {

// True if a mapping of this process names a file containing `name`.
inline bool MapsLibrary(const std::string& name) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.find(name) != std::string::npos) return true;
  }
  return false;
}

}  // namespace testing
}  // namespace cyber

#endif  // TESTS_TOOLCHAIN_LINKED_LIBRARIES_H_
