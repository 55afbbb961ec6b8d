// FuzzInput: reads the fuzzer's bytes as a stream of small decisions
// (which operation, which timer, how many ticks).
//
// Why our own: clang ships FuzzedDataProvider, but the fuzz targets are also
// built by gcc (as replay tests, see fuzz.bzl), which does not have it. The
// decoding rules are few and chosen so that libFuzzer's mutations stay
// meaningful: every decision consumes whole bytes from the front, a value in
// a range takes only as many bytes as the range needs, and an exhausted input
// reads as zeros, so every byte string is a valid program and a truncated one
// is a prefix of the original program.
//
// Threads: one owner; not thread-safe.

#ifndef TESTS_FUZZ_FUZZ_INPUT_H_
#define TESTS_FUZZ_FUZZ_INPUT_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace cyber {
namespace fuzz {

class FuzzInput {
 public:
  FuzzInput(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  bool empty() const { return pos_ >= size_; }
  size_t remaining() const { return size_ - pos_; }

  // The next byte; 0 once the input is exhausted.
  uint8_t Byte() { return empty() ? 0 : data_[pos_++]; }
  bool Bool() { return (Byte() & 1) != 0; }

  // A value in [lo, hi], from the fewest bytes that can express the range
  // (big-endian, then reduced modulo the range). REQUIRES: lo <= hi.
  uint64_t Uint(uint64_t lo, uint64_t hi) {
    const uint64_t span = hi - lo;  // values - 1
    uint64_t value = 0;
    for (uint64_t left = span; left != 0; left >>= 8) value = (value << 8) | Byte();
    return span == ~uint64_t{0} ? value : lo + value % (span + 1);
  }
  int64_t Int(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(Uint(0, static_cast<uint64_t>(hi - lo)));
  }
  // One of `n` choices, 0..n-1. REQUIRES: n >= 1.
  size_t Choice(size_t n) { return static_cast<size_t>(Uint(0, n - 1)); }

  // Up to `max_size` bytes: a length byte pair, then that many bytes (fewer
  // if the input runs out).
  std::string Bytes(size_t max_size) {
    size_t n = static_cast<size_t>(Uint(0, max_size));
    if (n > remaining()) n = remaining();
    std::string out(reinterpret_cast<const char*>(data_ + pos_), n);
    pos_ += n;
    return out;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

}  // namespace fuzz
}  // namespace cyber

#endif  // TESTS_FUZZ_FUZZ_INPUT_H_
