// What a cyber recording is, on top of MCAP: the conventions the recorder
// writes and everything that reads a recording (cyber_recorder info, play,
// split, recover; SimulatedGraph's replay) relies on.
//
//   Schema    name: the protobuf full name; encoding "protobuf"; data: the
//             type's FileDescriptorSet (the file and every import), so any
//             MCAP reader (Foxglove) decodes the messages.
//   Channel   topic: the cyber channel; message_encoding "protobuf";
//             metadata "qos": ChannelQos::ToString() of the recorder's
//             reader (what the writers offered), and the same in parts
//             for play: "reliable" and "transient_local" ("true" or
//             "false"), "depth".
//   Message   log_time: when the recorder received it (ns since the epoch);
//             publish_time: the writer's send stamp (DDS source timestamp,
//             ns since the epoch); sequence: the writer's sequence number's
//             low 32 bits.
//   0x80      Writer (private record): a writer's identity, before its first
//             message: u32 writer_id, u16 channel_id, string process label
//             ("pollers@robot:4242"), string writer GUID.
//   0x81      Origin (private record): immediately before each Message
//             record, in the same chunk: u32 writer_id, u64 the writer's
//             full sequence number.
//   Metadata  "cyber.recording": domain, host, started_at, command.
//             "cyber.channel_stats" (written at close, and by recover):
//             per channel "<channel>/received", "<channel>/lost" (gaps in
//             the writers' sequences), "<channel>/dropped" (the recorder's
//             own queue), "<channel>/writers".
//
// Strings in private records are MCAP strings (u32 length, bytes),
// integers little-endian, as everywhere in MCAP.
//
// Threads: free functions on caller-owned data; RecordingReader has one
// owner.

#ifndef CYBER_RECORD_MCAP_RECORDING_H_
#define CYBER_RECORD_MCAP_RECORDING_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cyber/record/mcap/mcap_reader.h"

namespace cyber {
namespace record {

inline constexpr uint8_t kWriterOpcode = 0x80;
inline constexpr uint8_t kOriginOpcode = 0x81;
inline constexpr char kRecordingMetadata[] = "cyber.recording";
inline constexpr char kChannelStatsMetadata[] = "cyber.channel_stats";

struct WriterRecord {
  uint32_t writer_id = 0;
  uint16_t channel_id = 0;
  std::string process_label;
  std::string guid;
};
struct OriginRecord {
  uint32_t writer_id = 0;
  uint64_t sequence = 0;
};

std::string EncodeWriterRecord(const WriterRecord& w);
absl::StatusOr<WriterRecord> DecodeWriterRecord(absl::string_view content);
std::string EncodeOriginRecord(const OriginRecord& o);
absl::StatusOr<OriginRecord> DecodeOriginRecord(absl::string_view content);

// Per channel, what the recorder saw.
struct ChannelRecordStats {
  uint64_t received = 0;
  uint64_t lost = 0;     // gaps in the writers' sequence numbers
  uint64_t dropped = 0;  // the recorder's own queue was full
  uint64_t writers = 0;
};
std::map<std::string, std::string> EncodeChannelStats(
    const std::map<std::string, ChannelRecordStats>& stats);
absl::StatusOr<std::map<std::string, ChannelRecordStats>> DecodeChannelStats(
    const std::map<std::string, std::string>& metadata);

// Gaps in writers' sequence numbers, writer by writer, in the order the
// messages are seen: the one rule by which the recorder (on arrival),
// RecordingWriter (split) and recover (from origin records) count
// messages as lost. A writer's first message starts its count; sequence 0
// (unknown) and a sequence at or below the last seen are no gap.
class SequenceGaps {
 public:
  // The messages of `writer` missed just before `sequence`.
  uint64_t Next(const std::string& writer, uint64_t sequence);
  bool Seen(const std::string& writer) const { return last_.count(writer) > 0; }

 private:
  std::map<std::string, uint64_t> last_;
};

// One recorded message, as play and replay use it.
struct RecordedMessage {
  std::string channel;
  std::string type_name;
  uint64_t log_time = 0;
  uint64_t publish_time = 0;
  std::string writer;  // the writer's process label; "" if not recorded
  std::string writer_guid;  // its DDS GUID (hex); "" if not recorded
  uint32_t writer_id = 0;
  uint64_t sequence = 0;  // the writer's; MCAP's 32-bit one if no origin
  std::string data;       // the serialized protobuf message
};

// A message as a replay feeds it: its offset from the recording's first
// message (of any channel), the instant after the replay's start at which
// it is delivered.
struct FedMessage {
  uint64_t offset_ns = 0;
  const RecordedMessage* message = nullptr;
};

struct RecordedChannel {
  std::string name;
  std::string type_name;
  std::string descriptor_set;  // serialized FileDescriptorSet
  std::map<std::string, std::string> metadata;
  bool transient_local = false;
};

// A whole recording in memory, messages in one total order: (log_time,
// channel, writer_id, sequence). Reads files of other writers too (no
// private records: writer "" and MCAP's sequence).
class Recording {
 public:
  static absl::StatusOr<Recording> Load(const std::string& path);
  // The same over bytes in memory; `name` stands for the path in errors.
  static absl::StatusOr<Recording> LoadBytes(std::string bytes, const std::string& name);

  const std::vector<RecordedChannel>& channels() const { return channels_; }
  const std::vector<RecordedMessage>& messages() const { return messages_; }
  // The messages of `channels` in the recording's order, each with its
  // offset from the first message of the whole recording: the one rule of
  // every replay (a SimulatedGraph's, a lockstep run's), so the same
  // recording gives the same instants in one process and across
  // processes. Pointers into messages(): valid while this lives.
  std::vector<FedMessage> Feed(const std::set<std::string>& channels) const;
  const McapSummary& summary() const { return summary_; }
  // From the cyber.channel_stats metadata; empty if the file has none.
  const std::map<std::string, ChannelRecordStats>& stats() const { return stats_; }
  // Set when the file ended in an incomplete record (a recorder killed).
  const std::optional<std::string>& truncated() const { return truncated_; }

 private:
  static absl::StatusOr<Recording> Read(McapReader& reader);

  std::vector<RecordedChannel> channels_;
  std::vector<RecordedMessage> messages_;
  McapSummary summary_;
  std::map<std::string, ChannelRecordStats> stats_;
  std::optional<std::string> truncated_;
};

}  // namespace record
}  // namespace cyber

#endif  // CYBER_RECORD_MCAP_RECORDING_H_
