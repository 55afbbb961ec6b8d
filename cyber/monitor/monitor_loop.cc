#include "cyber/monitor/monitor_loop.h"

#include <algorithm>

#include "cyber/monitor/key_decoder.h"
#include "cyber/monitor/navigator.h"
#include "cyber/monitor/screen.h"

namespace cyber {
namespace monitor {
namespace {

// How long a lone ESC waits for the rest of an escape sequence: the bytes
// of one key arrive together, so this only delays the Esc key itself.
constexpr absl::Duration kEscapeWait = absl::Milliseconds(50);

NavExtent ExtentOf(const MonitorSnapshot& s, int height) {
  NavExtent e;
  for (const ChannelRow& r : s.channels) e.channels.push_back(r.name);
  e.process_lines = ProcessLineCount(s.processes);
  if (s.message) e.message_lines = MessageLines(*s.message).size();
  e.page = static_cast<size_t>(std::max(1, height - 3));
  return e;
}

}  // namespace

int RunInteractive(graph::DomainGraph& graph, Terminal& terminal, const MonitorOptions& options) {
  MonitorFeed feed(graph, options);
  KeyDecoder decoder;
  Navigator nav;
  absl::Time next_sample = absl::Now();
  while (true) {
    const absl::Time now = absl::Now();
    if (now >= next_sample) {
      feed.Sample(now);
      next_sample = now + options.refresh;
    }
    const Terminal::Size size = terminal.size();
    MonitorSnapshot snapshot = feed.Snapshot(nav.state());
    nav.Follow(ExtentOf(snapshot, size.height));
    terminal.Draw(Render(snapshot, nav.state(), size.width, size.height));

    const absl::Duration wait =
        decoder.pending() ? kEscapeWait : std::max(absl::ZeroDuration(), next_sample - absl::Now());
    Terminal::Input input = terminal.ReadInput(wait);
    if (input.stop_signal) return 128 + *input.stop_signal;
    std::vector<Key> keys = decoder.Feed(input.bytes);
    if (input.bytes.empty() && decoder.pending()) keys = decoder.Flush();
    for (Key key : keys) {
      const Action action = nav.OnKey(key, ExtentOf(snapshot, size.height));
      switch (action) {
        case Action::kQuit:
          return 0;
        case Action::kOpenChannel:
          // A failure shows in the message view (the panel says why).
          (void)feed.OpenMessage(nav.state().open_channel);
          break;
        case Action::kCloseChannel:
          feed.CloseMessage();
          break;
        case Action::kNone:
          break;
      }
      snapshot = feed.Snapshot(nav.state());
    }
  }
}

std::string RunOnce(graph::DomainGraph& graph, const MonitorOptions& options,
                    absl::Duration window, int width, bool* empty) {
  MonitorFeed feed(graph, options);
  graph.WaitForDiscovery();
  const absl::Time deadline = absl::Now() + window;
  // Two samples at least, one refresh apart, for the bandwidth meters.
  feed.Sample(absl::Now());
  do {
    absl::SleepFor(std::min(options.refresh, std::max(absl::ZeroDuration(), deadline - absl::Now())));
    feed.Sample(absl::Now());
  } while (!feed.RatesKnown() && absl::Now() < deadline);
  const MonitorSnapshot snapshot = feed.Snapshot(NavState());
  *empty = snapshot.processes.empty();
  return BatchText(snapshot, width);
}

}  // namespace monitor
}  // namespace cyber
