// RecordingReplay: feeds the messages of a recording (an MCAP file in the
// cyber conventions, cyber/record/mcap/recording.h) into a graph's
// channels, each at its recorded instant on the graph's simulated time.
// SimulatedGraph owns one when SimulatedGraph::Options::recording names a
// file, and calls it between its steps (simulated_graph.h says when); this
// class is the mechanism, the graph the driver.
//
// Why in the graph's own run loop, not as At() actions or timers: an
// action or a timer fires on the wheel's 2 ms ticks, and the wheel does not
// order the entries of one tick; a recorded message keeps its exact
// nanosecond instant, and the order of a recording is total. So the graph
// asks NextInstant() when it plans its next step and DeliverNext() when it
// has settled at an instant.
//
// The rules:
//  * Instant: a message is due at the graph's start plus its log_time less
//    the log_time of the recording's first message (of any channel, fed or
//    not, so that feeding fewer channels moves no message).
//  * Order: the recording's total order, (log_time, channel, writer,
//    sequence): Recording::messages() gives it.
//  * Only the channels asked for are fed; their messages are published as a
//    writer of node `<graph>_replay` in the graph would publish them
//    (node/serialized_writer.h: each reader's queue, in this process).
//  * A channel asked for must be in the recording, recorded with the
//    protobuf type the graph's readers use, and read (or written) by the
//    graph; otherwise Attach() fails, naming the recording's path, the
//    channel and both types.
//
// Threads: one owner (the graph's driving thread).

#ifndef CYBER_SIMULATION_RECORDING_REPLAY_H_
#define CYBER_SIMULATION_RECORDING_REPLAY_H_

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cyber/node/node.h"
#include "cyber/node/serialized_writer.h"
#include "cyber/record/mcap/recording.h"
#include "cyber/time/instant.h"

namespace cyber {

// What a graph replays: a recording and the channels of it to feed.
struct RecordingInput {
  std::string path;                   // an MCAP file; "": no replay
  std::vector<std::string> channels;  // fed, in any order; the rest is not
};

class RecordingReplay {
 public:
  // Reads the recording at `input.path` (errors: Recording::Load's, which
  // name the path); instants count from `start`. InvalidArgument naming the
  // path when no channel is asked for or one is asked for twice.
  static absl::StatusOr<std::unique_ptr<RecordingReplay>> Load(const RecordingInput& input,
                                                               Instant start);

  // Makes a writer per channel asked for on `node` (whose bus is the
  // graph's) and checks each against the recording. REQUIRES: the graph's
  // components are initialized (their readers fixed the channels' types).
  // Errors name the recording's path and the channel: FailedPrecondition
  // for a type that differs (both named), NotFound for a channel not in the
  // recording (the graph's type named, and the recording's channels) or
  // used by no one in the graph (the recorded type named).
  absl::Status Attach(Node* node);

  // The instant of the next message not delivered yet; InfiniteFuture()
  // when every one has been.
  Instant NextInstant() const;
  // Publishes the next message if it is due at or before `now`; returns
  // whether it did. REQUIRES: Attach() succeeded.
  bool DeliverNext(Instant now);

  const std::string& path() const { return path_; }
  size_t size() const { return feed_.size(); }  // messages of the fed channels
  size_t delivered() const { return next_; }
  // Messages whose bytes did not parse as the channel's type (logged).
  size_t refused() const { return refused_; }

 private:
  RecordingReplay(std::string path, record::Recording recording,
                  std::vector<std::string> channels, Instant start);

  const std::string path_;
  const record::Recording recording_;
  const std::vector<std::string> channels_;
  // The fed channels' messages, in the recording's order, with instants.
  struct Due {
    Instant at;
    const record::RecordedMessage* message;
  };
  std::vector<Due> feed_;
  size_t next_ = 0;
  size_t refused_ = 0;
  std::map<std::string, std::shared_ptr<SerializedWriter>> writers_;
};

}  // namespace cyber

#endif  // CYBER_SIMULATION_RECORDING_REPLAY_H_
