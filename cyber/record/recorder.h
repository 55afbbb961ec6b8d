// Recorder: records the channels of a running domain into MCAP files (the
// conventions of mcap/recording.h) while the graph runs, losing nothing
// silently.
//
// What it records: every channel (`all`), the named ones, or all but the
// excluded ones, including channels that appear while it runs (it looks at
// the domain's graph on every change) and types it was not compiled with:
// the schema is the FileDescriptorSet the writers announced. A channel is
// subscribed with the writers' QoS, so a transient-local channel's last
// value arrives (and is recorded) at the start.
//
// Why a queue and a thread: the transport's threads must not wait for the
// disk. Messages are copied into a bounded queue (queue_bytes) and written
// by one thread; when the queue is full a message is dropped and counted.
// Every message's writer and sequence number are kept, so gaps (lost
// before they reached the recorder, reliable or not) are counted too.
// Both are in Stats() while it runs and in each file's statistics.
//
// Time: log_time is the wall clock when the message was received (the
// recording's own time line, as MCAP means it); publish_time is the
// writer's send stamp. Nothing is scheduled by the wall clock: the writing
// thread flushes every `flush_period` of the steady clock.
//
// Threads: Start/Stop/Stats from any thread; Stop is synchronous (no
// handler runs after it returns, every queued message is written).

#ifndef CYBER_RECORD_RECORDER_H_
#define CYBER_RECORD_RECORDER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cyber/graph/domain_graph.h"
#include "cyber/record/recording_writer.h"

namespace cyber {
namespace record {

struct RecorderOptions {
  RecordingWriterOptions output;
  bool all = false;                   // -a
  std::vector<std::string> channels;  // -c
  std::vector<std::string> exclude;   // -k
  uint64_t queue_bytes = uint64_t{512} << 20;
  absl::Duration flush_period = absl::Seconds(1);
};

struct RecorderStats {
  std::map<std::string, ChannelRecordStats> channels;
  uint64_t queued_bytes = 0;  // waiting for the writing thread
  uint64_t peak_queued_bytes = 0;
  uint64_t bytes_written = 0;
  std::vector<std::string> files;
  // Channels selected but not recordable yet, with why (no writer in
  // another process yet, no descriptor announced).
  std::map<std::string, std::string> waiting;
  // The first error of the writing thread (a full disk); recording stops.
  absl::Status error;
};

class Recorder {
 public:
  // InvalidArgument when nothing is selected (neither all nor channels) or
  // for a bad output; the writer's errors naming the file.
  static absl::StatusOr<std::unique_ptr<Recorder>> Start(graph::DomainGraph* graph,
                                                         RecorderOptions options);
  ~Recorder();  // Stop()

  RecorderStats Stats() const;
  // Unsubscribes, writes what is queued, closes the file with its
  // statistics. The writer's first error, if any. Idempotent.
  absl::Status Stop();

  class Impl;

 private:
  explicit Recorder(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace record
}  // namespace cyber

#endif  // CYBER_RECORD_RECORDER_H_
