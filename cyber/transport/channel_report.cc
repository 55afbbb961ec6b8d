#include "cyber/transport/channel_report.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace cyber {
namespace {

std::string Peers(const std::vector<RemotePeer>& peers) {
  if (peers.empty()) return "-";
  std::vector<std::string> names;
  for (const RemotePeer& p : peers) {
    names.push_back(absl::StrCat(p.process, "@", p.host, ":", p.pid));
  }
  return absl::StrJoin(names, ",");
}

std::string LatencyMs(int64_t ns) {
  return ns < 0 ? "-" : absl::StrFormat("%.2f", static_cast<double>(ns) / 1e6);
}

}  // namespace

std::string ChannelTable(const std::vector<ChannelTopology>& local,
                         const std::vector<RemoteChannelStats>& remote) {
  std::map<std::string, const ChannelTopology*> here;
  for (const ChannelTopology& t : local) here[t.channel] = &t;
  std::map<std::string, const RemoteChannelStats*> there;
  for (const RemoteChannelStats& r : remote) there[r.channel] = &r;
  std::map<std::string, bool> names;
  for (const auto& e : here) names[e.first] = true;
  for (const auto& e : there) names[e.first] = true;
  if (names.empty()) return "";
  constexpr char kRow[] = "%-24s %-30s %9s %-30s %-30s %9s %9s %8s %7s\n";
  std::string out = absl::StrFormat(kRow, "channel", "type", "local w/r", "remote writers",
                                    "remote readers", "sent", "received", "dropped", "p99 ms");
  for (const auto& entry : names) {
    const std::string& name = entry.first;
    const auto h = here.find(name);
    const auto r = there.find(name);
    const ChannelTopology* t = h == here.end() ? nullptr : h->second;
    const RemoteChannelStats* s = r == there.end() ? nullptr : r->second;
    const std::string type = s != nullptr ? s->type_name : t->type_name;
    const std::string local_wr =
        t == nullptr ? "-" : absl::StrCat(t->writers.size(), "/", t->readers.size());
    if (s == nullptr) {
      absl::StrAppend(&out, absl::StrFormat(kRow, name, type, local_wr, "(in-process)", "-", "-",
                                            "-", "-", "-"));
      continue;
    }
    absl::StrAppend(
        &out, absl::StrFormat(kRow, name, type, local_wr, Peers(s->remote_writers),
                              Peers(s->remote_readers), absl::StrCat(s->sent),
                              absl::StrCat(s->received),
                              absl::StrCat(s->dropped_undecodable + s->lost + s->send_failures),
                              LatencyMs(s->latency_p99_ns)));
    for (const std::string& conflict : s->type_conflicts) {
      absl::StrAppend(&out, "  type conflict on ", name, ": ", conflict, "\n");
    }
    if (s->type_conflicts_ended > 0) {
      absl::StrAppend(&out, "  ", s->type_conflicts_ended, " type conflict",
                      s->type_conflicts_ended == 1 ? "" : "s", " on ", name, " ended\n");
    }
  }
  return out;
}

std::string ChannelStatusLine(const std::vector<RemoteChannelStats>& remote) {
  std::vector<std::string> parts;
  for (const RemoteChannelStats& s : remote) {
    std::string part = s.channel;
    if (!s.remote_readers.empty()) absl::StrAppend(&part, " →", s.remote_readers.size());
    if (!s.remote_writers.empty()) absl::StrAppend(&part, " ←", s.remote_writers.size());
    if (s.sent > 0) absl::StrAppend(&part, " ↑", s.sent);
    if (s.received > 0) absl::StrAppend(&part, " ↓", s.received);
    const uint64_t dropped = s.dropped_undecodable + s.lost + s.send_failures;
    if (dropped > 0) absl::StrAppend(&part, " drop ", dropped);
    if (s.latency_p99_ns >= 0) absl::StrAppend(&part, " p99 ", LatencyMs(s.latency_p99_ns), " ms");
    if (!s.type_conflicts.empty()) absl::StrAppend(&part, " TYPE CONFLICT");
    parts.push_back(std::move(part));
  }
  return absl::StrJoin(parts, " | ");
}

std::string LostPeersLine(const std::vector<RemotePeer>& lost) {
  if (lost.empty()) return "";
  return absl::StrCat("peers lost: ", Peers(lost));
}

}  // namespace cyber
