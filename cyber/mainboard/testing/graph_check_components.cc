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

CYBER_REGISTER_COMPONENT(GraphCheckPublisher)
CYBER_REGISTER_COMPONENT(GraphCheckSubscriber)
CYBER_REGISTER_COMPONENT(GraphCheckOtherType)

}  // namespace graph_check
}  // namespace cyber
