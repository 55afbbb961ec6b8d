// shm_clean: removes the /dev/shm files of dead Fast-DDS participants
// (RemoveDeadPeerSegments, shm_cleanup.h) and the loan segments of dead
// loan writers (SweepAbandonedSegments, cyber/transport/loan/loan_segment.h),
// and prints what it did, one file a line. For users after a crash, and for CI after the tests:
//
//   bazel run //cyber/transport/dds:shm_clean
//   bazel-bin/cyber/transport/dds/shm_clean --fail_if_left
//
// Exit status: 0; 1 if something could not be judged or removed (see the
// "error" lines); with --fail_if_left, 2 if any Fast-DDS file is still in
// /dev/shm afterwards (a live participant's, or one this cleanup kept).

#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "cyber/transport/dds/shm_cleanup.h"
#include "cyber/transport/loan/loan_segment.h"

namespace {

void PrintEach(const char* label, const std::vector<std::string>& names) {
  for (const std::string& name : names)
    std::cout << label << ' ' << name << '\n';
}

}  // namespace

int main(int argc, char** argv) {
  bool fail_if_left = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--fail_if_left") == 0) {
      fail_if_left = true;
    } else {
      std::cerr << "shm_clean: unknown argument \"" << argv[i]
                << "\" (usage: shm_clean [--fail_if_left])\n";
      return 1;
    }
  }
  const cyber::dds::ShmCleanupReport report =
      cyber::dds::RemoveDeadPeerSegments();
  PrintEach("removed", report.removed);
  const std::vector<std::string> loans = cyber::loan::SweepAbandonedSegments();
  PrintEach("removed loan segment", loans);
  PrintEach("kept (in use)", report.kept_in_use);
  PrintEach("error", report.errors);
  const std::vector<std::string> left = cyber::dds::FastDdsShmFiles();
  std::cout << "shm_clean: " << report.removed.size() << " removed, " << loans.size()
            << " loan segments of dead writers removed, "
            << report.kept_in_use.size() << " kept in use, "
            << report.errors.size() << " errors; " << left.size()
            << " Fast-DDS files left in /dev/shm\n";
  if (fail_if_left && !left.empty()) {
    PrintEach("left", left);
    return 2;
  }
  return report.errors.empty() ? 0 : 1;
}
