#include "cyber/lockstep/recording_member.h"

#include <unistd.h>

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cyber/common/log.h"

namespace cyber {
namespace lockstep {

absl::StatusOr<std::unique_ptr<RecordingMember>> RecordingMember::Open(
    std::shared_ptr<RemoteTransport> real, RecordingMemberOptions options) {
  if (real == nullptr) return absl::InvalidArgumentError("lockstep recording: no transport");
  if (options.channels.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "lockstep recording \"", options.path, "\": no channel to play (name at least one)"));
  }
  absl::StatusOr<record::Recording> recording = record::Recording::Load(options.path);
  if (!recording.ok()) return recording.status();
  std::unique_ptr<RecordingMember> m(
      new RecordingMember(std::move(options), *std::move(recording), std::move(real)));
  if (absl::Status s = m->OpenPublishers(); !s.ok()) return s;
  return m;
}

RecordingMember::RecordingMember(RecordingMemberOptions options, record::Recording recording,
                                 std::shared_ptr<RemoteTransport> real)
    : options_(std::move(options)), real_(std::move(real)), recording_(std::move(recording)) {
  process_ = std::make_unique<LockstepProcess>(real_, [this] { return now_ns_.load(); });
}

RecordingMember::~RecordingMember() {
  process_.reset();  // leaves the run; no hook after this
  publishers_.clear();
}

absl::Status RecordingMember::OpenPublishers() {
  std::map<std::string, const record::RecordedChannel*> recorded;
  std::vector<std::string> names;
  for (const record::RecordedChannel& c : recording_.channels()) {
    recorded[c.name] = &c;
    names.push_back(c.name);
  }
  const std::set<std::string> chosen(options_.channels.begin(), options_.channels.end());
  for (const std::string& channel : chosen) {
    auto it = recorded.find(channel);
    if (it == recorded.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "lockstep recording \"", options_.path, "\": channel \"", channel,
          "\" is not in it (it has: ", absl::StrJoin(names, ", "), ")"));
    }
    RemoteEndpoint e;
    e.channel = channel;
    e.type_name = it->second->type_name;
    e.node = options_.process;
    e.qos.reliability = ChannelQos::Reliability::kReliable;
    e.qos.history = ChannelQos::History::kKeepAll;
    e.qos.depth = 1000;
    e.qos.durability = it->second->transient_local ? ChannelQos::Durability::kTransientLocal
                                                   : ChannelQos::Durability::kVolatile;
    absl::StatusOr<std::shared_ptr<RemotePublisher>> out = process_->transport()->Publisher(e);
    if (!out.ok()) return out.status();
    publishers_[channel] = *std::move(out);
  }
  messages_ = recording_.Feed(chosen);
  return absl::OkStatus();
}

absl::Status RecordingMember::Join() {
  SimulationHooks hooks;
  hooks.run_until = [this](int64_t t) { RunUntil(t); };
  hooks.next_event_ns = [this] { return NextEvent(); };
  MemberOptions member;
  member.process = options_.process;
  member.host = real_->self().host;
  member.pid = getpid();
  return process_->Join(std::move(member), std::move(hooks));
}

void RecordingMember::RunUntil(int64_t instant_ns) {
  now_ns_.store(instant_ns);
  uint64_t next = next_.load();
  while (next < messages_.size()) {
    const record::RecordedMessage& m = *messages_[next].message;
    const int64_t at = static_cast<int64_t>(messages_[next].offset_ns);
    if (at > instant_ns) break;
    // Stamped with its own instant (the grant may be later, when the
    // run jumped: it is not, as NextEvent() named it).
    now_ns_.store(at);
    if (absl::Status s = publishers_.at(m.channel)->Publish(m.data); !s.ok()) {
      AERROR << "lockstep recording \"" << options_.path << "\": message " << next << " on "
             << m.channel << " not sent: " << s.message();
    }
    next_.store(++next);
  }
  now_ns_.store(instant_ns);
}

int64_t RecordingMember::NextEvent() const {
  const uint64_t next = next_.load();
  if (next >= messages_.size()) return -1;
  return static_cast<int64_t>(messages_[next].offset_ns);
}

}  // namespace lockstep
}  // namespace cyber
