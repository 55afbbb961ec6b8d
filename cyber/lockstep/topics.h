// The lockstep protocol's two DDS topics and their QoS (lockstep.proto).
//
// Grants are reliable, transient local, keep last 1: a process whose
// reader matches after the first grant went out still gets it, and the
// coordinator never sends grant k+1 before every process due at grant k
// answered it; a process not due that misses grant k had nothing to do at
// its instant (a message of that instant makes it run at it all the same),
// so keeping one loses nothing. Reports are reliable, volatile, keep all:
// each DONE counts. A process sends JOIN again until the first grant
// comes, so a JOIN sent before the coordinator's reader matched is not lost
// for good.

#ifndef CYBER_LOCKSTEP_TOPICS_H_
#define CYBER_LOCKSTEP_TOPICS_H_

#include <string>

#include "cyber/lockstep/lockstep.pb.h"
#include "cyber/transport/channel_qos.h"
#include "cyber/transport/remote_transport.h"

namespace cyber {
namespace lockstep {

inline constexpr char kGrantTopic[] = "/cyber/lockstep/grant";
inline constexpr char kReportTopic[] = "/cyber/lockstep/report";

inline RemoteEndpoint GrantEndpoint(const std::string& node) {
  RemoteEndpoint e;
  e.channel = kGrantTopic;
  e.type_name = Grant::descriptor()->full_name();
  e.qos.reliability = ChannelQos::Reliability::kReliable;
  e.qos.durability = ChannelQos::Durability::kTransientLocal;
  e.qos.history = ChannelQos::History::kKeepLast;
  e.qos.depth = 1;
  e.node = node;
  return e;
}

inline RemoteEndpoint ReportEndpoint(const std::string& node) {
  RemoteEndpoint e;
  e.channel = kReportTopic;
  e.type_name = Report::descriptor()->full_name();
  e.qos.reliability = ChannelQos::Reliability::kReliable;
  e.qos.durability = ChannelQos::Durability::kVolatile;
  e.qos.history = ChannelQos::History::kKeepAll;
  e.qos.depth = 1000;
  e.node = node;
  return e;
}

}  // namespace lockstep
}  // namespace cyber

#endif  // CYBER_LOCKSTEP_TOPICS_H_
