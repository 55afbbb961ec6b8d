#include "cyber/monitor/screen.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace cyber {
namespace monitor {
namespace {

constexpr int kMinNameWidth = 8;

// `s` in exactly `width` columns: cut with '~', or padded.
std::string Fit(const std::string& s, int width, bool right = false) {
  if (width <= 0) return "";
  const size_t w = static_cast<size_t>(width);
  if (s.size() > w) return s.substr(0, w - 1) + "~";
  const std::string pad(w - s.size(), ' ');
  return right ? pad + s : s + pad;
}

std::string Cut(std::string s, int width) {
  if (width >= 0 && s.size() > static_cast<size_t>(width)) s.resize(static_cast<size_t>(width));
  return s;
}

std::string FormatLateness(absl::Duration d) {
  if (d < absl::Milliseconds(1)) return absl::StrFormat("%.0f us", absl::ToDoubleMicroseconds(d));
  if (d < absl::Seconds(1)) return absl::StrFormat("%.2f ms", absl::ToDoubleMilliseconds(d));
  return absl::StrFormat("%.2f s", absl::ToDoubleSeconds(d));
}

std::string FormatUptime(absl::Duration d) {
  const int64_t s = absl::ToInt64Seconds(d);
  if (s < 60) return absl::StrCat(s, "s");
  if (s < 3600) return absl::StrCat(s / 60, "m", s % 60, "s");
  return absl::StrCat(s / 3600, "h", (s % 3600) / 60, "m");
}

// The channel table's columns: name and type share what the fixed ones
// leave.
struct ChannelColumns {
  int name, type;
  static constexpr int kCount = 3, kHz = 8, kBandwidth = 11, kLost = 8;
  explicit ChannelColumns(int width) {
    const int fixed = 2 * kCount + 2 * kHz + kBandwidth + 2 * kLost + 9;  // + separators
    const int flex = std::max(2 * kMinNameWidth, width - fixed);
    name = std::max(kMinNameWidth, flex * 11 / 20);
    type = std::max(kMinNameWidth, flex - name);
  }
  std::string Header() const {
    return absl::StrCat(Fit("Channel", name), " ", Fit("Type", type), " ", Fit("W", kCount, true),
                        " ", Fit("R", kCount, true), " ", Fit("Hz", kHz, true), " ",
                        Fit("Rx Hz", kHz, true), " ", Fit("Bandwidth", kBandwidth, true), " ",
                        Fit("Lost", kLost, true), " ", Fit("Undecod", kLost, true));
  }
  std::string Row(const ChannelRow& r) const {
    const std::string type = r.type_conflict ? "!" + r.type_name : r.type_name;
    return absl::StrCat(
        Fit(r.name, name), " ", Fit(type, this->type), " ",
        Fit(absl::StrCat(r.writers), kCount, true), " ", Fit(absl::StrCat(r.readers), kCount, true),
        " ", Fit(FormatHz(r.hz), kHz, true), " ", Fit(FormatHz(r.received_hz), kHz, true), " ",
        Fit(r.bytes_per_second ? FormatBandwidth(*r.bytes_per_second) : "-", kBandwidth, true),
        " ", Fit(absl::StrCat(r.lost), kLost, true), " ",
        Fit(absl::StrCat(r.undecodable), kLost, true));
  }
};

std::string ProcessHeader() {
  return absl::StrCat("  ", Fit("Component / timer", 20), " ", Fit("Class", 14), " ",
                      Fit("Cfg Hz", 8, true), " ", Fit("Hz", 8, true), " ",
                      Fit("Late p99", 9, true), " ", Fit("Late max", 9, true), " ",
                      Fit("Overruns", 8, true), " ", Fit("Missed", 7, true), " ",
                      Fit("Procs", 9, true), " ", Fit("Failed", 6, true), " ",
                      Fit("Dropped", 7, true));
}

// The process view's lines, in the order Up/Down moves over them.
std::vector<std::string> ProcessLines(const std::vector<ProcessBlock>& blocks) {
  std::vector<std::string> lines;
  for (const ProcessBlock& b : blocks) {
    std::string head = b.label;
    if (b.has_status) {
      absl::StrAppend(&head, "  up ", FormatUptime(b.uptime));
    } else {
      absl::StrAppend(&head, "  (no status yet)");
    }
    absl::StrAppend(&head, "  nodes ", b.nodes, "  clock ", b.clock.empty() ? "?" : b.clock,
                    "  components ", b.components.size());
    lines.push_back(head);
    for (const ComponentRow& c : b.components) {
      lines.push_back(absl::StrCat(
          "  ", Fit(c.name, 20), " ", Fit(c.class_name, 14), " ",
          Fit(c.configured_hz > 0 ? absl::StrFormat("%.1f", c.configured_hz) : "-", 8, true), " ",
          Fit(c.timer ? absl::StrFormat("%.1f", c.achieved_hz) : "-", 8, true), " ",
          Fit(c.timer ? FormatLateness(c.lateness_p99) : "-", 9, true), " ",
          Fit(c.timer ? FormatLateness(c.lateness_max) : "-", 9, true), " ",
          Fit(absl::StrCat(c.overruns), 8, true), " ", Fit(absl::StrCat(c.missed_periods), 7, true),
          " ", Fit(absl::StrCat(c.procs), 9, true), " ", Fit(absl::StrCat(c.proc_failures), 6, true),
          " ", Fit(absl::StrCat(c.dropped), 7, true)));
      for (const TimerRow& t : c.timers) {
        lines.push_back(absl::StrCat(
            "    ", Fit("timer " + t.name, 18), " ", Fit(absl::StrCat("fires ", t.fires), 14), " ",
            Fit(absl::StrFormat("%.1f", t.configured_hz), 8, true), " ",
            Fit(FormatHz(t.achieved_hz), 8, true), " ", Fit("", 9), " ", Fit("", 9), " ",
            Fit(absl::StrCat(t.overruns), 8, true), " ",
            Fit(absl::StrCat(t.missed_periods), 7, true)));
      }
    }
  }
  return lines;
}

// `text` in lines of at most `width` columns, broken between words.
std::vector<std::string> Wrap(absl::string_view text, int width) {
  std::vector<std::string> lines;
  for (absl::string_view paragraph : absl::StrSplit(text, '\n')) {
    std::string line;
    for (absl::string_view word : absl::StrSplit(paragraph, ' ', absl::SkipEmpty())) {
      if (!line.empty() && line.size() + 1 + word.size() > static_cast<size_t>(width)) {
        lines.push_back(std::move(line));
        line.clear();
      }
      absl::StrAppend(&line, line.empty() ? "" : " ", word);
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

std::vector<std::string> EmptyLines(const MonitorSnapshot& s, const std::string& what,
                                    int width) {
  std::vector<std::string> lines = Wrap(absl::StrCat("No ", what, " found in ", s.domain, "."), width);
  for (std::string& l : Wrap(s.why_empty, width)) lines.push_back(std::move(l));
  return lines;
}

// Fills `frame` with the title, a header, `rows` scrolled to show
// `selected` (highlighted when `select`), and the keys line.
void Layout(Frame* frame, int width, int height, const std::string& title,
            const std::string& header, const std::vector<std::string>& rows, size_t selected,
            bool select, const std::string& keys) {
  frame->lines.clear();
  frame->highlight = -1;
  if (height <= 0) return;
  frame->lines.push_back(Cut(title, width));
  const int body = std::max(0, height - 3);
  if (height > 1) frame->lines.push_back(Cut(header, width));
  size_t first = 0;
  if (body > 0 && selected >= static_cast<size_t>(body)) first = selected - body + 1;
  for (int i = 0; i < body; ++i) {
    const size_t row = first + static_cast<size_t>(i);
    if (row < rows.size()) {
      frame->lines.push_back(Cut(rows[row], width));
      if (select && row == selected) frame->highlight = static_cast<int>(frame->lines.size()) - 1;
    } else {
      frame->lines.emplace_back();
    }
  }
  if (height > 2) frame->lines.push_back(Cut(keys, width));
  while (frame->lines.size() < static_cast<size_t>(height)) frame->lines.emplace_back();
}

}  // namespace

std::string FormatBandwidth(double b) {
  if (b < 1000) return absl::StrFormat("%.0f B/s", b);
  if (b < 1000 * 1000) return absl::StrFormat("%.1f KB/s", b / 1000);
  return absl::StrFormat("%.2f MB/s", b / (1000 * 1000));
}

std::string FormatHz(const std::optional<double>& hz) {
  return hz ? absl::StrFormat("%.1f", *hz) : "-";
}

std::vector<std::string> MessageLines(const MessagePanel& panel) {
  std::vector<std::string> lines;
  for (absl::string_view l : absl::StrSplit(panel.text, '\n', absl::SkipEmpty())) {
    lines.emplace_back(l);
  }
  return lines;
}

Frame Render(const MonitorSnapshot& s, const NavState& nav, int width, int height) {
  Frame frame;
  const std::string program = "cyber_monitor  " + s.domain;
  switch (nav.view) {
    case View::kChannels: {
      const ChannelColumns columns(width);
      std::vector<std::string> rows;
      for (const ChannelRow& r : s.channels) rows.push_back(columns.Row(r));
      const bool empty = rows.empty();
      if (empty) rows = EmptyLines(s, "channel", width);
      Layout(&frame, width, height,
             absl::StrCat(program, "  channels: ", s.channels.size(), "  processes: ",
                          s.processes.size()),
             columns.Header(), rows, nav.channel_row, !empty,
             "Up/Down select  Enter latest message  Tab processes  q quit");
      break;
    }
    case View::kProcesses: {
      std::vector<std::string> rows = ProcessLines(s.processes);
      const bool empty = rows.empty();
      if (empty) rows = EmptyLines(s, "process", width);
      Layout(&frame, width, height,
             absl::StrCat(program, "  processes: ", s.processes.size()), ProcessHeader(), rows,
             nav.process_line, !empty, "Up/Down select  Tab/Esc channels  q quit");
      break;
    }
    case View::kMessage: {
      std::string title = nav.open_channel;
      std::vector<std::string> rows;
      std::string header;
      if (s.message) {
        absl::StrAppend(&title, "  ", s.message->type_name);
        header = absl::StrCat("received ", s.message->received, "  rate ",
                              FormatHz(s.message->hz), " Hz (this monitor's subscription)");
        rows = MessageLines(*s.message);
      }
      absl::StrAppend(&title, "  (", program, ")");
      // The scroll puts the first shown line at the top.
      const int body = std::max(1, height - 3);
      const size_t last_shown = nav.message_scroll + static_cast<size_t>(body) - 1;
      Layout(&frame, width, height, title, header, rows, last_shown, false,
             "Up/Down scroll  Esc/Left back  q quit");
      break;
    }
  }
  return frame;
}

std::string BatchText(const MonitorSnapshot& s, int width) {
  std::string out = absl::StrCat("cyber_monitor  ", s.domain, "\n");
  if (s.channels.empty() && s.processes.empty()) {
    for (const std::string& l : EmptyLines(s, "process", width)) absl::StrAppend(&out, l, "\n");
    return out;
  }
  const ChannelColumns columns(width);
  absl::StrAppend(&out, "\n", columns.Header(), "\n");
  for (const ChannelRow& r : s.channels) absl::StrAppend(&out, columns.Row(r), "\n");
  absl::StrAppend(&out, "\n", ProcessHeader(), "\n");
  for (const std::string& l : ProcessLines(s.processes)) absl::StrAppend(&out, l, "\n");
  return out;
}

}  // namespace monitor
}  // namespace cyber
