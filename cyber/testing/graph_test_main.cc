// main() of every cyber_graph_test: GoogleTest's flags first, then the dag
// files the rule passed as --cyber_graph_dag=<path> arguments.

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
  // What gtest left: the rule's --cyber_graph_dag=<path> arguments, then
  // any gflags.
  constexpr char kDag[] = "--cyber_graph_dag=";
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind(kDag, 0) == 0) {
      cyber::g_dags->push_back(a.substr(sizeof(kDag) - 1));
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
