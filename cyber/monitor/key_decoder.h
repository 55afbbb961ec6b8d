// KeyDecoder: the bytes a terminal in raw mode sends, as the keys the
// monitor acts on. Arrows come as escape sequences (ESC [ A, or ESC O A in
// a terminal's application-cursor mode), so a lone ESC (the Esc key) is
// told from the start of a sequence only by what follows: Feed() keeps an
// unfinished sequence, and Flush(), called when no byte came for a short
// while, turns a lone ESC into Esc; so does a byte after ESC that starts no
// sequence (Esc and then Tab sent at once). Other sequences (function
// keys, modified arrows) are read to their end and dropped.
//
// Threads: not thread-safe; a value owned by the input loop.

#ifndef CYBER_MONITOR_KEY_DECODER_H_
#define CYBER_MONITOR_KEY_DECODER_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace cyber {
namespace monitor {

enum class Key {
  kUp,
  kDown,
  kLeft,
  kRight,
  kPageUp,
  kPageDown,
  kHome,
  kEnd,
  kEnter,
  kEscape,
  kTab,
  kQuit,  // q or Q
};

// "Up", "Enter", ... for tests and messages.
const char* KeyName(Key key);

class KeyDecoder {
 public:
  // The keys completed by `bytes` (with what an earlier Feed kept).
  std::vector<Key> Feed(absl::string_view bytes);
  // No more bytes for now: a pending lone ESC is the Esc key; an
  // unfinished sequence is dropped.
  std::vector<Key> Flush();
  bool pending() const { return !pending_.empty(); }

 private:
  std::string pending_;  // an escape sequence not yet complete
};

}  // namespace monitor
}  // namespace cyber

#endif  // CYBER_MONITOR_KEY_DECODER_H_
