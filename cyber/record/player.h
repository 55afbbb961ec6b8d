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
// them; a pause moves the rest by its length, and a step sends the next
// message at once, the rest keeping their spacing from it. Readers must be matched first, or volatile messages go nowhere:
// Run() waits up to `wait_for_readers` for each channel's publisher to
// see a reader and says which saw none.
//
// Threads: Run() on one thread; Pause/Resume/Step/Stop/Progress from any.

#ifndef CYBER_RECORD_PLAYER_H_
#define CYBER_RECORD_PLAYER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cyber/common/mutex.h"
#include "cyber/graph/domain_graph.h"
#include "cyber/record/mcap/recording.h"
#include "cyber/transport/channel_qos.h"
#include "cyber/transport/remote_transport.h"

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
  // Paused and waiting to send the next message (the pause has reached
  // the playing thread: a Resume() from here moves the schedule).
  bool holding = false;
  bool done = false;
  std::vector<std::string> unread_channels;  // no reader matched when playing began
};

// Where the player's messages go: a publisher per channel
// (DomainGraph::Publisher for the domain; a fake in tests).
using PublisherFactory = std::function<absl::StatusOr<std::shared_ptr<RemotePublisher>>(
    const std::string& channel, const std::string& type_name, const ChannelQos& qos)>;
PublisherFactory DomainPublishers(graph::DomainGraph* graph);

class Player {
 public:
  // InvalidArgument naming the option for a rate <= 0, begin after end, a
  // channel not in the recording; nothing selected is an error too.
  // `recording` must outlive the player.
  static absl::StatusOr<std::unique_ptr<Player>> Create(PublisherFactory publishers,
                                                        const Recording* recording,
                                                        PlayerOptions options);
  // Plays until the end (every pass if looping) or Stop(). A publish error
  // ends it, naming the channel and the message. Progress().done is set
  // when it returns, whatever it returns.
  absl::Status Run();

  void Pause();
  void Resume();
  void TogglePause();
  // While paused: publish the next message now.
  void Step();
  void Stop();
  PlayerProgress Progress() const;

 private:
  Player(PublisherFactory publishers, const Recording* recording, PlayerOptions options);
  absl::Status Play();
  // Waits until `deadline`; a pause moves the deadline by its length (a
  // step sends at once). `held`: it was paused (the caller re-anchors the
  // schedule); false when stopped. A step is used up only by a wait
  // `for_message` (not by the start's delay).
  bool WaitUntil(absl::Time deadline, bool* held, bool for_message);

  const PublisherFactory publishers_;
  const Recording* const recording_;
  const PlayerOptions options_;
  std::vector<const RecordedMessage*> selected_;
  std::vector<const RecordedMessage*> latched_;  // transient-local values before begin
  uint64_t first_ns_ = 0, begin_ns_ = 0, end_ns_ = 0;

  mutable Mutex mu_;
  CondVar changed_;  // paused, resumed, stepped or stopped
  bool paused_ ABSL_GUARDED_BY(mu_) = false;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  int steps_ ABSL_GUARDED_BY(mu_) = 0;
  PlayerProgress progress_ ABSL_GUARDED_BY(mu_);
};

}  // namespace record
}  // namespace cyber

#endif  // CYBER_RECORD_PLAYER_H_
