// main() of every cyber_graph_test: GoogleTest's flags first, then the dag
// files the rule passed as --cyber_graph_dag=<path> arguments and its
// --cyber_graph_strict=true|false.

#include <cstdio>
#include <string>
#include <vector>

#include "cyber/testing/graph_test.h"
#include "gflags/gflags.h"
#include "glog/logging.h"
#include "gtest/gtest.h"

namespace cyber {
namespace {
std::vector<std::string>* g_dags = new std::vector<std::string>();
bool g_strict = false;
}  // namespace

const std::vector<std::string>& GraphTestDags() { return *g_dags; }
bool GraphTestStrict() { return g_strict; }

absl::Status GraphTest::Launch() {
  absl::Status s = graph_->Launch(GraphTestDags());
  if (!s.ok()) LOG(ERROR) << "GraphTest::Launch(): " << s.message();
  return s;
}

}  // namespace cyber

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  // What gtest left: the rule's --cyber_graph_dag=<path> arguments, then
  // any gflags.
  constexpr char kDag[] = "--cyber_graph_dag=";
  constexpr char kStrict[] = "--cyber_graph_strict=";
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind(kDag, 0) == 0) {
      cyber::g_dags->push_back(a.substr(sizeof(kDag) - 1));
    } else if (a.rfind(kStrict, 0) == 0) {
      const std::string value = a.substr(sizeof(kStrict) - 1);
      if (value != "true" && value != "false") {
        std::fprintf(stderr, "graph test: %s: not true or false\n", a.c_str());
        return 2;
      }
      cyber::g_strict = value == "true";
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
