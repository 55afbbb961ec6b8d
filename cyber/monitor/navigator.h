// Navigator: cyber_monitor's keys as a state machine — which view is shown
// (the channel list, the process view, one channel's latest message), what
// is selected, how far the message is scrolled — apart from the terminal
// and the graph, so every key is unit tested.
//
//   Channels --Tab--> Processes --Tab, Esc, Left--> Channels
//   Channels --Enter, Right--> Message (of the selected channel)
//   Message  --Esc, Left--> Channels
//   q in any view: quit.   Up/Down/PageUp/PageDown/Home/End: move.
//
// The selection follows a channel by name when the list changes under it
// (a channel appears above it), and stays in range when rows disappear.
//
// Threads: not thread-safe; a value owned by the monitor's loop.

#ifndef CYBER_MONITOR_NAVIGATOR_H_
#define CYBER_MONITOR_NAVIGATOR_H_

#include <cstddef>
#include <string>
#include <vector>

#include "cyber/monitor/key_decoder.h"

namespace cyber {
namespace monitor {

enum class View { kChannels, kProcesses, kMessage };

struct NavState {
  View view = View::kChannels;
  size_t channel_row = 0;
  std::string channel_name;  // the selected channel, "" when none
  size_t process_line = 0;
  std::string open_channel;  // the message view's channel
  size_t message_scroll = 0;
};

// What the loop must do after a key, besides redrawing.
enum class Action {
  kNone,
  kQuit,
  kOpenChannel,   // subscribe to state().open_channel
  kCloseChannel,  // end the message view's subscription
};

// What the views hold now, for moving within them.
struct NavExtent {
  std::vector<std::string> channels;  // the channel list's names, in order
  size_t process_lines = 0;           // ProcessLineCount()
  size_t message_lines = 0;           // lines of the decoded message
  size_t page = 10;                   // rows in a screenful
};

class Navigator {
 public:
  Action OnKey(Key key, const NavExtent& extent);
  // Keeps the selection on its channel (by name) and in range after the
  // lists changed.
  void Follow(const NavExtent& extent);
  const NavState& state() const { return state_; }

 private:
  static size_t Move(size_t at, Key key, size_t count, size_t page);

  NavState state_;
};

}  // namespace monitor
}  // namespace cyber

#endif  // CYBER_MONITOR_NAVIGATOR_H_
