// main() of every cyber_graph_test: GoogleTest's flags first, then the dag
// files the rule passed as arguments.

#include <string>
#include <vector>

#include "cyber/testing/graph_test.h"
#include "gflags/gflags.h"
#include "glog/logging.h"
#include "gtest/gtest.h"

namespace cyber {
namespace {
std::vector<std::string>* g_dags = new std::vector<std::string>();
}  // namespace

const std::vector<std::string>& GraphTestDags() { return *g_dags; }

}  // namespace cyber

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  // What gtest left: program name, the dag files, then any gflags.
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.size() > 4 && a.compare(a.size() - 4, 4, ".dag") == 0 && a[0] != '-') {
      cyber::g_dags->push_back(a);
    } else {
      argv[out++] = argv[i];
    }
  }
  argc = out;
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  google::InitGoogleLogging(argv[0]);
  FLAGS_logtostderr = true;
  return RUN_ALL_TESTS();
}
