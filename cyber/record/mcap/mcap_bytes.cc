#include "cyber/record/mcap/mcap_bytes.h"

#include <algorithm>
#include <array>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "lz4frame.h"
#include "zlib.h"
#include "zstd.h"

namespace cyber {
namespace record {
namespace {

// Records are at most this large when decompressed: a chunk claiming more
// is damage, not data (the recorder's chunks are 1 MiB; a camera message
// is a few MiB).
constexpr uint64_t kMaxUncompressedChunk = uint64_t{1} << 32;

}  // namespace

uint32_t Crc32Update(uint32_t crc, absl::string_view bytes) {
  // zlib's (the same polynomial and reflection MCAP names), several times
  // faster than a byte-wise table: a camera-sized chunk is CRC'd twice.
  while (!bytes.empty()) {
    uInt n = static_cast<uInt>(std::min<size_t>(bytes.size(), 1u << 30));
    crc = static_cast<uint32_t>(
        crc32(crc, reinterpret_cast<const Bytef*>(bytes.data()), n));
    bytes.remove_prefix(n);
  }
  return crc;
}

void McapBytesOut::Int(uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out_->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

void McapBytesOut::String(absl::string_view s) {
  U32(static_cast<uint32_t>(s.size()));
  Bytes(s);
}

void McapBytesOut::StringMap(const std::map<std::string, std::string>& m) {
  std::string body;
  McapBytesOut b(&body);
  for (const auto& [k, v] : m) {
    b.String(k);
    b.String(v);
  }
  String(body);
}

void McapBytesOut::U16U64Map(const std::map<uint16_t, uint64_t>& m) {
  U32(static_cast<uint32_t>(m.size() * 10));
  for (const auto& [k, v] : m) {
    U16(k);
    U64(v);
  }
}

void McapBytesOut::Record(uint8_t opcode, absl::string_view content) {
  U8(opcode);
  U64(content.size());
  Bytes(content);
}

bool McapBytesIn::Int(uint64_t* v, int bytes) {
  if (in_.size() - pos_ < static_cast<size_t>(bytes)) return false;
  uint64_t r = 0;
  for (int i = 0; i < bytes; ++i) {
    r |= uint64_t{static_cast<unsigned char>(in_[pos_ + i])} << (8 * i);
  }
  pos_ += bytes;
  *v = r;
  return true;
}

bool McapBytesIn::U8(uint8_t* v) {
  uint64_t r;
  if (!Int(&r, 1)) return false;
  *v = static_cast<uint8_t>(r);
  return true;
}
bool McapBytesIn::U16(uint16_t* v) {
  uint64_t r;
  if (!Int(&r, 2)) return false;
  *v = static_cast<uint16_t>(r);
  return true;
}
bool McapBytesIn::U32(uint32_t* v) {
  uint64_t r;
  if (!Int(&r, 4)) return false;
  *v = static_cast<uint32_t>(r);
  return true;
}
bool McapBytesIn::U64(uint64_t* v) { return Int(v, 8); }

bool McapBytesIn::Take(size_t n, absl::string_view* s) {
  if (in_.size() - pos_ < n) return false;
  *s = in_.substr(pos_, n);
  pos_ += n;
  return true;
}

bool McapBytesIn::StringView(absl::string_view* s) {
  uint32_t n;
  return U32(&n) && Take(n, s);
}

bool McapBytesIn::String(std::string* s) {
  absl::string_view v;
  if (!StringView(&v)) return false;
  s->assign(v.data(), v.size());
  return true;
}

bool McapBytesIn::StringMap(std::map<std::string, std::string>* m) {
  absl::string_view body;
  if (!StringView(&body)) return false;
  McapBytesIn b(body);
  while (!b.done()) {
    std::string k, v;
    if (!b.String(&k) || !b.String(&v)) return false;
    (*m)[k] = std::move(v);
  }
  return true;
}

bool McapBytesIn::U16U64Map(std::map<uint16_t, uint64_t>* m) {
  absl::string_view body;
  if (!StringView(&body)) return false;
  McapBytesIn b(body);
  while (!b.done()) {
    uint16_t k;
    uint64_t v;
    if (!b.U16(&k) || !b.U64(&v)) return false;
    (*m)[k] = v;
  }
  return true;
}

absl::StatusOr<std::string> McapCompress(absl::string_view compression, absl::string_view data) {
  if (compression.empty()) return std::string(data);
  if (compression == "zstd") {
    std::string out(ZSTD_compressBound(data.size()), '\0');
    size_t n = ZSTD_compress(out.data(), out.size(), data.data(), data.size(), 1);
    if (ZSTD_isError(n)) {
      return absl::InternalError(absl::StrCat("zstd compression failed: ", ZSTD_getErrorName(n)));
    }
    out.resize(n);
    return out;
  }
  if (compression == "lz4") {
    std::string out(LZ4F_compressFrameBound(data.size(), nullptr), '\0');
    size_t n = LZ4F_compressFrame(out.data(), out.size(), data.data(), data.size(), nullptr);
    if (LZ4F_isError(n)) {
      return absl::InternalError(absl::StrCat("lz4 compression failed: ", LZ4F_getErrorName(n)));
    }
    out.resize(n);
    return out;
  }
  return absl::UnimplementedError(
      absl::StrCat("compression \"", compression, "\" is not one of \"\", zstd, lz4"));
}

absl::StatusOr<std::string> McapDecompress(absl::string_view compression, absl::string_view data,
                                           uint64_t uncompressed_size) {
  if (uncompressed_size > kMaxUncompressedChunk) {
    return absl::DataLossError(
        absl::StrCat("uncompressed_size ", uncompressed_size, " is over the 4 GiB a chunk may hold"));
  }
  if (compression.empty()) {
    if (data.size() != uncompressed_size) {
      return absl::DataLossError(absl::StrCat("an uncompressed chunk of ", data.size(),
                                              " bytes says uncompressed_size ",
                                              uncompressed_size));
    }
    return std::string(data);
  }
  if (compression == "zstd") {
    // Streamed into a buffer that grows with what really comes out, so a
    // damaged or hostile uncompressed_size (or frame header) never becomes
    // an allocation of what it claims.
    ZSTD_DCtx* ctx = ZSTD_createDCtx();
    if (ctx == nullptr) return absl::ResourceExhaustedError("zstd: no decompression context");
    std::unique_ptr<ZSTD_DCtx, decltype(&ZSTD_freeDCtx)> owner(ctx, &ZSTD_freeDCtx);
    std::string out(std::min<uint64_t>(uncompressed_size, uint64_t{1} << 20), '\0');
    ZSTD_inBuffer in{data.data(), data.size(), 0};
    size_t produced = 0;
    while (true) {
      ZSTD_outBuffer o{out.data(), out.size(), produced};
      size_t r = ZSTD_decompressStream(ctx, &o, &in);
      if (ZSTD_isError(r)) return absl::DataLossError(absl::StrCat("zstd: ", ZSTD_getErrorName(r)));
      produced = o.pos;
      if (r == 0 && in.pos == in.size) break;  // the frame ended with the input
      if (produced == out.size()) {
        if (out.size() == uncompressed_size) {
          return absl::DataLossError(absl::StrCat("zstd data decompresses to more than the ",
                                                  uncompressed_size,
                                                  " bytes uncompressed_size says"));
        }
        out.resize(std::min<uint64_t>(uncompressed_size, uint64_t{out.size()} * 2));
      } else if (in.pos == in.size) {
        return absl::DataLossError("zstd: the data ends inside a frame");
      }
    }
    if (produced != uncompressed_size) {
      return absl::DataLossError(absl::StrCat("zstd data decompressed to ", produced,
                                              " bytes, uncompressed_size says ",
                                              uncompressed_size));
    }
    return out;
  }
  if (compression != "lz4") {
    return absl::UnimplementedError(
        absl::StrCat("compression \"", compression, "\" is not one of \"\", zstd, lz4"));
  }
  if (uncompressed_size > uint64_t{data.size()} * 255 + 64) {
    // LZ4's largest ratio is under 255: the claim is damage.
    return absl::DataLossError(absl::StrCat("lz4 data of ", data.size(),
                                            " bytes cannot decompress to the ", uncompressed_size,
                                            " bytes uncompressed_size says"));
  }
  // As zstd's: a buffer that grows with the real output.
  std::string out(std::min<uint64_t>(uncompressed_size, uint64_t{1} << 20), '\0');
  {
    LZ4F_dctx* ctx = nullptr;
    if (LZ4F_isError(LZ4F_createDecompressionContext(&ctx, LZ4F_VERSION))) {
      return absl::ResourceExhaustedError("lz4: no decompression context");
    }
    std::unique_ptr<LZ4F_dctx, decltype(&LZ4F_freeDecompressionContext)> owner(
        ctx, &LZ4F_freeDecompressionContext);
    size_t in_pos = 0, out_pos = 0;
    while (in_pos < data.size()) {
      if (out_pos == out.size()) {
        if (out.size() == uncompressed_size) {
          return absl::DataLossError(absl::StrCat("lz4: the frame decompresses to more than ",
                                                  uncompressed_size, " bytes"));
        }
        out.resize(std::min<uint64_t>(uncompressed_size, uint64_t{out.size()} * 2));
      }
      size_t dst = out.size() - out_pos;
      size_t src = data.size() - in_pos;
      size_t hint = LZ4F_decompress(ctx, out.data() + out_pos, &dst, data.data() + in_pos, &src,
                                    nullptr);
      if (LZ4F_isError(hint)) {
        return absl::DataLossError(absl::StrCat("lz4: ", LZ4F_getErrorName(hint)));
      }
      in_pos += src;
      out_pos += dst;
      if (hint == 0) break;
      if (src == 0 && dst == 0 && out_pos < out.size()) {
        return absl::DataLossError("lz4: the frame makes no progress");
      }
    }
    if (out_pos != uncompressed_size) {
      return absl::DataLossError(absl::StrCat("lz4 data decompressed to ", out_pos,
                                              " bytes, uncompressed_size says ",
                                              uncompressed_size));
    }
    return out;
  }
}

}  // namespace record
}  // namespace cyber
