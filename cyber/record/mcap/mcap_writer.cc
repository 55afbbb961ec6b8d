#include "cyber/record/mcap/mcap_writer.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cyber/record/mcap/mcap_bytes.h"
#include "cyber/record/mcap/mcap_reader.h"  // McapOp
#include "glog/logging.h"

namespace cyber {
namespace record {
namespace {

uint8_t Op(McapOp op) { return static_cast<uint8_t>(op); }

struct ChunkIndexEntry {
  uint64_t start_time = 0;
  uint64_t end_time = 0;
  uint64_t offset = 0;
  uint64_t length = 0;
  std::map<uint16_t, uint64_t> message_index_offsets;
  uint64_t message_index_length = 0;
  uint64_t compressed_size = 0;
  uint64_t uncompressed_size = 0;
};

struct MetadataIndexEntry {
  uint64_t offset = 0;
  uint64_t length = 0;
  std::string name;
};

}  // namespace

absl::StatusOr<McapCompression> ParseMcapCompression(absl::string_view name) {
  if (name == "none" || name.empty()) return McapCompression::kNone;
  if (name == "zstd") return McapCompression::kZstd;
  if (name == "lz4") return McapCompression::kLz4;
  return absl::InvalidArgumentError(
      absl::StrCat("compression \"", name, "\" is not one of none, zstd, lz4"));
}

absl::string_view McapCompressionName(McapCompression c) {
  switch (c) {
    case McapCompression::kNone:
      return "";
    case McapCompression::kZstd:
      return "zstd";
    case McapCompression::kLz4:
      return "lz4";
  }
  return "";
}

class McapWriter::Impl {
 public:
  Impl(std::string path, McapWriterOptions options, std::FILE* file)
      : path_(std::move(path)), options_(std::move(options)), file_(file) {}
  ~Impl() {
    if (file_ != nullptr) std::fclose(file_);
  }

  absl::Status Start() {
    std::string out;
    McapBytesOut b(&out);
    b.Bytes(absl::string_view(kMcapMagic, kMcapMagicSize));
    std::string header;
    McapBytesOut h(&header);
    h.String(options_.profile);
    h.String(options_.library);
    b.Record(Op(McapOp::kHeader), header);
    return Append(out, /*data_section=*/true);
  }

  absl::StatusOr<uint16_t> AddSchema(const std::string& name, const std::string& encoding,
                                     absl::string_view data) {
    if (schemas_.size() >= 0xFFFE) {
      return absl::ResourceExhaustedError(absl::StrCat(path_, ": more than 65534 schemas"));
    }
    uint16_t id = static_cast<uint16_t>(schemas_.size() + 1);
    std::string content;
    McapBytesOut b(&content);
    b.U16(id);
    b.String(name);
    b.String(encoding);
    b.String(data);
    std::string record;
    McapBytesOut(&record).Record(Op(McapOp::kSchema), content);
    schemas_.push_back(record);
    // In the chunk, so that a reader of a file cut short meets the schema
    // before the messages that use it, in the same chunk or an earlier one.
    AppendToChunk(record);
    return id;
  }

  absl::StatusOr<uint16_t> AddChannel(const std::string& topic, uint16_t schema_id,
                                      const std::string& message_encoding,
                                      const std::map<std::string, std::string>& metadata) {
    if (schema_id > schemas_.size()) {
      return absl::InvalidArgumentError(absl::StrCat(path_, ": channel \"", topic,
                                                     "\": schema_id ", schema_id,
                                                     " was not added"));
    }
    if (channels_.size() >= 0xFFFF) {
      return absl::ResourceExhaustedError(absl::StrCat(path_, ": more than 65535 channels"));
    }
    uint16_t id = static_cast<uint16_t>(channels_.size());
    std::string content;
    McapBytesOut b(&content);
    b.U16(id);
    b.U16(schema_id);
    b.String(topic);
    b.String(message_encoding);
    b.StringMap(metadata);
    std::string record;
    McapBytesOut(&record).Record(Op(McapOp::kChannel), content);
    channels_.push_back(record);
    AppendToChunk(record);
    return id;
  }

  absl::Status Write(const McapMessage& m) {
    if (m.channel_id >= channels_.size()) {
      return absl::InvalidArgumentError(absl::StrCat(path_, ": message: channel_id ",
                                                     m.channel_id, " was not added"));
    }
    uint64_t offset = chunk_.size();
    McapBytesOut b(&chunk_);
    b.U8(Op(McapOp::kMessage));
    b.U64(2 + 4 + 8 + 8 + m.data.size());
    b.U16(m.channel_id);
    b.U32(m.sequence);
    b.U64(m.log_time);
    b.U64(m.publish_time);
    b.Bytes(m.data);
    chunk_index_[m.channel_id].emplace_back(m.log_time, offset);
    if (chunk_messages_ == 0 || m.log_time < chunk_start_) chunk_start_ = m.log_time;
    if (chunk_messages_ == 0 || m.log_time > chunk_end_) chunk_end_ = m.log_time;
    ++chunk_messages_;
    if (message_count_ == 0 || m.log_time < start_time_) start_time_ = m.log_time;
    if (message_count_ == 0 || m.log_time > end_time_) end_time_ = m.log_time;
    ++message_count_;
    ++channel_counts_[m.channel_id];
    if (chunk_.size() >= options_.chunk_size) return CloseChunk();
    return absl::OkStatus();
  }

  absl::Status WritePrivate(uint8_t opcode, absl::string_view content) {
    if (opcode < 0x80) {
      return absl::InvalidArgumentError(absl::StrCat(
          path_, ": private record opcode 0x", absl::Hex(opcode), " is below 0x80"));
    }
    McapBytesOut(&chunk_).Record(opcode, content);
    return absl::OkStatus();
  }

  absl::Status WriteMetadata(const std::string& name,
                             const std::map<std::string, std::string>& metadata) {
    // Outside chunks (the specification puts Metadata in the data section
    // only), so the open chunk goes first to keep file order.
    if (absl::Status s = CloseChunk(); !s.ok()) return s;
    std::string content;
    McapBytesOut b(&content);
    b.String(name);
    b.StringMap(metadata);
    std::string record;
    McapBytesOut(&record).Record(Op(McapOp::kMetadata), content);
    metadata_index_.push_back({offset_, record.size(), name});
    return Append(record, true);
  }

  absl::Status Flush() {
    if (absl::Status s = CloseChunk(); !s.ok()) return s;
    if (std::fflush(file_) != 0) return OsError("flush");
    // On the disk, not only in the page cache: a power loss keeps it.
    if (fdatasync(fileno(file_)) != 0) return OsError("fdatasync");
    return absl::OkStatus();
  }

  absl::Status Close() {
    if (closed_) return close_status_;  // the first Close()'s result, every time
    closed_ = true;
    close_status_ = Finish();
    if (file_ != nullptr) {  // a failed Finish() left it open
      std::fclose(file_);
      file_ = nullptr;
    }
    return close_status_;
  }

  absl::Status Finish() {
    if (absl::Status s = CloseChunk(); !s.ok()) return s;
    std::string data_end;
    McapBytesOut(&data_end).U32(data_crc_);
    std::string record;
    McapBytesOut(&record).Record(Op(McapOp::kDataEnd), data_end);
    if (absl::Status s = Append(record, false); !s.ok()) return s;

    // The summary: one group per record kind, each found by a SummaryOffset.
    uint64_t summary_start = offset_;
    std::string summary;
    struct Group {
      uint8_t opcode;
      uint64_t start;
      uint64_t length;
    };
    std::vector<Group> groups;
    auto group = [&](uint8_t opcode, const std::vector<std::string>& records) {
      if (records.empty()) return;
      uint64_t start = summary_start + summary.size();
      for (const std::string& r : records) summary += r;
      groups.push_back({opcode, start, summary_start + summary.size() - start});
    };
    group(Op(McapOp::kSchema), schemas_);
    group(Op(McapOp::kChannel), channels_);
    group(Op(McapOp::kStatistics), {StatisticsRecord()});
    std::vector<std::string> chunk_indexes;
    for (const ChunkIndexEntry& c : chunks_) {
      std::string content;
      McapBytesOut b(&content);
      b.U64(c.start_time);
      b.U64(c.end_time);
      b.U64(c.offset);
      b.U64(c.length);
      b.U16U64Map(c.message_index_offsets);
      b.U64(c.message_index_length);
      b.String(McapCompressionName(options_.compression));
      b.U64(c.compressed_size);
      b.U64(c.uncompressed_size);
      std::string r;
      McapBytesOut(&r).Record(Op(McapOp::kChunkIndex), content);
      chunk_indexes.push_back(std::move(r));
    }
    group(Op(McapOp::kChunkIndex), chunk_indexes);
    std::vector<std::string> metadata_indexes;
    for (const MetadataIndexEntry& m : metadata_index_) {
      std::string content;
      McapBytesOut b(&content);
      b.U64(m.offset);
      b.U64(m.length);
      b.String(m.name);
      std::string r;
      McapBytesOut(&r).Record(Op(McapOp::kMetadataIndex), content);
      metadata_indexes.push_back(std::move(r));
    }
    group(Op(McapOp::kMetadataIndex), metadata_indexes);
    uint64_t summary_offset_start = summary_start + summary.size();
    for (const Group& g : groups) {
      std::string content;
      McapBytesOut b(&content);
      b.U8(g.opcode);
      b.U64(g.start);
      b.U64(g.length);
      McapBytesOut(&summary).Record(Op(McapOp::kSummaryOffset), content);
    }
    // The footer's CRC covers the summary, the summary offsets and the
    // footer up to the CRC field itself.
    std::string footer_prefix;
    McapBytesOut f(&footer_prefix);
    f.U8(Op(McapOp::kFooter));
    f.U64(8 + 8 + 4);
    f.U64(summary_start);
    f.U64(summary_offset_start);
    uint32_t crc = Crc32Update(Crc32(summary), footer_prefix);
    std::string tail = summary + footer_prefix;
    McapBytesOut t(&tail);
    t.U32(crc);
    t.Bytes(absl::string_view(kMcapMagic, kMcapMagicSize));
    if (absl::Status s = Append(tail, false); !s.ok()) return s;
    std::FILE* f_ = file_;
    file_ = nullptr;
    if (std::fclose(f_) != 0) return OsError("close");
    return absl::OkStatus();
  }

  uint64_t size() const { return offset_ + chunk_.size(); }
  uint64_t message_count() const { return message_count_; }
  const std::string& path() const { return path_; }
  bool closed() const { return closed_; }

 private:
  void AppendToChunk(absl::string_view record) { chunk_.append(record.data(), record.size()); }

  std::string StatisticsRecord() const {
    std::string content;
    McapBytesOut b(&content);
    b.U64(message_count_);
    b.U16(static_cast<uint16_t>(schemas_.size()));
    b.U32(static_cast<uint32_t>(channels_.size()));
    b.U32(0);  // attachments
    b.U32(static_cast<uint32_t>(metadata_index_.size()));
    b.U32(static_cast<uint32_t>(chunks_.size()));
    b.U64(message_count_ == 0 ? 0 : start_time_);
    b.U64(message_count_ == 0 ? 0 : end_time_);
    b.U16U64Map(channel_counts_);
    std::string r;
    McapBytesOut(&r).Record(Op(McapOp::kStatistics), content);
    return r;
  }

  absl::Status CloseChunk() {
    if (chunk_.empty()) return absl::OkStatus();
    // The records go to the file as they are (uncompressed) or once
    // compressed: no copy of a camera-sized chunk into a record first.
    std::string compressed;
    absl::string_view body = chunk_;
    if (options_.compression != McapCompression::kNone) {
      absl::StatusOr<std::string> c = McapCompress(McapCompressionName(options_.compression), chunk_);
      if (!c.ok()) {
        return absl::Status(c.status().code(), absl::StrCat(path_, ": chunk at byte ", offset_,
                                                            ": ", c.status().message()));
      }
      compressed = *std::move(c);
      body = compressed;
    }
    absl::string_view compression = McapCompressionName(options_.compression);
    std::string head;
    McapBytesOut b(&head);
    b.U8(Op(McapOp::kChunk));
    b.U64(8 + 8 + 8 + 4 + 4 + compression.size() + 8 + body.size());
    b.U64(chunk_messages_ == 0 ? 0 : chunk_start_);
    b.U64(chunk_messages_ == 0 ? 0 : chunk_end_);
    b.U64(chunk_.size());
    b.U32(Crc32(chunk_));
    b.String(compression);
    b.U64(body.size());
    ChunkIndexEntry entry;
    entry.start_time = chunk_messages_ == 0 ? 0 : chunk_start_;
    entry.end_time = chunk_messages_ == 0 ? 0 : chunk_end_;
    entry.offset = offset_;
    entry.length = head.size() + body.size();
    entry.compressed_size = body.size();
    entry.uncompressed_size = chunk_.size();
    std::string indexes;
    McapBytesOut o(&indexes);
    const uint64_t index_start = offset_ + entry.length;
    for (const auto& [channel, entries] : chunk_index_) {
      entry.message_index_offsets[channel] = index_start + indexes.size();
      std::string index;
      McapBytesOut m(&index);
      m.U16(channel);
      m.U32(static_cast<uint32_t>(entries.size() * 16));
      for (const auto& [time, at] : entries) {
        m.U64(time);
        m.U64(at);
      }
      o.Record(Op(McapOp::kMessageIndex), index);
    }
    entry.message_index_length = indexes.size();
    chunks_.push_back(std::move(entry));
    absl::Status s = Append(head, true);
    if (s.ok()) s = Append(body, true);
    if (s.ok()) s = Append(indexes, true);
    chunk_.clear();
    chunk_index_.clear();
    chunk_messages_ = 0;
    return s;
  }

  absl::Status Append(absl::string_view bytes, bool data_section) {
    if (file_ == nullptr) {
      return absl::FailedPreconditionError(absl::StrCat(path_, ": the writer is closed"));
    }
    if (std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size()) return OsError("write");
    if (data_section) data_crc_ = Crc32Update(data_crc_, bytes);
    offset_ += bytes.size();
    return absl::OkStatus();
  }

  absl::Status OsError(absl::string_view what) const {
    int e = errno;
    return absl::Status(absl::ErrnoToStatusCode(e),
                        absl::StrCat(path_, ": ", what, ": ", std::strerror(e)));
  }

  const std::string path_;
  const McapWriterOptions options_;
  std::FILE* file_;
  bool closed_ = false;
  absl::Status close_status_;
  uint64_t offset_ = 0;
  uint32_t data_crc_ = 0;
  std::vector<std::string> schemas_;   // whole records, for the summary
  std::vector<std::string> channels_;  // whole records, for the summary
  std::string chunk_;                  // the open chunk's records
  std::map<uint16_t, std::vector<std::pair<uint64_t, uint64_t>>> chunk_index_;
  uint64_t chunk_messages_ = 0, chunk_start_ = 0, chunk_end_ = 0;
  std::vector<ChunkIndexEntry> chunks_;
  std::vector<MetadataIndexEntry> metadata_index_;
  uint64_t message_count_ = 0, start_time_ = 0, end_time_ = 0;
  std::map<uint16_t, uint64_t> channel_counts_;
};

absl::StatusOr<std::unique_ptr<McapWriter>> McapWriter::Open(const std::string& path,
                                                             const McapWriterOptions& options) {
  if (options.chunk_size == 0) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": chunk_size 0: must be at least 1"));
  }
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) {
    int e = errno;
    return absl::Status(absl::ErrnoToStatusCode(e),
                        absl::StrCat(path, ": cannot create: ", std::strerror(e)));
  }
  auto impl = std::make_unique<Impl>(path, options, f);
  if (absl::Status s = impl->Start(); !s.ok()) return s;
  return std::unique_ptr<McapWriter>(new McapWriter(std::move(impl)));
}

McapWriter::McapWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

McapWriter::~McapWriter() {
  if (!impl_->closed()) {
    absl::Status s = impl_->Close();
    LOG_IF(ERROR, !s.ok()) << "McapWriter: closing " << impl_->path() << ": " << s;
  }
}

absl::StatusOr<uint16_t> McapWriter::AddSchema(const std::string& name, const std::string& encoding,
                                               absl::string_view data) {
  return impl_->AddSchema(name, encoding, data);
}
absl::StatusOr<uint16_t> McapWriter::AddChannel(
    const std::string& topic, uint16_t schema_id, const std::string& message_encoding,
    const std::map<std::string, std::string>& metadata) {
  return impl_->AddChannel(topic, schema_id, message_encoding, metadata);
}
absl::Status McapWriter::Write(const McapMessage& message) { return impl_->Write(message); }
absl::Status McapWriter::WritePrivate(uint8_t opcode, absl::string_view content) {
  return impl_->WritePrivate(opcode, content);
}
absl::Status McapWriter::WriteMetadata(const std::string& name,
                                       const std::map<std::string, std::string>& metadata) {
  return impl_->WriteMetadata(name, metadata);
}
absl::Status McapWriter::Flush() { return impl_->Flush(); }
absl::Status McapWriter::Close() { return impl_->Close(); }
uint64_t McapWriter::size() const { return impl_->size(); }
uint64_t McapWriter::message_count() const { return impl_->message_count(); }
const std::string& McapWriter::path() const { return impl_->path(); }

}  // namespace record
}  // namespace cyber
