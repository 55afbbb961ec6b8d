// Player: publishes a recording back onto the domain, on the wall clock
// at its recorded pace (or `rate` times it), each message with its
// original send stamp (RemotePublisher::PublishAt: readers see the
// writer's stamp, not the replay's), from a start offset to an end, once
// or in a loop; pausable and steppable from another thread (the
// terminal's keys).
//
// Which messages: the recording's, in its one total order (log_time,
// channel, writer, sequence), restricted to `channels` (if any) minus
// `exclude`, with log_time in [begin, end]. A transient-local channel's
// last value before `begin` is published first (a map, a calibration: what
// a reader joining at that instant would have had).
//
// When: message i goes at start + (log_time_i - begin) / rate on the
// steady clock; a slow publish delays the following ones, never skips
// them. Readers must be matched first, or volatile messages go nowhere:
// Run() waits up to `wait_for_readers` for each channel's publisher to
// see a reader and says which saw none.
//
// Threads: Run() on one thread; Pause/Resume/Step/Stop/Progress from any.

#ifndef CYBER_RECORD_PLAYER_H_
#define CYBER_RECORD_PLAYER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "cyber/graph/domain_graph.h"
#include "cyber/record/mcap/recording.h"

namespace cyber {
namespace record {

struct PlayerOptions {
  double rate = 1.0;                                // -r, > 0
  absl::Duration start_offset = absl::ZeroDuration();  // -s, from the first message
  std::optional<uint64_t> begin_ns;                 // -b, log_time, ns since the epoch
  std::optional<uint64_t> end_ns;                   // -e
  bool loop = false;                                // -l
  absl::Duration delay = absl::ZeroDuration();      // -d, before the first message
  std::vector<std::string> channels;                // -c
  std::vector<std::string> exclude;                 // -k
  absl::Duration wait_for_readers = absl::Seconds(3);
};

struct PlayerProgress {
  uint64_t published = 0;
  uint64_t total = 0;         // selected messages per pass
  uint64_t position_ns = 0;   // log_time of the last published, from the first message
  uint64_t duration_ns = 0;   // of the selection
  int pass = 0;
  bool paused = false;
  bool done = false;
  std::vector<std::string> unread_channels;  // no reader matched when playing began
};

class Player {
 public:
  // InvalidArgument naming the option for a rate <= 0, begin after end, a
  // channel not in the recording; nothing selected is an error too.
  static absl::StatusOr<std::unique_ptr<Player>> Create(graph::DomainGraph* graph,
                                                        const Recording* recording,
                                                        PlayerOptions options);
  // Plays until the end (every pass if looping) or Stop(). A publish error
  // ends it, naming the channel and the message.
  absl::Status Run();

  void Pause();
  void Resume();
  void TogglePause();
  // While paused: publish the next message now.
  void Step();
  void Stop();
  PlayerProgress Progress() const;

 private:
  Player(graph::DomainGraph* graph, const Recording* recording, PlayerOptions options);
  // Waits until `deadline`, or while paused until a step or a resume
  // (`held` then says the schedule must move); false when stopped.
  bool WaitUntil(absl::Time deadline, bool* held);

  graph::DomainGraph* const graph_;
  const Recording* const recording_;
  const PlayerOptions options_;
  std::vector<const RecordedMessage*> selected_;
  std::vector<const RecordedMessage*> latched_;  // transient-local values before begin
  uint64_t first_ns_ = 0, begin_ns_ = 0, end_ns_ = 0;

  mutable absl::Mutex mu_;
  bool paused_ ABSL_GUARDED_BY(mu_) = false;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  int steps_ ABSL_GUARDED_BY(mu_) = 0;
  PlayerProgress progress_ ABSL_GUARDED_BY(mu_);
};

}  // namespace record
}  // namespace cyber

#endif  // CYBER_RECORD_PLAYER_H_
