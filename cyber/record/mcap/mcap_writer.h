// McapWriter: writes an MCAP file (https://mcap.dev/spec, version 0) the
// way a recorder needs it: records appended as messages arrive, grouped in
// chunks (optionally zstd- or lz4-compressed) each followed by its message
// indexes, and at Close() a summary section (schemas, channels,
// statistics, chunk indexes, metadata indexes, summary offsets) and the
// footer, so a reader can seek by time and channel without a scan.
//
// Why chunks are flushed whole: a writer killed with -9 leaves every
// complete chunk readable; McapRecover (mcap_recover.h) rewrites such a
// file with a summary.
//
// Private records: the MCAP specification reserves opcodes 0x80-0xFF for
// records of the application's own, which other readers skip. WritePrivate
// puts one into the current chunk, in order with the messages (the
// recorder's writer identities, recording_format.h).
//
// Threads: not thread-safe; one owner.

#ifndef CYBER_RECORD_MCAP_MCAP_WRITER_H_
#define CYBER_RECORD_MCAP_MCAP_WRITER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cyber {
namespace record {

enum class McapCompression { kNone, kZstd, kLz4 };

// "none", "zstd", "lz4" (the chunk's compression field: "", "zstd", "lz4").
absl::StatusOr<McapCompression> ParseMcapCompression(absl::string_view name);
absl::string_view McapCompressionName(McapCompression c);

struct McapWriterOptions {
  McapCompression compression = McapCompression::kZstd;
  // A chunk is closed when its uncompressed records reach this size.
  uint64_t chunk_size = 1 << 20;
  std::string profile;                    // Header.profile ("" : none)
  std::string library = "cyber_recorder";  // Header.library
};

struct McapMessage {
  uint16_t channel_id = 0;
  uint32_t sequence = 0;
  uint64_t log_time = 0;      // ns since the epoch (the recorder's receive time)
  uint64_t publish_time = 0;  // ns since the epoch (the writer's send stamp)
  absl::string_view data;
};

class McapWriter {
 public:
  // Creates (truncates) `path` and writes the magic and the header.
  // InvalidArgument for a zero chunk_size; the OS's error naming the path.
  static absl::StatusOr<std::unique_ptr<McapWriter>> Open(const std::string& path,
                                                          const McapWriterOptions& options);
  ~McapWriter();  // Close() if not closed (errors logged)

  // Ids start at 1 (schema id 0 means "no schema" in MCAP).
  absl::StatusOr<uint16_t> AddSchema(const std::string& name, const std::string& encoding,
                                     absl::string_view data);
  absl::StatusOr<uint16_t> AddChannel(const std::string& topic, uint16_t schema_id,
                                      const std::string& message_encoding,
                                      const std::map<std::string, std::string>& metadata);
  // InvalidArgument for a channel id not added.
  absl::Status Write(const McapMessage& message);
  // opcode in [0x80, 0xFF]; into the current chunk.
  absl::Status WritePrivate(uint8_t opcode, absl::string_view content);
  // A Metadata record (written in the data section, indexed in the summary).
  absl::Status WriteMetadata(const std::string& name,
                             const std::map<std::string, std::string>& metadata);
  // Closes the current chunk now and puts it on the disk (fflush and
  // fdatasync), so a kill or a power loss loses nothing written so far.
  absl::Status Flush();
  // The last chunk, data end, summary, footer, magic; the file is complete.
  // Later calls return the first one's result.
  absl::Status Close();

  // Bytes in the file so far plus the open chunk's uncompressed bytes (for
  // splitting by size).
  uint64_t size() const;
  uint64_t message_count() const;
  const std::string& path() const;

 private:
  class Impl;
  explicit McapWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace record
}  // namespace cyber

#endif  // CYBER_RECORD_MCAP_MCAP_WRITER_H_
