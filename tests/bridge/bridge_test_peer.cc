// A peer for cyber_bridge's service and publish test: on the DDS domain
// given on the command line, announced as "bridge_peer" (so the bridge
// sees its service and channels), it
//   - serves /bridge_test/add (AddRequest -> AddResponse: the sum), and
//   - reads /bridge_test/cmd (AddRequest) and answers each message on
//     /bridge_test/ack (AddResponse: the sum), so a client that publishes
//     through the bridge sees, through the bridge, that the graph got it.
// Prints "ready" once its endpoints exist and the announcer runs; exits
// when stdin closes.
//
//   bridge_test_peer bridge <domain>

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "cyber/graph/runtime_announcer.h"
#include "cyber/node/node.h"
#include "cyber/transport/dds/testing/peer_main.h"
#include "cyber/transport/dds/testing/service_messages.pb.h"

namespace cyber {
namespace dds_test {
namespace {

int Run(Runtime* rt) {
  Node node("bridge_peer", rt->scheduler(), rt->bus());
  auto service = node.TryCreateService<AddRequest, AddResponse>(
      "/bridge_test/add",
      [](const std::shared_ptr<AddRequest>& req, std::shared_ptr<AddResponse>& resp) {
        resp->set_sum(req->a() + req->b());
        resp->set_answered_by("callback");
      });
  if (!service.ok()) {
    Say(absl::StrCat("error ", service.status().message()));
    return 1;
  }
  auto writer = node.TryCreateWriter<AddResponse>("/bridge_test/ack");
  if (!writer.ok()) {
    Say(absl::StrCat("error ", writer.status().message()));
    return 1;
  }
  std::shared_ptr<Writer<AddResponse>> ack = *writer;
  ReaderConfig config;
  config.channel_name = "/bridge_test/cmd";
  auto reader = node.TryCreateReader<AddRequest>(
      config, [ack](const std::shared_ptr<const AddRequest>& cmd) {
        Say(absl::StrCat("received ", cmd->a(), " ", cmd->b()));
        AddResponse r;
        r.set_sum(cmd->a() + cmd->b());
        r.set_answered_by("channel");
        ack->Write(r);
      });
  if (!reader.ok()) {
    Say(absl::StrCat("error ", reader.status().message()));
    return 1;
  }
  graph::RuntimeAnnounceOptions options;
  absl::StatusOr<std::unique_ptr<graph::GraphAnnouncer>> announcer =
      graph::AnnounceRuntime(*rt, options);
  if (!announcer.ok()) {
    Say(absl::StrCat("error ", announcer.status().message()));
    return 1;
  }
  Say("ready");
  WaitForStdinEof();
  announcer->reset();
  return 0;
}

}  // namespace
}  // namespace dds_test
}  // namespace cyber

int main(int argc, char** argv) {
  const cyber::dds_test::PeerArgs args = cyber::dds_test::ParsePeerArgs(argc, argv);
  std::unique_ptr<cyber::Runtime> rt = cyber::dds_test::PeerRuntime(args);
  const int rc = cyber::dds_test::Run(rt.get());
  rt->Shutdown();
  return rc;
}
