#include "cyber/mainboard/testing/graph_check_components.h"

#include "cyber/common/log.h"
#include "cyber/component/component_registry.h"

namespace cyber {
namespace graph_check {

bool GraphCheckPublisher::Init() {
  auto writer = node()->TryCreateWriter<GraphCheckSample>(kGraphCheckChannel);
  if (!writer.ok()) {
    AERROR << writer.status().message();
    return false;
  }
  writer_ = *writer;
  return true;
}

bool GraphCheckPublisher::Proc() {
  auto sample = std::make_shared<GraphCheckSample>();
  sample->seq = ++seq_;
  return writer_->Write(std::move(sample));
}

bool GraphCheckServer::Init() {
  auto service = node()->TryCreateService<GraphCheckSample, GraphCheckSample>(
      kGraphCheckService, [](const std::shared_ptr<GraphCheckSample>& request,
                             std::shared_ptr<GraphCheckSample>& response) { *response = *request; });
  if (!service.ok()) {
    AERROR << service.status().message();
    return false;
  }
  service_ = *service;
  return true;
}

bool GraphCheckTypoCaller::Init() {
  auto client = node()->TryCreateClient<GraphCheckSample, GraphCheckSample>(kGraphCheckServiceTypo);
  if (!client.ok()) {
    AERROR << client.status().message();
    return false;
  }
  client_ = *client;
  return true;
}

CYBER_REGISTER_COMPONENT(GraphCheckPublisher)
CYBER_REGISTER_COMPONENT(GraphCheckServer)
CYBER_REGISTER_COMPONENT(GraphCheckTypoCaller)
CYBER_REGISTER_COMPONENT(GraphCheckSubscriber)
CYBER_REGISTER_COMPONENT(GraphCheckOtherType)

}  // namespace graph_check
}  // namespace cyber
