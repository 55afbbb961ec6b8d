#include "tests/transport_bench/free_domain.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <random>

namespace cyber {
namespace transport_bench {
namespace {

constexpr int kPortBase = 7400;      // PB
constexpr int kDomainGain = 250;     // DG
constexpr int kUnicastOffset = 10;   // d1: metatraffic unicast, participant 0
constexpr int kTries = 50;

// Whether UDP `port` can be bound on any local address now.
bool PortFree(int port) {
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return true;  // cannot tell: assume free
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  const bool free = bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
  close(fd);
  return free;
}

}  // namespace

uint32_t PickFreeDomain() {
  std::random_device rd;
  uint32_t domain = 1;
  for (int i = 0; i < kTries; ++i) {
    domain = 1 + rd() % kMaxDomainId;
    if (PortFree(kPortBase + kDomainGain * static_cast<int>(domain) + kUnicastOffset)) break;
  }
  return domain;
}

}  // namespace transport_bench
}  // namespace cyber
