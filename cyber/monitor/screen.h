// Screen: one frame of cyber_monitor as text — the lines of a terminal of
// `width` x `height` for the current view (NavState) of a MonitorSnapshot —
// and the same tables in full for --once. Plain strings, no escape
// sequences: the terminal (terminal.h) adds the highlight and the cursor
// moves, so layout is unit tested as text.
//
// Layout: a title line (program, domain, view), a column header, the rows,
// and a line of keys at the bottom. The rows scroll so that the selected
// one is always shown. A line longer than the width is cut, a name too
// long for its column ends in '~'.
//
// Threads: pure functions.

#ifndef CYBER_MONITOR_SCREEN_H_
#define CYBER_MONITOR_SCREEN_H_

#include <string>
#include <vector>

#include "cyber/monitor/monitor_model.h"
#include "cyber/monitor/navigator.h"

namespace cyber {
namespace monitor {

struct Frame {
  std::vector<std::string> lines;  // exactly `height`, none longer than `width`
  int highlight = -1;              // the selected line's index, -1: none
};

Frame Render(const MonitorSnapshot& snapshot, const NavState& nav, int width, int height);

// The channel table, then the process view, every row (for --once).
std::string BatchText(const MonitorSnapshot& snapshot, int width);

// The decoded message's lines as the message view shows them.
std::vector<std::string> MessageLines(const MessagePanel& panel);

// "12.3 KB/s", "980 B/s", "1.50 MB/s".
std::string FormatBandwidth(double bytes_per_second);
// "100.0", or "-" when unknown.
std::string FormatHz(const std::optional<double>& hz);

}  // namespace monitor
}  // namespace cyber

#endif  // CYBER_MONITOR_SCREEN_H_
