// Internal to this repository: not part of the API (docs/api.md lists the
// API headers); its Bazel target is visible only inside this repository.
//
// Components for tests of the graph checks (strict mode, unread_outputs,
// error output) through the mainboard binary and cyber_graph_test: a
// publisher on a fixed channel and two subscribers of different types, so a
// dag alone makes a typo, an unread output or a type mismatch; a server of
// a fixed service and a client of a misspelling of it.
//
//   GraphCheckPublisher   timer component, writes a GraphCheckSample on
//                         kGraphCheckChannel every interval
//   GraphCheckSubscriber  Component<GraphCheckSample>: counts its messages
//   GraphCheckOtherType   Component<GraphCheckOther>: nobody writes this
//                         type; reading kGraphCheckChannel is a mismatch
//   GraphCheckServer      timer component, serves kGraphCheckService
//   GraphCheckTypoCaller  timer component, a client of
//                         kGraphCheckServiceTypo (which nobody serves)
//
// Test-only; registered by static initializers (the library is alwayslink).

#ifndef CYBER_MAINBOARD_GRAPH_CHECK_COMPONENTS_H_
#define CYBER_MAINBOARD_GRAPH_CHECK_COMPONENTS_H_

#include <atomic>
#include <cstdint>
#include <memory>

#include "cyber/component/component.h"
#include "cyber/component/timer_component.h"
#include "cyber/node/writer.h"
#include "cyber/service/client.h"
#include "cyber/service/service.h"

namespace cyber {
namespace graph_check {

inline constexpr char kGraphCheckChannel[] = "/graph_check/sample";
inline constexpr char kGraphCheckService[] = "/graph_check/route";
inline constexpr char kGraphCheckServiceTypo[] = "/graph_check/rout";

struct GraphCheckSample {
  uint64_t seq = 0;
};
struct GraphCheckOther {
  int value = 0;
};

class GraphCheckPublisher : public TimerComponent {
 public:
  bool Init() override;
  bool Proc() override;

 private:
  std::shared_ptr<Writer<GraphCheckSample>> writer_;
  uint64_t seq_ = 0;
};

class GraphCheckSubscriber : public Component<GraphCheckSample> {
 public:
  bool Init() override { return true; }
  bool Proc(const std::shared_ptr<GraphCheckSample>&) override {
    received_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  uint64_t received() const { return received_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> received_{0};
};

class GraphCheckOtherType : public Component<GraphCheckOther> {
 public:
  bool Init() override { return true; }
  bool Proc(const std::shared_ptr<GraphCheckOther>&) override { return true; }
};

class GraphCheckServer : public TimerComponent {
 public:
  bool Init() override;
  bool Proc() override { return true; }

 private:
  std::shared_ptr<Service<GraphCheckSample, GraphCheckSample>> service_;
};

class GraphCheckTypoCaller : public TimerComponent {
 public:
  bool Init() override;
  bool Proc() override { return true; }

 private:
  std::shared_ptr<Client<GraphCheckSample, GraphCheckSample>> client_;
};

}  // namespace graph_check
}  // namespace cyber

#endif  // CYBER_MAINBOARD_GRAPH_CHECK_COMPONENTS_H_
