// The byte layer of MCAP shared by the writer and the reader: little-endian
// integers, MCAP strings (u32 length + bytes), maps (u32 byte length +
// entries), CRC-32 (the IEEE polynomial the specification names), and the
// chunk compressions (zstd and LZ4 frames, from Debian's libzstd, liblz4).
//
// McapBytesIn never reads past its end: every getter returns false when
// the field does not fit, and the caller names the field in its error.
//
// Threads: free functions and values with one owner.

#ifndef CYBER_RECORD_MCAP_MCAP_BYTES_H_
#define CYBER_RECORD_MCAP_MCAP_BYTES_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cyber {
namespace record {

inline constexpr char kMcapMagic[] = "\x89MCAP0\r\n";
inline constexpr size_t kMcapMagicSize = 8;

// CRC-32 (IEEE 802.3, reflected; zlib's): Crc32Update(0, ...) starts one.
uint32_t Crc32Update(uint32_t crc, absl::string_view bytes);
inline uint32_t Crc32(absl::string_view bytes) { return Crc32Update(0, bytes); }

class McapBytesOut {
 public:
  explicit McapBytesOut(std::string* out) : out_(out) {}
  void U8(uint8_t v) { out_->push_back(static_cast<char>(v)); }
  void U16(uint16_t v) { Int(v, 2); }
  void U32(uint32_t v) { Int(v, 4); }
  void U64(uint64_t v) { Int(v, 8); }
  void String(absl::string_view s);  // u32 length + bytes
  void Bytes(absl::string_view s) { out_->append(s.data(), s.size()); }
  void StringMap(const std::map<std::string, std::string>& m);
  void U16U64Map(const std::map<uint16_t, uint64_t>& m);
  // A whole record: opcode, u64 content length, content.
  void Record(uint8_t opcode, absl::string_view content);

 private:
  void Int(uint64_t v, int bytes);
  std::string* out_;
};

class McapBytesIn {
 public:
  explicit McapBytesIn(absl::string_view in) : in_(in) {}
  bool U8(uint8_t* v);
  bool U16(uint16_t* v);
  bool U32(uint32_t* v);
  bool U64(uint64_t* v);
  bool String(std::string* s);
  bool StringView(absl::string_view* s);
  bool Take(size_t n, absl::string_view* s);
  bool StringMap(std::map<std::string, std::string>* m);
  bool U16U64Map(std::map<uint16_t, uint64_t>* m);
  absl::string_view rest() const { return in_.substr(pos_); }
  size_t position() const { return pos_; }
  bool done() const { return pos_ == in_.size(); }

 private:
  bool Int(uint64_t* v, int bytes);
  absl::string_view in_;
  size_t pos_ = 0;
};

// "" (none), "zstd", "lz4".
absl::StatusOr<std::string> McapCompress(absl::string_view compression, absl::string_view data);
// `uncompressed_size` from the chunk; DataLoss when the data does not
// decompress to exactly that; Unimplemented for another compression name.
absl::StatusOr<std::string> McapDecompress(absl::string_view compression, absl::string_view data,
                                           uint64_t uncompressed_size);

}  // namespace record
}  // namespace cyber

#endif  // CYBER_RECORD_MCAP_MCAP_BYTES_H_
