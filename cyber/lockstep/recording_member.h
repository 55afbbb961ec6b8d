// RecordingMember: a recording (MCAP, cyber_recorder's) played into a
// lockstep run as one more process of it. The coordinator's program
// (cyber_launch, cyber_lockstep) runs it beside the coordinator, on a DDS
// participant of its own named `process` ("recording"), which the
// coordinator expects like any other process.
//
// Each recorded message of the chosen channels is sent at its recorded
// instant on the run's time,
//
//   instant = log_time - the recording's first log_time (of any channel),
//
// in the recording's order (instant, channel, writer, sequence), through a
// LockstepTransport: stamped with that instant and counted, so the
// coordinator moves time only once every process has delivered it, and
// each receiving process hands it to its readers at that instant after its
// own events of the instant, in (instant, writer process, channel,
// sequence) order — the rule of every lockstep message. The run's
// processes see the recording as a process that writes those channels;
// nothing else about it differs from the real writers.
//
// A channel is sent with the writer's recorded type and a QoS every reader
// accepts: reliable, keep all, and transient local if the recorded channel
// was. The run needs a reader of each chosen channel in some other process
// only to match; the join waits for every reader to match.
//
// Threads: as LockstepProcess (the hooks run on its member's thread).

#ifndef CYBER_LOCKSTEP_RECORDING_MEMBER_H_
#define CYBER_LOCKSTEP_RECORDING_MEMBER_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cyber/lockstep/lockstep_process.h"
#include "cyber/record/mcap/recording.h"
#include "cyber/transport/remote_transport.h"

namespace cyber {
namespace lockstep {

struct RecordingMemberOptions {
  std::string path;                   // the MCAP file
  std::vector<std::string> channels;  // the channels to play (at least one)
  std::string process = "recording";  // its name in the run
};

class RecordingMember {
 public:
  // Reads the recording and opens a publisher per channel on `real`, a
  // transport of its own (its participant is this member's). InvalidArgument
  // naming the file and the channel for a channel the recording does not
  // have, or no channel; the recording's and the transport's errors.
  static absl::StatusOr<std::unique_ptr<RecordingMember>> Open(
      std::shared_ptr<RemoteTransport> real, RecordingMemberOptions options);
  ~RecordingMember();

  // Joins the run (the coordinator must expect options.process).
  absl::Status Join();
  std::string WaitForStop() { return process_->WaitForStop(); }
  // Messages sent so far, and in all.
  uint64_t sent() const { return next_.load(); }
  uint64_t total() const { return messages_.size(); }

 private:
  RecordingMember(RecordingMemberOptions options, record::Recording recording,
                  std::shared_ptr<RemoteTransport> real);
  absl::Status OpenPublishers();
  void RunUntil(int64_t instant_ns);
  int64_t NextEvent() const;

  const RecordingMemberOptions options_;
  const std::shared_ptr<RemoteTransport> real_;
  record::Recording recording_;
  // The messages to send, in the recording's order, with their instants
  // (Recording::Feed: pointers into recording_).
  std::vector<record::FedMessage> messages_;
  std::atomic<uint64_t> next_{0};  // the member's thread writes it
  std::atomic<int64_t> now_ns_{0};
  std::unique_ptr<LockstepProcess> process_;
  std::map<std::string, std::shared_ptr<RemotePublisher>> publishers_;
};

}  // namespace lockstep
}  // namespace cyber

#endif  // CYBER_LOCKSTEP_RECORDING_MEMBER_H_
