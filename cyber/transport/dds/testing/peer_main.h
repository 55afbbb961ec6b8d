// What the cross-process test peers share: a runtime on a DDS transport of
// the domain given on the command line, and a line protocol with the test
// (the peer prints "ready" and its findings on stdout; the test may write
// commands on the peer's stdin, one a line, and closes it to ask the peer
// to exit cleanly, or kills it).

#ifndef CYBER_TRANSPORT_DDS_TESTING_PEER_MAIN_H_
#define CYBER_TRANSPORT_DDS_TESTING_PEER_MAIN_H_

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "cyber/runtime/runtime.h"
#include "cyber/transport/dds/dds_transport.h"

namespace cyber {
namespace dds_test {

// The data-sharing bound of both channels of mode "echo_shared" (the
// test's ends use the same).
inline constexpr uint32_t kSharedEchoBytes = 1u << 20;

// argv: <mode> <domain id> [<option>...]
struct PeerArgs {
  std::string mode;
  uint32_t domain = 0;
  std::vector<std::string> options;  // the mode's, e.g. "concurrency=4"
};

inline PeerArgs ParsePeerArgs(int argc, char** argv) {
  PeerArgs args;
  if (argc < 3 || !absl::SimpleAtoi(argv[2], &args.domain)) {
    std::fprintf(stderr, "usage: %s <mode> <domain id> [<option>...]\n", argv[0]);
    std::exit(2);
  }
  args.mode = argv[1];
  for (int i = 3; i < argc; ++i) args.options.emplace_back(argv[i]);
  return args;
}

inline std::unique_ptr<Runtime> PeerRuntime(const PeerArgs& args) {
  dds::DdsTransportOptions t;
  t.domain_id = args.domain;
  t.process_name = "dds_test_peer";
  t.lease = absl::Seconds(2);
  Runtime::Options o;
  o.name = "peer";
  o.remote = std::make_shared<dds::DdsTransport>(t);
  return std::make_unique<Runtime>(std::move(o));
}

inline void Say(const std::string& line) {
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

// The next line the test writes on our stdin, without the newline; empty
// once stdin is closed.
inline std::string ReadStdinLine() {
  std::string line;
  char c = 0;
  while (read(STDIN_FILENO, &c, 1) == 1) {
    if (c == '\n') return line;
    line.push_back(c);
  }
  return line;
}

// Blocks until the test closes our stdin.
inline void WaitForStdinEof() {
  char buf[64];
  while (read(STDIN_FILENO, buf, sizeof(buf)) > 0) {
  }
}

}  // namespace dds_test
}  // namespace cyber

#endif  // CYBER_TRANSPORT_DDS_TESTING_PEER_MAIN_H_
