// main() of every cyber_graph_test: GoogleTest's flags first, then the dag
// files the rule passed as --cyber_graph_dag=<path> arguments, its
// --cyber_graph_strict=true|false, and its recording to replay
// (--cyber_graph_recording=<path>, --cyber_graph_recording_channel=<c>).

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
RecordingInput* g_recording = new RecordingInput();
}  // namespace

const std::vector<std::string>& GraphTestDags() { return *g_dags; }
bool GraphTestStrict() { return g_strict; }
const RecordingInput& GraphTestRecording() { return *g_recording; }

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
  constexpr char kRecording[] = "--cyber_graph_recording=";
  constexpr char kRecordingChannel[] = "--cyber_graph_recording_channel=";
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind(kDag, 0) == 0) {
      cyber::g_dags->push_back(a.substr(sizeof(kDag) - 1));
    } else if (a.rfind(kRecording, 0) == 0) {
      cyber::g_recording->path = a.substr(sizeof(kRecording) - 1);
    } else if (a.rfind(kRecordingChannel, 0) == 0) {
      cyber::g_recording->channels.push_back(a.substr(sizeof(kRecordingChannel) - 1));
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
