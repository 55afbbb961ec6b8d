#include "cyber/simulation/recording_replay.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"

namespace cyber {

namespace {

// "recording \"drive.mcap\": channel \"/imu\""
std::string Where(const std::string& path, const std::string& channel) {
  return absl::StrCat("recording \"", path, "\": channel \"", channel, "\"");
}

}  // namespace

absl::StatusOr<std::unique_ptr<RecordingReplay>> RecordingReplay::Load(
    const RecordingInput& input, Instant start) {
  if (input.channels.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "recording \"", input.path, "\": no channel to replay is given (name them: "
        "SimulatedGraph::Options::recording.channels, cyber_graph_test's recording_channels)"));
  }
  std::set<std::string> seen;
  for (const std::string& c : input.channels) {
    if (!seen.insert(c).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(Where(input.path, c), " is asked for twice"));
    }
  }
  absl::StatusOr<record::Recording> recording = record::Recording::Load(input.path);
  if (!recording.ok()) return recording.status();
  return std::unique_ptr<RecordingReplay>(
      new RecordingReplay(input.path, *std::move(recording), input.channels, start));
}

RecordingReplay::RecordingReplay(std::string path, record::Recording recording,
                                 std::vector<std::string> channels, Instant start)
    : path_(std::move(path)), recording_(std::move(recording)), channels_(std::move(channels)) {
  // The first message of the recording, whatever its channel, is at start.
  for (const record::FedMessage& f :
       recording_.Feed(std::set<std::string>(channels_.begin(), channels_.end()))) {
    feed_.push_back(Due{start + absl::Nanoseconds(static_cast<int64_t>(f.offset_ns)), f.message});
  }
}

absl::Status RecordingReplay::Attach(Node* node) {
  for (const std::string& channel : channels_) {
    const auto recorded = std::find_if(
        recording_.channels().begin(), recording_.channels().end(),
        [&](const record::RecordedChannel& c) { return c.name == channel; });
    const bool in_recording = recorded != recording_.channels().end();
    absl::StatusOr<std::shared_ptr<SerializedWriter>> writer =
        node->TryCreateSerializedWriter(channel);
    if (!writer.ok() && writer.status().code() == absl::StatusCode::kNotFound) {
      return absl::NotFoundError(absl::StrCat(
          Where(path_, channel),
          in_recording ? absl::StrCat(" (recorded as ", recorded->type_name, ")")
                       : std::string(" is not in the recording"),
          in_recording ? " is" : " and is", " read by no one in the graph (no graph type)"));
    }
    if (!writer.ok()) {  // a channel of a C++ type that is not a protobuf message
      return absl::FailedPreconditionError(absl::StrCat(
          Where(path_, channel), " is recorded as ",
          in_recording ? recorded->type_name : std::string("(not in the recording)"),
          ", but the graph's: ", writer.status().message()));
    }
    const std::string& graph_type = (*writer)->type_name();
    if (!in_recording) {
      std::vector<std::string> present;
      for (const record::RecordedChannel& c : recording_.channels()) {
        present.push_back(absl::StrCat(c.name, " (", c.type_name, ")"));
      }
      return absl::NotFoundError(absl::StrCat(
          Where(path_, channel), " (read by the graph as ", graph_type,
          ") is not in the recording; it has ",
          present.empty() ? std::string("no channel") : absl::StrJoin(present, ", ")));
    }
    if (recorded->type_name != graph_type) {
      return absl::FailedPreconditionError(absl::StrCat(
          Where(path_, channel), " is recorded as ", recorded->type_name,
          ", but the graph reads it as ", graph_type));
    }
    writers_[channel] = *std::move(writer);
  }
  return absl::OkStatus();
}

Instant RecordingReplay::NextInstant() const {
  return next_ < feed_.size() ? feed_[next_].at : Instant::InfiniteFuture();
}

bool RecordingReplay::DeliverNext(Instant now) {
  if (next_ >= feed_.size() || feed_[next_].at > now) return false;
  const record::RecordedMessage& m = *feed_[next_++].message;
  // Attach() made a writer for every fed channel.
  if (!writers_.at(m.channel)->Write(m.data)) ++refused_;
  return true;
}

}  // namespace cyber
