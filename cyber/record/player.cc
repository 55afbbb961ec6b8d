#include "cyber/record/player.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cyber/common/steady_time.h"
#include "glog/logging.h"

namespace cyber {
namespace record {
namespace {

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

ChannelQos QosOf(const RecordedChannel& c) {
  ChannelQos q;
  auto get = [&](const char* key) {
    auto it = c.metadata.find(key);
    return it == c.metadata.end() ? std::string() : it->second;
  };
  if (get("reliable") == "false") q.reliability = ChannelQos::Reliability::kBestEffort;
  if (c.transient_local) q.durability = ChannelQos::Durability::kTransientLocal;
  uint32_t depth;
  if (absl::SimpleAtoi(get("depth"), &depth) && depth > 0) q.depth = depth;
  // A replay at a rate comes in bursts the writers' own depth was not
  // chosen for: a deeper history keeps a reliable reader from losing any
  // (depth does not take part in matching).
  q.depth = std::max<uint32_t>(q.depth, 256);
  return q;
}

}  // namespace

PublisherFactory DomainPublishers(graph::DomainGraph* graph) {
  return [graph](const std::string& channel, const std::string& type_name,
                 const ChannelQos& qos) { return graph->Publisher(channel, type_name, qos); };
}

absl::StatusOr<std::unique_ptr<Player>> Player::Create(PublisherFactory publishers,
                                                       const Recording* recording,
                                                       PlayerOptions options) {
  if (!(options.rate > 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("play: rate (-r) ", options.rate, " must be greater than 0"));
  }
  if (options.start_offset < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "play: start offset (-s) ", absl::FormatDuration(options.start_offset), " is negative"));
  }
  if (options.begin_ns && options.end_ns && *options.begin_ns > *options.end_ns) {
    return absl::InvalidArgumentError(absl::StrCat("play: begin (-b) ", *options.begin_ns,
                                                   " is after end (-e) ", *options.end_ns));
  }
  for (const std::string& c : options.channels) {
    bool known = std::any_of(recording->channels().begin(), recording->channels().end(),
                             [&](const RecordedChannel& rc) { return rc.name == c; });
    if (!known) {
      std::vector<std::string> names;
      for (const RecordedChannel& rc : recording->channels()) names.push_back(rc.name);
      return absl::InvalidArgumentError(absl::StrCat(
          "play: channel (-c) \"", c, "\" is not in the recording; it has: ",
          names.empty() ? "(no channel)" : absl::StrJoin(names, ", ")));
    }
  }
  return std::unique_ptr<Player>(new Player(std::move(publishers), recording, std::move(options)));
}

Player::Player(PublisherFactory publishers, const Recording* recording, PlayerOptions options)
    : publishers_(std::move(publishers)), recording_(recording), options_(std::move(options)) {
  const std::vector<RecordedMessage>& all = recording_->messages();
  first_ns_ = all.empty() ? 0 : all.front().log_time;
  begin_ns_ = std::max<uint64_t>(options_.begin_ns.value_or(first_ns_),
                                 first_ns_ + absl::ToInt64Nanoseconds(options_.start_offset));
  end_ns_ = options_.end_ns.value_or(UINT64_MAX);
  std::set<std::string> transient;
  for (const RecordedChannel& c : recording_->channels()) {
    if (c.transient_local) transient.insert(c.name);
  }
  std::map<std::string, const RecordedMessage*> last_before;
  for (const RecordedMessage& m : all) {
    if (Contains(options_.exclude, m.channel)) continue;
    if (!options_.channels.empty() && !Contains(options_.channels, m.channel)) continue;
    if (m.log_time < begin_ns_) {
      if (transient.count(m.channel) > 0) last_before[m.channel] = &m;
      continue;
    }
    if (m.log_time > end_ns_) break;
    selected_.push_back(&m);
  }
  for (const auto& [channel, m] : last_before) latched_.push_back(m);
  MutexLock lock(&mu_);
  progress_.total = selected_.size();
  progress_.duration_ns = selected_.empty() ? 0 : selected_.back()->log_time - begin_ns_;
}

bool Player::WaitUntil(absl::Time deadline, bool* held, bool for_message) {
  MutexLock lock(&mu_);
  *held = false;
  while (true) {
    if (stopped_) return false;
    if (paused_) {
      *held = true;
      if (steps_ > 0) {  // a step: the next message goes now
        if (for_message) --steps_;
        return true;
      }
      const absl::Time paused_at = SteadyNow();
      progress_.holding = true;
      while (paused_ && steps_ == 0 && !stopped_) changed_.Wait(&mu_);
      progress_.holding = false;
      if (!paused_) deadline += SteadyNow() - paused_at;  // resumed: the schedule moves
      continue;
    }
    // On the steady clock (SteadyNow's), never the wall clock.
    absl::Duration left = deadline - SteadyNow();
    if (left <= absl::ZeroDuration()) return true;
    changed_.WaitUntil(&mu_, std::chrono::steady_clock::now() +
                                 std::chrono::nanoseconds(absl::ToInt64Nanoseconds(left)));
  }
}

absl::Status Player::Run() {
  absl::Status s = Play();
  MutexLock lock(&mu_);
  progress_.done = true;
  return s;
}

absl::Status Player::Play() {
  if (selected_.empty() && latched_.empty()) {
    return absl::NotFoundError(absl::StrCat(
        "play: no message selected: the recording has ", recording_->messages().size(),
        " messages; the channels (-c/-k) and times (-b/-e/-s) leave none"));
  }
  std::map<std::string, std::shared_ptr<RemotePublisher>> publishers;
  for (const RecordedChannel& c : recording_->channels()) {
    if (Contains(options_.exclude, c.name)) continue;
    if (!options_.channels.empty() && !Contains(options_.channels, c.name)) continue;
    absl::StatusOr<std::shared_ptr<RemotePublisher>> p =
        publishers_(c.name, c.type_name, QosOf(c));
    if (!p.ok()) return p.status();
    publishers[c.name] = *std::move(p);
  }
  absl::Time wait_end = SteadyNow() + options_.wait_for_readers;
  std::vector<std::string> unread;
  for (const auto& [name, p] : publishers) {
    while (!p->Wanted() && SteadyNow() < wait_end) absl::SleepFor(absl::Milliseconds(10));
    if (!p->Wanted()) unread.push_back(name);
  }
  {
    MutexLock lock(&mu_);
    progress_.unread_channels = unread;
  }
  if (!unread.empty()) {
    LOG(WARNING) << "play: no reader matched within "
                 << absl::FormatDuration(options_.wait_for_readers) << " on "
                 << absl::StrJoin(unread, ", ") << "; their volatile messages reach nobody";
  }
  auto publish = [&](const RecordedMessage& m) -> absl::Status {
    absl::Status s = publishers.at(m.channel)->PublishAt(
        m.data, absl::FromUnixNanos(static_cast<int64_t>(m.publish_time)));
    if (!s.ok()) {
      return absl::Status(s.code(), absl::StrCat("play: \"", m.channel, "\" message at log_time ",
                                                 m.log_time, " (sequence ", m.sequence,
                                                 "): ", s.message()));
    }
    return absl::OkStatus();
  };
  bool held;
  if (!WaitUntil(SteadyNow() + options_.delay, &held, /*for_message=*/false)) {
    return absl::OkStatus();
  }
  for (const RecordedMessage* m : latched_) {
    if (absl::Status s = publish(*m); !s.ok()) return s;
  }
  for (int pass = 1;; ++pass) {
    {
      MutexLock lock(&mu_);
      progress_.pass = pass;
      progress_.published = 0;
    }
    absl::Time start = SteadyNow();
    // Moved forward by the time spent paused, so the rest keep their spacing.
    absl::Duration shift = absl::ZeroDuration();
    for (const RecordedMessage* m : selected_) {
      absl::Duration at = absl::Nanoseconds(static_cast<double>(m->log_time - begin_ns_) /
                                            options_.rate);
      bool held;
      if (!WaitUntil(start + shift + at, &held, /*for_message=*/true)) return absl::OkStatus();
      if (held) shift = SteadyNow() - start - at;
      if (absl::Status s = publish(*m); !s.ok()) return s;
      MutexLock lock(&mu_);
      ++progress_.published;
      progress_.position_ns = m->log_time - begin_ns_;
    }
    // Nothing in the range to loop over (only values from before it).
    if (!options_.loop || selected_.empty()) break;
  }
  return absl::OkStatus();
}

void Player::Pause() {
  MutexLock lock(&mu_);
  paused_ = true;
  changed_.SignalAll();
}
void Player::Resume() {
  MutexLock lock(&mu_);
  paused_ = false;
  steps_ = 0;
  changed_.SignalAll();
}
void Player::TogglePause() {
  MutexLock lock(&mu_);
  paused_ = !paused_;
  steps_ = 0;
  changed_.SignalAll();
}
void Player::Step() {
  MutexLock lock(&mu_);
  if (paused_) ++steps_;
  changed_.SignalAll();
}
void Player::Stop() {
  MutexLock lock(&mu_);
  stopped_ = true;
  changed_.SignalAll();
}
PlayerProgress Player::Progress() const {
  MutexLock lock(&mu_);
  PlayerProgress p = progress_;
  p.paused = paused_;
  return p;
}

}  // namespace record
}  // namespace cyber
