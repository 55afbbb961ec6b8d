// Component<M>: a component whose Proc(msg) runs for each message on the
// channel of its first `readers` entry in the graph.
//
//   class Fusion : public cyber::Component<ImuReading> {
//    public:
//     bool Init() override { ... }
//     bool Proc(const std::shared_ptr<ImuReading>& msg) override { ... }
//   };
//   CYBER_REGISTER_COMPONENT(Fusion)
//
// Messages arrive in write order, in scheduler routines, never concurrently
// with each other; if Proc() falls behind, the reader's pending queue
// (`pending_queue_size`, default 1) keeps the newest messages and the
// dropped ones are counted. Messages are shared and immutable by contract:
// Proc() receives std::shared_ptr<M> (Cyber RT's signature) but must not
// modify the message. Shutdown() shuts the reader down synchronously.

#ifndef CYBER_COMPONENT_COMPONENT_H_
#define CYBER_COMPONENT_COMPONENT_H_

#include <memory>

#include "absl/strings/str_cat.h"
#include "cyber/component/component_base.h"

namespace cyber {

template <typename M>
class Component : public ComponentBase {
 public:
  virtual bool Proc(const std::shared_ptr<M>& msg) = 0;

  using ComponentBase::Initialize;
  absl::Status Initialize(const dag::ComponentSpec& spec,
                          const ComponentContext& context) override {
    absl::Status s = SetUp(spec.class_name, spec.name, spec.config_file_path,
                           spec.flag_file_path, context);
    if (!s.ok()) return s;
    if (spec.readers.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          spec.where.ToString(), ": component \"", spec.name,
          "\": readers: a message component needs a channel to read"));
    }
    if (!Init()) {
      return absl::FailedPreconditionError(absl::StrCat(
          spec.where.ToString(), ": component \"", name(), "\" (",
          class_name(), "): Init() returned false"));
    }
    const dag::ReaderConfig& reader = spec.readers.front();
    auto created = node()->template TryCreateReader<M>(
        reader.channel,
        [this](const std::shared_ptr<const M>& msg) {
          if (this->shut_down_.load(std::memory_order_acquire)) return;
          this->RecordProc(Proc(std::const_pointer_cast<M>(msg)));
        },
        reader.pending_queue_size);
    if (!created.ok()) {
      return absl::Status(created.status().code(),
                          absl::StrCat(reader.where.ToString(), ": ",
                                       created.status().message()));
    }
    reader_ = *std::move(created);
    return absl::OkStatus();
  }

  void Shutdown() override {
    if (this->shut_down_.exchange(true)) return;
    if (reader_) reader_->Shutdown();  // synchronous
    // And every other reader it created in Init(), before Clear().
    if (this->node()) this->node()->Shutdown();
    Clear();
  }

  ComponentStats Stats() const override {
    ComponentStats s;
    s.name = name();
    s.class_name = class_name();
    s.procs = this->procs_.load();
    s.proc_failures = this->proc_failures_.load();
    if (reader_) s.dropped = reader_->stats().dropped_overflow;
    return s;
  }

 private:
  std::shared_ptr<Reader<M>> reader_;
};

}  // namespace cyber

#endif  // CYBER_COMPONENT_COMPONENT_H_
