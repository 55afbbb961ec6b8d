// A program written the Cyber RT way (cyber::Init, a Node, a Writer), for
// domain_graph_test: it must be seen by the tools without doing anything
// for it. Writes a Ping on /talk every 20 ms until its stdin closes or it is
// stopped with SIGINT; prints "ready" once the writer exists.
//
//   cyber_init_peer --process_name=NAME   (CYBER_DOMAIN_ID from the test)

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <thread>

#include "absl/time/clock.h"
#include "cyber/init/init.h"
#include "cyber/node/node.h"
#include "cyber/transport/dds/testing/test_messages.pb.h"
#include "gflags/gflags.h"

int main(int argc, char** argv) {
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  if (!cyber::Init(argv[0])) return 1;
  {
    cyber::Node node("talker");
    auto writer = node.CreateWriter<cyber::dds_test::Ping>("/talk");
    if (writer == nullptr) return 1;
    std::printf("ready\n");
    std::fflush(stdout);
    std::atomic<bool> stdin_closed{false};
    std::thread watch([&stdin_closed] {
      char c;
      while (read(STDIN_FILENO, &c, 1) > 0) {
      }
      stdin_closed = true;
    });
    watch.detach();
    uint64_t seq = 0;
    while (cyber::OK() && !stdin_closed) {
      cyber::dds_test::Ping ping;
      ping.set_seq(++seq);
      writer->Write(ping);
      absl::SleepFor(absl::Milliseconds(20));  // paces the writes only; nothing waits on it
    }
  }
  cyber::Shutdown();
  return 0;
}
