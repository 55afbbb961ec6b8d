// McapReader: reads an MCAP file written by McapWriter or by any other MCAP
// writer (zstd, lz4 or uncompressed chunks; records outside chunks too).
//
// Two ways in. Summary() reads the summary section through the footer when
// the file has one, and otherwise (a file whose writer was killed) builds
// the same by scanning. ForEachRecord() walks the data section in file
// order, chunks opened, and stops cleanly at the first incomplete record:
// a truncated file yields every complete record before the cut, and
// `truncated` says where it ended.
//
// Errors (DataLoss) name the file, the byte offset and the field: a bad
// magic, a record whose fields run past its length, a chunk whose CRC does
// not match or whose data does not decompress. Records before the damage
// have been visited when ForEachRecord returns one.
//
// Threads: not thread-safe; one owner.

#ifndef CYBER_RECORD_MCAP_MCAP_READER_H_
#define CYBER_RECORD_MCAP_MCAP_READER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cyber {
namespace record {

// MCAP opcodes (the specification's numbers).
enum class McapOp : uint8_t {
  kHeader = 0x01,
  kFooter = 0x02,
  kSchema = 0x03,
  kChannel = 0x04,
  kMessage = 0x05,
  kChunk = 0x06,
  kMessageIndex = 0x07,
  kChunkIndex = 0x08,
  kAttachment = 0x09,
  kAttachmentIndex = 0x0A,
  kStatistics = 0x0B,
  kMetadata = 0x0C,
  kMetadataIndex = 0x0D,
  kSummaryOffset = 0x0E,
  kDataEnd = 0x0F,
};

struct McapSchema {
  uint16_t id = 0;
  std::string name;
  std::string encoding;
  std::string data;
};

struct McapChannel {
  uint16_t id = 0;
  uint16_t schema_id = 0;
  std::string topic;
  std::string message_encoding;
  std::map<std::string, std::string> metadata;
};

struct McapChunkInfo {
  uint64_t message_start_time = 0;
  uint64_t message_end_time = 0;
  uint64_t chunk_start_offset = 0;
  uint64_t chunk_length = 0;
  uint64_t compressed_size = 0;
  uint64_t uncompressed_size = 0;
  std::string compression;
  std::map<uint16_t, uint64_t> message_index_offsets;
};

struct McapStatistics {
  // False when a summary section had no Statistics record (it is optional;
  // Summary() then counts by a scan).
  bool present = false;
  uint64_t message_count = 0;
  uint16_t schema_count = 0;
  uint32_t channel_count = 0;
  uint32_t attachment_count = 0;
  uint32_t metadata_count = 0;
  uint32_t chunk_count = 0;
  uint64_t message_start_time = 0;
  uint64_t message_end_time = 0;
  std::map<uint16_t, uint64_t> channel_message_counts;
};

struct McapMetadata {
  std::string name;
  std::map<std::string, std::string> metadata;
};

struct McapSummary {
  std::map<uint16_t, McapSchema> schemas;
  std::map<uint16_t, McapChannel> channels;
  McapStatistics statistics;
  std::vector<McapChunkInfo> chunks;
  // Every Metadata record of the file (read from the data section).
  std::vector<McapMetadata> metadata;
  std::string profile;
  std::string library;
  // False: the file has no summary section (or no footer); this was built
  // by a scan.
  bool from_summary_section = false;
};

// One record of the data section, valid during the callback. Records
// inside a chunk are given one by one (the Chunk record itself is not);
// `in_chunk` says so. Message records come with `message` filled.
struct McapRecordView {
  uint8_t opcode = 0;
  absl::string_view content;
  bool in_chunk = false;
  struct Message {
    uint16_t channel_id = 0;
    uint32_t sequence = 0;
    uint64_t log_time = 0;
    uint64_t publish_time = 0;
    absl::string_view data;
  };
  std::optional<Message> message;
};

struct McapScanEnd {
  // Where the complete records end; equal to the data section's end for a
  // complete file.
  uint64_t valid_until = 0;
  // Set when the data ended in an incomplete or damaged record, saying
  // what and where.
  std::optional<std::string> truncated;
};

// The records' contents (after opcode and length), field by field;
// DataLoss naming the field that does not fit.
absl::StatusOr<McapSchema> ParseMcapSchema(absl::string_view content);
absl::StatusOr<McapChannel> ParseMcapChannel(absl::string_view content);
absl::StatusOr<McapMetadata> ParseMcapMetadata(absl::string_view content);

class McapReader {
 public:
  // Maps the file into memory (pages are read as records are visited);
  // checks the leading magic.
  static absl::StatusOr<std::unique_ptr<McapReader>> Open(const std::string& path);
  // The same over bytes already in memory; `name` stands for the path in
  // errors (the fuzzer, tests).
  static absl::StatusOr<std::unique_ptr<McapReader>> FromBytes(std::string bytes,
                                                               const std::string& name);
  ~McapReader();

  absl::StatusOr<McapSummary> Summary();
  // Calls `visit` for every record in file order until it returns false.
  // Schemas and channels met in the data section are parsed before
  // `visit` sees the messages that use them.
  // With `damage_ends_scan`, damage ends the walk as a cut does (in
  // `truncated`, valid_until at the damaged record) instead of an error:
  // recover keeps everything before it.
  absl::StatusOr<McapScanEnd> ForEachRecord(const std::function<bool(const McapRecordView&)>& visit,
                                            bool damage_ends_scan = false);

  const std::string& path() const;
  uint64_t size() const;  // the file's bytes

 private:
  class Impl;
  explicit McapReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace record
}  // namespace cyber

#endif  // CYBER_RECORD_MCAP_MCAP_READER_H_
