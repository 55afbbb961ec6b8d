// What a cross-process test's own process needs, shared by
// cross_process_test and service_cross_process_test: a runtime on a DDS
// transport of a random domain (so tests running at the same time on this
// host never meet), a node on it, and the peers (testing/*) it starts on
// the same domain; plus the generous waits these tests use instead of
// asserting durations.
//
// Not thread-safe: one test thread drives it.

#ifndef CYBER_TRANSPORT_DDS_TESTING_DDS_TEST_PROCESS_H_
#define CYBER_TRANSPORT_DDS_TESTING_DDS_TEST_PROCESS_H_

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "cyber/runtime/runtime.h"
#include "cyber/transport/dds/dds_transport.h"
#include "cyber/transport/dds/testing/subprocess.h"
#include "cyber/node/node.h"
#include "gtest/gtest.h"

namespace cyber {
namespace dds_test {

// How long a test waits for a condition: it only bounds a failing test.
inline constexpr absl::Duration kPatience = absl::Seconds(30);

// A DDS domain in [1, 200] that no other process of this machine has
// claimed: random (from the OS's entropy: PIDs are the same in every Bazel
// sandbox), and claimed by binding the abstract Unix socket
// "cyber_dds_test_domain_<d>", which only one process can hold and the
// kernel releases when the process exits (kill -9 included), leaving no
// file behind. The claim is kept for the process's life, so two tests of
// one binary never share a domain either. Two test binaries running at the
// same time (Bazel runs several) would otherwise meet on one domain one
// time in 200 per pair, and read each other's messages.
inline uint32_t RandomDomain() {
  std::random_device rd;
  for (int attempt = 0; attempt < 400; ++attempt) {
    const uint32_t domain = 1 + rd() % 200;
    const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return domain;  // cannot claim: a random one, as before
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    const std::string name = "cyber_dds_test_domain_" + std::to_string(domain);
    std::memcpy(address.sun_path + 1, name.data(), name.size());  // [0] = 0: abstract
    const socklen_t length =
        static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
    if (bind(fd, reinterpret_cast<const sockaddr*>(&address), length) == 0) {
      return domain;  // `fd` stays open: the claim lasts as long as the process
    }
    close(fd);
  }
  return 1 + rd() % 200;  // every one claimed: a random one
}

// Polls `done` every 5 ms until it holds or `timeout` passes.
template <typename F>
bool Eventually(F done, absl::Duration timeout = kPatience) {
  const absl::Time deadline = absl::Now() + timeout;
  while (!done()) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(5));
  }
  return true;
}

class DdsTestProcess {
 public:
  // `process_name`: how peers name this process; a lease of 2 s, so a
  // killed peer is declared dead quickly.
  DdsTestProcess(const std::string& process_name, const std::string& runtime_name,
                 const std::string& node_name)
      : domain(RandomDomain()) {
    dds::DdsTransportOptions t;
    t.domain_id = domain;
    t.process_name = process_name;
    t.lease = absl::Seconds(2);
    transport = std::make_shared<dds::DdsTransport>(t);
    Runtime::Options o;
    o.name = runtime_name;
    o.remote = transport;
    runtime = std::make_unique<Runtime>(std::move(o));
    node = std::make_unique<Node>(node_name, runtime->scheduler(), runtime->bus());
  }

  ~DdsTestProcess() {
    node->Shutdown();
    runtime->Shutdown();
  }

  DdsTestProcess(const DdsTestProcess&) = delete;
  DdsTestProcess& operator=(const DdsTestProcess&) = delete;

  // Starts testing/`binary` in `mode` (with the mode's `options`) on this
  // domain and waits for its "ready" (a failed expectation if it never
  // comes).
  std::unique_ptr<Subprocess> StartPeer(const std::string& binary, const std::string& mode,
                                        const std::vector<std::string>& options = {}) {
    std::vector<std::string> argv = {RunfilePath("cyber/transport/dds/testing/" + binary),
                                     mode, std::to_string(domain)};
    argv.insert(argv.end(), options.begin(), options.end());
    auto peer = std::make_unique<Subprocess>(argv);
    EXPECT_TRUE(peer->WaitForLine("ready", kPatience).has_value()) << binary << " " << mode;
    return peer;
  }

  const uint32_t domain;
  std::shared_ptr<dds::DdsTransport> transport;
  std::unique_ptr<Runtime> runtime;
  std::unique_ptr<Node> node;
};

}  // namespace dds_test
}  // namespace cyber

#endif  // CYBER_TRANSPORT_DDS_TESTING_DDS_TEST_PROCESS_H_
