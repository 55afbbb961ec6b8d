// RecordingWriter: writes cyber recordings (the conventions of
// mcap/recording.h) from messages that carry their writer's identity, for
// the recorder (messages off the domain) and for split (messages out of
// another recording). It adds each channel's schema and channel records,
// each writer's identity record, and an origin record before each message,
// lazily, in every file; counts per channel what it wrote and the gaps in
// each writer's sequence numbers; and starts a new file when one reaches
// the split size or spans the split duration (of log time, so a split is
// the same however fast the messages were written).
//
// Files: with no split, `path`; with one, path's stem numbered:
// "drive.mcap" → "drive.00000.mcap", "drive.00001.mcap", ... Each file
// ends with its own "cyber.channel_stats" metadata.
//
// Threads: not thread-safe; one owner (the recorder's writing thread).

#ifndef CYBER_RECORD_RECORDING_WRITER_H_
#define CYBER_RECORD_RECORDING_WRITER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "cyber/record/mcap/mcap_writer.h"
#include "cyber/record/mcap/recording.h"

namespace cyber {
namespace record {

struct RecordingWriterOptions {
  std::string path;
  McapWriterOptions mcap;
  uint64_t split_bytes = 0;                           // 0: no split by size
  absl::Duration split_duration = absl::ZeroDuration();  // 0: none by time
  // Written as the "cyber.recording" metadata at the start of each file.
  std::map<std::string, std::string> recording_metadata;
  // Count gaps in each writer's sequence numbers as lost (split: the
  // messages come in order). False: the caller counts them (CountLost; the
  // recorder, which sees the messages in arrival order, before its queue).
  bool count_sequence_gaps = true;
};

// What a message's channel is; the first message of a channel in a file
// writes its schema and channel records from this.
struct ChannelInfo {
  std::string name;
  std::string type_name;
  std::string descriptor_set;  // serialized FileDescriptorSet
  std::map<std::string, std::string> metadata;
};

struct MessageOrigin {
  std::string writer_label;  // "pollers@robot:4242"
  std::string writer_guid;   // the key of a writer: one per channel and process
  uint64_t sequence = 0;     // the writer's, from 1; 0: unknown (not checked for gaps)
};

class RecordingWriter {
 public:
  // InvalidArgument naming the field for an empty path or a path without
  // ".mcap" when splitting; the OS's error naming the file.
  static absl::StatusOr<std::unique_ptr<RecordingWriter>> Open(RecordingWriterOptions options);
  ~RecordingWriter();  // Close() if not closed (errors logged)

  // Adds the channel's schema and channel records now (and to every later
  // part): a channel recorded with no message in a file is still in it.
  absl::Status DeclareChannel(const ChannelInfo& channel);
  absl::Status Write(const ChannelInfo& channel, const MessageOrigin& origin, uint64_t log_time,
                     uint64_t publish_time, absl::string_view data);
  // Messages of `channel` the caller had to drop (its queue was full):
  // counted in the channel's statistics.
  void CountDropped(const std::string& channel, uint64_t n);
  // Messages of `channel` lost before they reached the caller.
  void CountLost(const std::string& channel, uint64_t n);
  // Closes the open chunk and flushes it to the file.
  absl::Status Flush();
  absl::Status Close();

  // Every file written so far, in order.
  const std::vector<std::string>& files() const { return files_; }
  // Per channel, over every file.
  const std::map<std::string, ChannelRecordStats>& totals() const { return totals_; }
  uint64_t bytes() const;  // of every file, the open one included

 private:
  explicit RecordingWriter(RecordingWriterOptions options);
  absl::Status OpenFile();
  absl::Status CloseFile();
  std::string FilePath(int index) const;
  absl::StatusOr<uint16_t> ChannelId(const ChannelInfo& channel);

  const RecordingWriterOptions options_;
  std::vector<std::string> files_;
  std::unique_ptr<McapWriter> mcap_;
  uint64_t closed_bytes_ = 0;
  bool have_first_log_time_ = false;
  uint64_t file_first_log_time_ = 0;
  // Per open file.
  std::map<std::string, uint16_t> channel_ids_;
  std::map<std::string, uint32_t> writer_ids_;  // by GUID
  std::map<std::string, ChannelRecordStats> file_stats_;
  // Across files.
  std::map<std::string, ChannelInfo> declared_;
  SequenceGaps sequence_gaps_;  // by GUID
  std::map<std::string, ChannelRecordStats> totals_;
  uint32_t next_writer_id_ = 1;
  bool closed_ = false;
};

}  // namespace record
}  // namespace cyber

#endif  // CYBER_RECORD_RECORDING_WRITER_H_
