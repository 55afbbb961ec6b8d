// A peer built from another, incompatible version of cyber.dds_test.Ping
// (v2/test_messages_v2.proto): it writes such Pings on /ping, one every
// 10 ms, until stdin closes. The test's reader must drop each one, count it
// and name this process, and keep running.
//
//   dds_test_peer_v2 write <domain>

#include <atomic>
#include <thread>

#include "absl/time/clock.h"
#include "cyber/transport/dds/testing/peer_main.h"
#include "cyber/transport/dds/testing/v2/test_messages_v2.pb.h"
#include "cyber/node/node.h"

int main(int argc, char** argv) {
  using namespace cyber::dds_test;  // NOLINT
  const PeerArgs args = ParsePeerArgs(argc, argv);
  std::unique_ptr<cyber::Runtime> rt = PeerRuntime(args);
  int rc = 0;
  {
    cyber::Node node("v2", rt->scheduler(), rt->bus());
    auto writer = node.TryCreateWriter<Ping>("/ping");
    if (!writer.ok()) {
      Say("error");
      rc = 1;
    } else {
      Say("ready");
      std::atomic<bool> done{false};
      std::thread writes([&] {
        Ping ping;
        ping.mutable_stamp()->set_note("from version 2");
        while (!done.load()) {
          (*writer)->Write(ping);
          absl::SleepFor(absl::Milliseconds(10));
        }
      });
      WaitForStdinEof();
      done = true;
      writes.join();
    }
  }
  rt->Shutdown();
  return rc;
}
