#include "cyber/monitor/navigator.h"

#include <algorithm>

namespace cyber {
namespace monitor {

size_t Navigator::Move(size_t at, Key key, size_t count, size_t page) {
  if (count == 0) return 0;
  const size_t last = count - 1;
  page = std::max<size_t>(page, 1);
  switch (key) {
    case Key::kUp: return at == 0 ? 0 : std::min(at, last + 1) - 1;
    case Key::kDown: return std::min(at + 1, last);
    case Key::kPageUp: return at > page ? std::min(at, last) - page : 0;
    case Key::kPageDown: return std::min(at + page, last);
    case Key::kHome: return 0;
    case Key::kEnd: return last;
    default: return std::min(at, last);
  }
}

void Navigator::Follow(const NavExtent& extent) {
  const std::vector<std::string>& names = extent.channels;
  auto it = std::find(names.begin(), names.end(), state_.channel_name);
  if (!state_.channel_name.empty() && it != names.end()) {
    state_.channel_row = static_cast<size_t>(it - names.begin());
  } else {
    state_.channel_row = names.empty() ? 0 : std::min(state_.channel_row, names.size() - 1);
  }
  state_.channel_name = names.empty() ? "" : names[state_.channel_row];
  state_.process_line =
      extent.process_lines == 0 ? 0 : std::min(state_.process_line, extent.process_lines - 1);
  const size_t max_scroll = extent.message_lines == 0 ? 0 : extent.message_lines - 1;
  state_.message_scroll = std::min(state_.message_scroll, max_scroll);
}

Action Navigator::OnKey(Key key, const NavExtent& extent) {
  Follow(extent);
  if (key == Key::kQuit) return Action::kQuit;
  switch (state_.view) {
    case View::kChannels:
      switch (key) {
        case Key::kTab:
          state_.view = View::kProcesses;
          return Action::kNone;
        case Key::kEnter:
        case Key::kRight:
          if (extent.channels.empty()) return Action::kNone;
          state_.view = View::kMessage;
          state_.open_channel = state_.channel_name;
          state_.message_scroll = 0;
          return Action::kOpenChannel;
        default:
          state_.channel_row =
              Move(state_.channel_row, key, extent.channels.size(), extent.page);
          state_.channel_name =
              extent.channels.empty() ? "" : extent.channels[state_.channel_row];
          return Action::kNone;
      }
    case View::kProcesses:
      switch (key) {
        case Key::kTab:
        case Key::kEscape:
        case Key::kLeft:
          state_.view = View::kChannels;
          return Action::kNone;
        default:
          state_.process_line =
              Move(state_.process_line, key, extent.process_lines, extent.page);
          return Action::kNone;
      }
    case View::kMessage:
      switch (key) {
        case Key::kEscape:
        case Key::kLeft:
          state_.view = View::kChannels;
          state_.open_channel.clear();
          state_.message_scroll = 0;
          return Action::kCloseChannel;
        default:
          state_.message_scroll =
              Move(state_.message_scroll, key, extent.message_lines, extent.page);
          return Action::kNone;
      }
  }
  return Action::kNone;
}

}  // namespace monitor
}  // namespace cyber
