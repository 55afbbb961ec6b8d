#include "cyber/monitor/key_decoder.h"

#include <optional>

namespace cyber {
namespace monitor {
namespace {

constexpr char kEsc = '\x1b';
// Longer than any key's sequence (ESC [ 1 ; 5 ~ and the like).
constexpr size_t kLongestSequence = 16;

// The key of a complete CSI (ESC [ ...) or SS3 (ESC O x) sequence.
std::optional<Key> SequenceKey(const std::string& seq) {
  const char last = seq.back();
  if (seq.size() == 3) {
    switch (last) {
      case 'A': return Key::kUp;
      case 'B': return Key::kDown;
      case 'C': return Key::kRight;
      case 'D': return Key::kLeft;
      case 'H': return Key::kHome;
      case 'F': return Key::kEnd;
      default: return std::nullopt;
    }
  }
  if (seq == "\x1b[5~") return Key::kPageUp;
  if (seq == "\x1b[6~") return Key::kPageDown;
  if (seq == "\x1b[1~" || seq == "\x1b[7~") return Key::kHome;
  if (seq == "\x1b[4~" || seq == "\x1b[8~") return Key::kEnd;
  return std::nullopt;
}

// Whether `seq` (starting with ESC) is complete.
bool Complete(const std::string& seq) {
  if (seq.size() < 2) return false;
  if (seq[1] == 'O') return seq.size() >= 3;
  if (seq.size() < 3) return false;
  const unsigned char last = static_cast<unsigned char>(seq.back());
  return last >= 0x40 && last <= 0x7e;  // a CSI's final byte
}

}  // namespace

const char* KeyName(Key key) {
  switch (key) {
    case Key::kUp: return "Up";
    case Key::kDown: return "Down";
    case Key::kLeft: return "Left";
    case Key::kRight: return "Right";
    case Key::kPageUp: return "PageUp";
    case Key::kPageDown: return "PageDown";
    case Key::kHome: return "Home";
    case Key::kEnd: return "End";
    case Key::kEnter: return "Enter";
    case Key::kEscape: return "Escape";
    case Key::kTab: return "Tab";
    case Key::kQuit: return "Quit";
  }
  return "?";
}

std::vector<Key> KeyDecoder::Feed(absl::string_view bytes) {
  std::vector<Key> keys;
  for (char b : bytes) {
    if (pending_.size() == 1 && b != '[' && b != 'O') {
      // ESC then a key that starts no sequence: Esc, typed just before it.
      keys.push_back(Key::kEscape);
      pending_.clear();
    }
    if (!pending_.empty()) {
      pending_.push_back(b);
      if (Complete(pending_)) {
        if (std::optional<Key> k = SequenceKey(pending_)) keys.push_back(*k);
        pending_.clear();
      } else if (pending_.size() > kLongestSequence) {
        pending_.clear();  // not a sequence of a key: dropped
      }
      continue;
    }
    switch (b) {
      case kEsc: pending_.push_back(b); break;
      case '\r':
      case '\n': keys.push_back(Key::kEnter); break;
      case '\t': keys.push_back(Key::kTab); break;
      case 'q':
      case 'Q': keys.push_back(Key::kQuit); break;
      case 'k': keys.push_back(Key::kUp); break;
      case 'j': keys.push_back(Key::kDown); break;
      case 'h': keys.push_back(Key::kLeft); break;
      case 'l': keys.push_back(Key::kRight); break;
      default: break;
    }
  }
  return keys;
}

std::vector<Key> KeyDecoder::Flush() {
  std::vector<Key> keys;
  if (pending_.size() == 1) keys.push_back(Key::kEscape);
  pending_.clear();
  return keys;
}

}  // namespace monitor
}  // namespace cyber
