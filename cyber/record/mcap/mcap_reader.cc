#include "cyber/record/mcap/mcap_reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "cyber/record/mcap/mcap_bytes.h"

namespace cyber {
namespace record {
namespace {

constexpr size_t kRecordHead = 1 + 8;                 // opcode, length
constexpr size_t kFooterRecord = kRecordHead + 8 + 8 + 4;

absl::Status Missing(absl::string_view record, absl::string_view field) {
  return absl::DataLossError(absl::StrCat(record, " record: field ", field,
                                          " runs past the record's length"));
}

// Internal hooks of one walk over the data section.
struct Walker {
  std::function<bool(const McapRecordView&)> visit;
  std::function<void(const McapChunkInfo&)> on_chunk;  // may be empty
  bool damage_ends_scan = false;
};

}  // namespace

absl::StatusOr<McapSchema> ParseMcapSchema(absl::string_view content) {
  McapBytesIn in(content);
  McapSchema s;
  if (!in.U16(&s.id)) return Missing("Schema", "id");
  if (!in.String(&s.name)) return Missing("Schema", "name");
  if (!in.String(&s.encoding)) return Missing("Schema", "encoding");
  if (!in.String(&s.data)) return Missing("Schema", "data");
  return s;
}

absl::StatusOr<McapChannel> ParseMcapChannel(absl::string_view content) {
  McapBytesIn in(content);
  McapChannel c;
  if (!in.U16(&c.id)) return Missing("Channel", "id");
  if (!in.U16(&c.schema_id)) return Missing("Channel", "schema_id");
  if (!in.String(&c.topic)) return Missing("Channel", "topic");
  if (!in.String(&c.message_encoding)) return Missing("Channel", "message_encoding");
  if (!in.StringMap(&c.metadata)) return Missing("Channel", "metadata");
  return c;
}

absl::StatusOr<McapMetadata> ParseMcapMetadata(absl::string_view content) {
  McapBytesIn in(content);
  McapMetadata m;
  if (!in.String(&m.name)) return Missing("Metadata", "name");
  if (!in.StringMap(&m.metadata)) return Missing("Metadata", "metadata");
  return m;
}

class McapReader::Impl {
 public:
  Impl(std::string path, absl::string_view data, std::string owned, void* map, size_t map_len)
      : path_(std::move(path)), owned_(std::move(owned)), map_(map), map_len_(map_len) {
    data_ = map_ != nullptr ? data : absl::string_view(owned_);
  }
  ~Impl() {
    if (map_ != nullptr) munmap(map_, map_len_);
  }

  absl::Status CheckMagic() const {
    if (data_.size() < kMcapMagicSize ||
        data_.substr(0, kMcapMagicSize) != absl::string_view(kMcapMagic, kMcapMagicSize)) {
      return absl::DataLossError(
          absl::StrCat(path_, ": byte 0: not an MCAP file (the magic \\x89MCAP0\\r\\n is missing)"));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<McapScanEnd> Walk(const Walker& w) {
    McapScanEnd end;
    size_t pos = kMcapMagicSize;
    bool first = true;
    while (true) {
      end.valid_until = pos;
      if (data_.size() - pos < kRecordHead) {
        end.truncated = absl::StrCat(path_, ": the data ends at byte ", data_.size(),
                                     pos == data_.size() ? " without a DataEnd or Footer record"
                                                         : " inside a record's opcode and length");
        return end;
      }
      McapBytesIn head(data_.substr(pos, kRecordHead));
      uint8_t op;
      uint64_t len;
      head.U8(&op);
      head.U64(&len);
      if (len > data_.size() - pos - kRecordHead) {
        end.truncated = absl::StrCat(path_, ": the record at byte ", pos, " (opcode 0x",
                                     absl::Hex(op), ") claims ", len, " bytes, ",
                                     data_.size() - pos - kRecordHead, " remain");
        return end;
      }
      absl::string_view content = data_.substr(pos + kRecordHead, len);
      if (first && op != static_cast<uint8_t>(McapOp::kHeader)) {
        return absl::DataLossError(absl::StrCat(path_, ": byte ", pos,
                                                ": the first record is opcode 0x", absl::Hex(op),
                                                ", not the Header (0x01)"));
      }
      first = false;
      if (op == static_cast<uint8_t>(McapOp::kDataEnd) ||
          op == static_cast<uint8_t>(McapOp::kFooter)) {
        return end;
      }
      absl::StatusOr<bool> more = op == static_cast<uint8_t>(McapOp::kChunk)
                                      ? Chunk(w, content, pos, len)
                                      : One(w, op, content, false, pos);
      if (!more.ok()) {
        if (!w.damage_ends_scan) return more.status();
        end.truncated = std::string(more.status().message());
        return end;
      }
      {
        if (!*more) {
          end.valid_until = pos + kRecordHead + len;
          return end;
        }
      }
      pos += kRecordHead + len;
    }
  }

  absl::StatusOr<McapSummary> Summary() {
    McapSummary summary;
    if (absl::Status s = ReadHeader(&summary); !s.ok()) return s;
    absl::StatusOr<bool> from_footer = FromSummarySection(&summary);
    if (!from_footer.ok()) return from_footer.status();
    if (*from_footer) return summary;
    return Scan(std::move(summary));
  }

  const std::string& path() const { return path_; }
  uint64_t size() const { return data_.size(); }

 private:
  absl::Status Damaged(size_t at, absl::string_view what) const {
    return absl::DataLossError(absl::StrCat(path_, ": byte ", at, ": ", what));
  }

  absl::StatusOr<bool> One(const Walker& w, uint8_t op, absl::string_view content, bool in_chunk,
                           size_t at) {
    McapRecordView view;
    view.opcode = op;
    view.content = content;
    view.in_chunk = in_chunk;
    if (op == static_cast<uint8_t>(McapOp::kMessage)) {
      McapBytesIn in(content);
      McapRecordView::Message m;
      if (!in.U16(&m.channel_id) || !in.U32(&m.sequence) || !in.U64(&m.log_time) ||
          !in.U64(&m.publish_time)) {
        return Damaged(at, "a Message record shorter than its 22 bytes of fields");
      }
      m.data = in.rest();
      view.message = m;
    }
    return w.visit(view);
  }

  absl::StatusOr<bool> Chunk(const Walker& w, absl::string_view content, size_t at, uint64_t len) {
    McapBytesIn in(content);
    McapChunkInfo info;
    uint32_t crc;
    absl::string_view compressed;
    uint64_t compressed_len;
    if (!in.U64(&info.message_start_time) || !in.U64(&info.message_end_time) ||
        !in.U64(&info.uncompressed_size) || !in.U32(&crc) || !in.String(&info.compression) ||
        !in.U64(&compressed_len) || !in.Take(compressed_len, &compressed)) {
      return Damaged(at, "a Chunk record whose fields run past its length");
    }
    info.chunk_start_offset = at;
    info.chunk_length = kRecordHead + len;
    info.compressed_size = compressed_len;
    absl::StatusOr<std::string> records =
        McapDecompress(info.compression, compressed, info.uncompressed_size);
    if (!records.ok()) {
      return Damaged(at, absl::StrCat("the Chunk's records: ", records.status().message()));
    }
    if (crc != 0 && Crc32(*records) != crc) {
      return Damaged(at, absl::StrCat("the Chunk's uncompressed_crc ", crc,
                                      " does not match its records (", Crc32(*records), ")"));
    }
    if (w.on_chunk) w.on_chunk(info);
    absl::string_view rs(*records);
    size_t p = 0;
    while (p < rs.size()) {
      if (rs.size() - p < kRecordHead) {
        return Damaged(at, absl::StrCat("the Chunk's records end inside a record at offset ", p));
      }
      McapBytesIn head(rs.substr(p, kRecordHead));
      uint8_t op;
      uint64_t rlen;
      head.U8(&op);
      head.U64(&rlen);
      if (rlen > rs.size() - p - kRecordHead) {
        return Damaged(at, absl::StrCat("a record at offset ", p, " of the Chunk claims ", rlen,
                                        " bytes, ", rs.size() - p - kRecordHead, " remain"));
      }
      absl::StatusOr<bool> more = One(w, op, rs.substr(p + kRecordHead, rlen), true, at);
      if (!more.ok() || !*more) return more;
      p += kRecordHead + rlen;
    }
    return true;
  }

  absl::Status ReadHeader(McapSummary* summary) {
    McapBytesIn head(data_.substr(kMcapMagicSize));
    uint8_t op;
    uint64_t len;
    absl::string_view content;
    if (!head.U8(&op) || !head.U64(&len) || !head.Take(len, &content) ||
        op != static_cast<uint8_t>(McapOp::kHeader)) {
      return Damaged(kMcapMagicSize, "no complete Header record after the magic");
    }
    McapBytesIn h(content);
    if (!h.String(&summary->profile) || !h.String(&summary->library)) {
      return Damaged(kMcapMagicSize, "Header record: profile or library runs past its length");
    }
    return absl::OkStatus();
  }

  // True when the file ends in a footer that points at a summary section,
  // which was read into `summary`.
  absl::StatusOr<bool> FromSummarySection(McapSummary* summary) {
    if (data_.size() < kMcapMagicSize * 2 + kFooterRecord) return false;
    size_t footer_at = data_.size() - kMcapMagicSize - kFooterRecord;
    if (data_.substr(data_.size() - kMcapMagicSize) !=
        absl::string_view(kMcapMagic, kMcapMagicSize)) {
      return false;
    }
    McapBytesIn f(data_.substr(footer_at));
    uint8_t op;
    uint64_t len, summary_start, offset_start;
    uint32_t crc;
    f.U8(&op);
    f.U64(&len);
    if (op != static_cast<uint8_t>(McapOp::kFooter) || len != 20) return false;
    f.U64(&summary_start);
    f.U64(&offset_start);
    f.U32(&crc);
    if (summary_start == 0) return false;
    if (summary_start > footer_at || (offset_start != 0 && offset_start > footer_at) ||
        (offset_start != 0 && offset_start < summary_start)) {
      return Damaged(footer_at, absl::StrCat("Footer: summary_start ", summary_start,
                                             " or summary_offset_start ", offset_start,
                                             " lies outside the file's summary"));
    }
    absl::string_view covered =
        data_.substr(summary_start, footer_at + kRecordHead + 16 - summary_start);
    if (crc != 0 && Crc32(covered) != crc) {
      return Damaged(footer_at, absl::StrCat("Footer: summary_crc ", crc,
                                             " does not match the summary (", Crc32(covered), ")"));
    }
    size_t end = offset_start != 0 ? offset_start : footer_at;
    McapBytesIn in(data_.substr(summary_start, end - summary_start));
    while (!in.done()) {
      size_t at = summary_start + in.position();
      absl::string_view content;
      if (!in.U8(&op) || !in.U64(&len) || !in.Take(len, &content)) {
        return Damaged(at, "a summary record runs past the summary section");
      }
      absl::Status s = SummaryRecord(op, content, at, summary);
      if (!s.ok()) return s;
    }
    if (!summary->statistics.present) {
      // Another writer's summary without statistics: counted by a scan.
      McapSummary header_only;
      header_only.profile = summary->profile;
      header_only.library = summary->library;
      *summary = std::move(header_only);
      return false;
    }
    summary->from_summary_section = true;
    return true;
  }

  absl::Status SummaryRecord(uint8_t op, absl::string_view content, size_t at,
                             McapSummary* summary) {
    McapBytesIn in(content);
    switch (static_cast<McapOp>(op)) {
      case McapOp::kSchema: {
        absl::StatusOr<McapSchema> s = ParseMcapSchema(content);
        if (!s.ok()) return Damaged(at, s.status().message());
        summary->schemas[s->id] = *std::move(s);
        return absl::OkStatus();
      }
      case McapOp::kChannel: {
        absl::StatusOr<McapChannel> c = ParseMcapChannel(content);
        if (!c.ok()) return Damaged(at, c.status().message());
        summary->channels[c->id] = *std::move(c);
        return absl::OkStatus();
      }
      case McapOp::kStatistics: {
        McapStatistics& st = summary->statistics;
        if (!in.U64(&st.message_count) || !in.U16(&st.schema_count) ||
            !in.U32(&st.channel_count) || !in.U32(&st.attachment_count) ||
            !in.U32(&st.metadata_count) || !in.U32(&st.chunk_count) ||
            !in.U64(&st.message_start_time) || !in.U64(&st.message_end_time) ||
            !in.U16U64Map(&st.channel_message_counts)) {
          return Damaged(at, "Statistics record: a field runs past its length");
        }
        st.present = true;
        return absl::OkStatus();
      }
      case McapOp::kChunkIndex: {
        McapChunkInfo c;
        uint64_t index_length;
        if (!in.U64(&c.message_start_time) || !in.U64(&c.message_end_time) ||
            !in.U64(&c.chunk_start_offset) || !in.U64(&c.chunk_length) ||
            !in.U16U64Map(&c.message_index_offsets) || !in.U64(&index_length) ||
            !in.String(&c.compression) || !in.U64(&c.compressed_size) ||
            !in.U64(&c.uncompressed_size)) {
          return Damaged(at, "ChunkIndex record: a field runs past its length");
        }
        summary->chunks.push_back(std::move(c));
        return absl::OkStatus();
      }
      case McapOp::kMetadataIndex: {
        uint64_t offset, length;
        std::string name;
        if (!in.U64(&offset) || !in.U64(&length) || !in.String(&name)) {
          return Damaged(at, "MetadataIndex record: a field runs past its length");
        }
        if (offset > data_.size() || length > data_.size() - offset || length < kRecordHead) {
          return Damaged(at, absl::StrCat("MetadataIndex \"", name, "\": offset ", offset,
                                          " length ", length, " lies outside the file"));
        }
        absl::StatusOr<McapMetadata> m =
            ParseMcapMetadata(data_.substr(offset + kRecordHead, length - kRecordHead));
        if (!m.ok()) return Damaged(offset, m.status().message());
        summary->metadata.push_back(*std::move(m));
        return absl::OkStatus();
      }
      default:
        return absl::OkStatus();  // other groups (attachments, unknown) are not needed
    }
  }

  absl::StatusOr<McapSummary> Scan(McapSummary summary) {
    McapStatistics& st = summary.statistics;
    Walker w;
    w.on_chunk = [&](const McapChunkInfo& c) { summary.chunks.push_back(c); };
    absl::Status failure;
    w.visit = [&](const McapRecordView& r) {
      switch (static_cast<McapOp>(r.opcode)) {
        case McapOp::kSchema: {
          absl::StatusOr<McapSchema> s = ParseMcapSchema(r.content);
          if (!s.ok()) {
            failure = s.status();
            return false;
          }
          summary.schemas[s->id] = *std::move(s);
          break;
        }
        case McapOp::kChannel: {
          absl::StatusOr<McapChannel> c = ParseMcapChannel(r.content);
          if (!c.ok()) {
            failure = c.status();
            return false;
          }
          summary.channels[c->id] = *std::move(c);
          break;
        }
        case McapOp::kMetadata: {
          absl::StatusOr<McapMetadata> m = ParseMcapMetadata(r.content);
          if (!m.ok()) {
            failure = m.status();
            return false;
          }
          summary.metadata.push_back(*std::move(m));
          break;
        }
        case McapOp::kMessage: {
          const McapRecordView::Message& m = *r.message;
          if (st.message_count == 0 || m.log_time < st.message_start_time) {
            st.message_start_time = m.log_time;
          }
          if (st.message_count == 0 || m.log_time > st.message_end_time) {
            st.message_end_time = m.log_time;
          }
          ++st.message_count;
          ++st.channel_message_counts[m.channel_id];
          break;
        }
        default:
          break;
      }
      return true;
    };
    absl::StatusOr<McapScanEnd> end = Walk(w);
    if (!failure.ok()) return absl::DataLossError(absl::StrCat(path_, ": ", failure.message()));
    if (!end.ok()) return end.status();
    st.present = true;
    st.schema_count = static_cast<uint16_t>(summary.schemas.size());
    st.channel_count = static_cast<uint32_t>(summary.channels.size());
    st.metadata_count = static_cast<uint32_t>(summary.metadata.size());
    st.chunk_count = static_cast<uint32_t>(summary.chunks.size());
    summary.from_summary_section = false;
    return summary;
  }

  const std::string path_;
  std::string owned_;
  void* map_;
  size_t map_len_;
  absl::string_view data_;
};

absl::StatusOr<std::unique_ptr<McapReader>> McapReader::Open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    return absl::Status(absl::ErrnoToStatusCode(e),
                        absl::StrCat(path, ": cannot open: ", std::strerror(e)));
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    return absl::Status(absl::ErrnoToStatusCode(e),
                        absl::StrCat(path, ": cannot stat: ", std::strerror(e)));
  }
  size_t size = static_cast<size_t>(st.st_size);
  void* map = nullptr;
  if (size > 0) {
    map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
      int e = errno;
      ::close(fd);
      return absl::Status(absl::ErrnoToStatusCode(e),
                          absl::StrCat(path, ": cannot map: ", std::strerror(e)));
    }
  }
  ::close(fd);
  absl::string_view data(static_cast<const char*>(map), map != nullptr ? size : 0);
  auto impl = std::make_unique<Impl>(path, data, std::string(), map, size);
  if (absl::Status s = impl->CheckMagic(); !s.ok()) return s;
  return std::unique_ptr<McapReader>(new McapReader(std::move(impl)));
}

absl::StatusOr<std::unique_ptr<McapReader>> McapReader::FromBytes(std::string bytes,
                                                                  const std::string& name) {
  auto impl = std::make_unique<Impl>(name, absl::string_view(), std::move(bytes), nullptr, 0);
  if (absl::Status s = impl->CheckMagic(); !s.ok()) return s;
  return std::unique_ptr<McapReader>(new McapReader(std::move(impl)));
}

McapReader::McapReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
McapReader::~McapReader() = default;

absl::StatusOr<McapSummary> McapReader::Summary() { return impl_->Summary(); }

absl::StatusOr<McapScanEnd> McapReader::ForEachRecord(
    const std::function<bool(const McapRecordView&)>& visit, bool damage_ends_scan) {
  Walker w;
  w.visit = visit;
  w.damage_ends_scan = damage_ends_scan;
  return impl_->Walk(w);
}

const std::string& McapReader::path() const { return impl_->path(); }
uint64_t McapReader::size() const { return impl_->size(); }

}  // namespace record
}  // namespace cyber
