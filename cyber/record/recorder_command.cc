#include "cyber/record/recorder_command.h"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cyber/common/steady_time.h"
#include "cyber/common/terminal_keys.h"
#include "cyber/record/mcap/mcap_reader.h"
#include "cyber/record/mcap/mcap_recover.h"
#include "cyber/record/mcap/recording.h"
#include "cyber/record/player.h"
#include "cyber/record/recorder.h"
#include "cyber/record/recording_writer.h"

namespace cyber {
namespace record {

const char kRecorderUsage[] =
    "usage: cyber_recorder <command> [flags]\n"
    "  record  -a | -c CHANNEL... [-k CHANNEL...] [-o FILE.mcap] [-i SECONDS] [-m MB]\n"
    "          [--compression zstd|lz4|none] [--duration SECONDS] [--queue_bytes N]\n"
    "          records the domain (CYBER_DOMAIN_ID) until Ctrl-C or --duration\n"
    "  play    -f FILE [-r RATE] [-b BEGIN] [-e END] [-s SECONDS] [-l] [-d SECONDS]\n"
    "          [-c CHANNEL...] [-k CHANNEL...] [--wait_for_readers SECONDS] [--no_keys]\n"
    "          keys in a terminal: space pause/resume, s one message, q quit\n"
    "  info    FILE\n"
    "  split   -f FILE -o OUT.mcap [-b BEGIN] [-e END] [-c CHANNEL...] [-k CHANNEL...]\n"
    "          [--compression zstd|lz4|none]\n"
    "  recover -f FILE -o OUT.mcap   (a file whose recorder was killed)\n"
    "BEGIN/END: seconds from the first message (12.5) or RFC 3339 (2026-11-28T10:00:00Z)\n";

namespace {

absl::Status Bad(const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("cyber_recorder: ", what));
}

absl::StatusOr<absl::Duration> Seconds(const std::string& flag, const std::string& text,
                                       bool allow_zero) {
  double s;
  if (!absl::SimpleAtod(text, &s) || !(s >= 0) || !std::isfinite(s) || (!allow_zero && s == 0)) {
    return Bad(absl::StrCat(flag, " \"", text, "\": not a number of seconds ",
                            allow_zero ? ">= 0" : "> 0"));
  }
  return absl::Seconds(s);
}

std::string Mib(uint64_t bytes) { return absl::StrFormat("%.1f MiB", bytes / 1048576.0); }

std::string TimeText(uint64_t ns) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::FromUnixNanos(static_cast<int64_t>(ns)),
                          absl::UTCTimeZone());
}

bool Selected(const RecorderArgs& a, const std::string& channel) {
  auto has = [](const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  };
  if (has(a.exclude, channel)) return false;
  return a.channels.empty() || has(a.channels, channel);
}

std::string StatusLine(const RecorderStats& s, absl::Duration elapsed) {
  uint64_t received = 0, lost = 0, dropped = 0;
  for (const auto& [c, st] : s.channels) {
    received += st.received;
    lost += st.lost;
    dropped += st.dropped;
  }
  return absl::StrFormat(
      "[%7.1f s] %d channels, %d messages, %s written, lost %d, dropped %d, queue %s%s",
      absl::ToDoubleSeconds(elapsed), s.channels.size(), received, Mib(s.bytes_written), lost,
      dropped, Mib(s.queued_bytes), dropped > 0 ? "  (the recorder cannot keep up)" : "");
}

void PrintChannelTable(const std::map<std::string, ChannelRecordStats>& stats, std::ostream& out) {
  size_t width = 8;
  for (const auto& [c, s] : stats) width = std::max(width, c.size());
  out << absl::StrFormat("  %-*s %10s %8s %8s %8s\n", width, "channel", "received", "lost",
                         "dropped", "writers");
  for (const auto& [c, s] : stats) {
    out << absl::StrFormat("  %-*s %10d %8d %8d %8d\n", width, c, s.received, s.lost, s.dropped,
                           s.writers);
  }
}

absl::Status Record(const RecorderArgs& a, graph::DomainGraph& graph, std::ostream& out,
                    const inspect::StopFn& stop) {
  RecorderOptions options;
  options.all = a.all;
  options.channels = a.channels;
  options.exclude = a.exclude;
  options.queue_bytes = a.queue_bytes;
  options.output.path = a.output.empty()
                            ? absl::FormatTime("%Y%m%d%H%M%S.mcap", absl::Now(), absl::LocalTimeZone())
                            : a.output;
  absl::StatusOr<McapCompression> compression = ParseMcapCompression(a.compression);
  if (!compression.ok()) return Bad(std::string(compression.status().message()));
  options.output.mcap.compression = *compression;
  options.output.split_bytes = a.split_bytes;
  options.output.split_duration = a.split_duration.value_or(absl::ZeroDuration());
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  options.output.recording_metadata = {
      {"domain", graph.DomainDescription()},
      {"host", host},
      {"started_at", absl::FormatTime(absl::RFC3339_full, absl::Now(), absl::UTCTimeZone())},
      {"command", absl::StrCat("cyber_recorder record", a.all ? " -a" : "",
                               a.channels.empty() ? "" : " -c ", absl::StrJoin(a.channels, " -c "),
                               a.exclude.empty() ? "" : " -k ", absl::StrJoin(a.exclude, " -k "))}};
  absl::StatusOr<std::unique_ptr<Recorder>> recorder = Recorder::Start(&graph, options);
  if (!recorder.ok()) return recorder.status();
  out << "recording " << graph.DomainDescription() << " into " << options.output.path
      << (options.output.split_bytes > 0 || options.output.split_duration > absl::ZeroDuration()
              ? " (split in numbered parts)"
              : "")
      << "; Ctrl-C stops" << std::endl;
  absl::Time start = SteadyNow();
  absl::Time next_status = start + absl::Seconds(1);
  std::string last_waiting;
  while (!stop()) {
    absl::Time now = SteadyNow();
    if (a.duration && now - start >= *a.duration) break;
    if (now >= next_status) {
      RecorderStats s = (*recorder)->Stats();
      if (!s.error.ok()) break;
      out << StatusLine(s, now - start) << std::endl;
      std::string waiting;
      for (const auto& [c, why] : s.waiting) absl::StrAppend(&waiting, "  waiting for ", c, ": ", why, "\n");
      if (waiting != last_waiting) out << waiting << std::flush;
      last_waiting = waiting;
      next_status += absl::Seconds(1);
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  absl::Status stopped = (*recorder)->Stop();
  RecorderStats s = (*recorder)->Stats();
  out << StatusLine(s, SteadyNow() - start) << std::endl;
  out << "recorded into " << absl::StrJoin(s.files, ", ") << ":\n";
  PrintChannelTable(s.channels, out);
  if (s.channels.empty()) {
    out << "  nothing was recorded: " << graph.WhyEmpty() << "\n";
    for (const auto& [c, why] : s.waiting) out << "  " << c << ": " << why << "\n";
  }
  return stopped;
}

absl::Status Play(const RecorderArgs& a, graph::DomainGraph& graph, std::ostream& out,
                  const inspect::StopFn& stop) {
  absl::StatusOr<Recording> recording = Recording::Load(a.file);
  if (!recording.ok()) return recording.status();
  if (recording->truncated()) {
    out << "warning: " << *recording->truncated()
        << " (playing the complete records; `cyber_recorder recover` rewrites the file)\n";
  }
  PlayerOptions options;
  options.rate = a.rate;
  options.start_offset = a.start_offset;
  options.loop = a.loop;
  options.delay = a.delay;
  options.channels = a.channels;
  options.exclude = a.exclude;
  options.wait_for_readers = a.wait_for_readers;
  uint64_t first = recording->messages().empty() ? 0 : recording->messages().front().log_time;
  if (a.begin) {
    absl::StatusOr<uint64_t> b = ParseRecordingTime("-b", *a.begin, first);
    if (!b.ok()) return b.status();
    options.begin_ns = *b;
  }
  if (a.end) {
    absl::StatusOr<uint64_t> e = ParseRecordingTime("-e", *a.end, first);
    if (!e.ok()) return e.status();
    options.end_ns = *e;
  }
  absl::StatusOr<std::unique_ptr<Player>> player = Player::Create(DomainPublishers(&graph), &*recording, options);
  if (!player.ok()) return player.status();
  absl::Status result;
  std::thread runner([&] { result = (*player)->Run(); });
  TerminalKeys keys;
  bool use_keys = a.keys && keys.active();
  out << "playing " << a.file << " (" << recording->messages().size() << " messages) into "
      << graph.DomainDescription() << " at " << a.rate << "x"
      << (use_keys ? "; space: pause/resume, s: one message, q: quit" : "") << std::endl;
  absl::Time next_status = SteadyNow() + absl::Seconds(1);
  while (true) {
    PlayerProgress p = (*player)->Progress();
    if (p.done) break;
    if (stop()) {
      (*player)->Stop();
      break;
    }
    char key = use_keys ? keys.Read(absl::Milliseconds(50)) : 0;
    if (!use_keys) absl::SleepFor(absl::Milliseconds(50));
    if (key == ' ') (*player)->TogglePause();
    if (key == 's') (*player)->Step();
    if (key == 'q') {
      (*player)->Stop();
      break;
    }
    if (SteadyNow() >= next_status || key != 0) {
      p = (*player)->Progress();
      out << absl::StrFormat("%s[%s] pass %d: %d/%d messages, %.1f/%.1f s", use_keys ? "\r" : "",
                             p.paused ? "paused " : "playing", p.pass, p.published, p.total,
                             p.position_ns / 1e9, p.duration_ns / 1e9)
          << (use_keys ? "" : "\n") << std::flush;
      next_status = SteadyNow() + absl::Seconds(1);
    }
  }
  runner.join();
  PlayerProgress p = (*player)->Progress();
  out << (use_keys ? "\n" : "") << "played " << p.published << " of " << p.total
      << " messages" << (p.pass > 1 ? absl::StrCat(" in pass ", p.pass) : "") << std::endl;
  for (const std::string& c : p.unread_channels) {
    out << "  no reader matched " << c << " when playing began\n";
  }
  return result;
}

absl::Status Info(const RecorderArgs& a, std::ostream& out) {
  absl::StatusOr<std::unique_ptr<McapReader>> reader = McapReader::Open(a.file);
  if (!reader.ok()) return reader.status();
  absl::StatusOr<McapSummary> summary = (*reader)->Summary();
  if (!summary.ok()) return summary.status();
  std::optional<std::string> truncated;
  std::map<uint16_t, std::set<std::string>> writers;  // channel id → labels
  std::map<uint32_t, WriterRecord> writer_records;
  absl::StatusOr<McapScanEnd> end = (*reader)->ForEachRecord([&](const McapRecordView& v) {
    if (v.opcode == kWriterOpcode) {
      absl::StatusOr<WriterRecord> w = DecodeWriterRecord(v.content);
      if (w.ok()) writers[w->channel_id].insert(w->process_label);
    }
    return true;
  });
  if (!end.ok()) return end.status();
  truncated = end->truncated;
  const McapStatistics& st = summary->statistics;
  out << "file:      " << a.file << " (" << Mib((*reader)->size()) << ")\n";
  out << "state:     "
      << (truncated ? absl::StrCat("cut short: ", *truncated,
                                   "; `cyber_recorder recover -f FILE -o OUT.mcap` rewrites it")
                    : "complete (summary and indexes)")
      << "\n";
  out << "library:   " << summary->library << "\n";
  double span = st.message_count == 0 ? 0 : (st.message_end_time - st.message_start_time) / 1e9;
  if (st.message_count > 0) {
    out << "recorded:  " << TimeText(st.message_start_time) << " .. "
        << TimeText(st.message_end_time) << absl::StrFormat(" (%.3f s)", span) << "\n";
  }
  std::set<std::string> compressions;
  for (const McapChunkInfo& c : summary->chunks) {
    compressions.insert(c.compression.empty() ? "none" : c.compression);
  }
  out << "messages:  " << st.message_count << " in " << summary->chunks.size() << " chunks ("
      << (compressions.empty() ? "none" : absl::StrJoin(compressions, ", ")) << ")\n";
  std::map<std::string, ChannelRecordStats> stats;
  for (const McapMetadata& m : summary->metadata) {
    if (m.name == kRecordingMetadata) {
      for (const auto& [k, v] : m.metadata) out << absl::StrFormat("%-10s %s\n", k + ":", v);
    }
    if (m.name == kChannelStatsMetadata) {
      absl::StatusOr<std::map<std::string, ChannelRecordStats>> s = DecodeChannelStats(m.metadata);
      if (!s.ok()) return absl::Status(s.status().code(), absl::StrCat(a.file, ": ", s.status().message()));
      stats = *s;
    }
  }
  out << "channels:\n";
  size_t width = 8;
  for (const auto& [id, c] : summary->channels) width = std::max(width, c.topic.size());
  out << absl::StrFormat("  %-*s %-32s %9s %9s %8s %8s %8s  %s\n", width, "channel", "type",
                         "messages", "rate", "lost", "dropped", "writers", "qos");
  for (const auto& [id, c] : summary->channels) {
    auto count_it = st.channel_message_counts.find(id);
    uint64_t count = count_it == st.channel_message_counts.end() ? 0 : count_it->second;
    auto schema = summary->schemas.find(c.schema_id);
    auto s = stats.find(c.topic);
    std::string lost = s == stats.end() ? "?" : absl::StrCat(s->second.lost);
    std::string dropped = s == stats.end() ? "?" : absl::StrCat(s->second.dropped);
    auto qos = c.metadata.find("qos");
    out << absl::StrFormat("  %-*s %-32s %9d %7.1fHz %8s %8s %8d  %s\n", width, c.topic,
                           schema == summary->schemas.end() ? "?" : schema->second.name, count,
                           span > 0 ? count / span : 0.0, lost, dropped, writers[id].size(),
                           qos == c.metadata.end() ? "" : qos->second);
    if (!writers[id].empty()) {
      out << "  " << std::string(width, ' ') << " from " << absl::StrJoin(writers[id], ", ")
          << "\n";
    }
  }
  for (const auto& [channel_name, s] : stats) {
    const std::string& name = channel_name;
    bool in_file = std::any_of(summary->channels.begin(), summary->channels.end(),
                               [&name](const auto& c) { return c.second.topic == name; });
    if (in_file) continue;
    out << absl::StrFormat("  %-*s %-32s %9d %7.1fHz %8d %8d %8d\n", width, name, "?", 0, 0.0,
                           s.lost, s.dropped, s.writers);
  }
  if (stats.empty()) {
    out << "(no channel statistics: the recorder did not close the file; lost and dropped are "
           "unknown until `cyber_recorder recover` counts them)\n";
  }
  return absl::OkStatus();
}

absl::Status Split(const RecorderArgs& a, std::ostream& out) {
  absl::StatusOr<Recording> recording = Recording::Load(a.file);
  if (!recording.ok()) return recording.status();
  uint64_t first = recording->messages().empty() ? 0 : recording->messages().front().log_time;
  uint64_t begin = 0, end = UINT64_MAX;
  if (a.begin) {
    absl::StatusOr<uint64_t> b = ParseRecordingTime("-b", *a.begin, first);
    if (!b.ok()) return b.status();
    begin = *b;
  }
  if (a.end) {
    absl::StatusOr<uint64_t> e = ParseRecordingTime("-e", *a.end, first);
    if (!e.ok()) return e.status();
    end = *e;
  }
  std::map<std::string, ChannelInfo> infos;
  for (const RecordedChannel& c : recording->channels()) {
    infos[c.name] = ChannelInfo{c.name, c.type_name, c.descriptor_set, c.metadata};
  }
  for (const std::string& c : a.channels) {
    if (infos.count(c) == 0) return Bad(absl::StrCat("split: -c \"", c, "\" is not in ", a.file));
  }
  RecordingWriterOptions options;
  options.path = a.output;
  absl::StatusOr<McapCompression> compression = ParseMcapCompression(a.compression);
  if (!compression.ok()) return Bad(std::string(compression.status().message()));
  options.mcap.compression = *compression;
  for (const McapMetadata& m : recording->summary().metadata) {
    if (m.name == kRecordingMetadata) options.recording_metadata = m.metadata;
  }
  options.recording_metadata["split_from"] = a.file;
  absl::StatusOr<std::unique_ptr<RecordingWriter>> writer = RecordingWriter::Open(options);
  if (!writer.ok()) return writer.status();
  uint64_t n = 0;
  for (const RecordedMessage& m : recording->messages()) {
    if (m.log_time < begin || m.log_time > end || !Selected(a, m.channel)) continue;
    MessageOrigin origin{m.writer, m.writer_guid, m.sequence};
    if (absl::Status s = (*writer)->Write(infos[m.channel], origin, m.log_time, m.publish_time, m.data);
        !s.ok()) {
      return s;
    }
    ++n;
  }
  if (absl::Status s = (*writer)->Close(); !s.ok()) return s;
  out << "wrote " << n << " of " << recording->messages().size() << " messages into "
      << a.output << "\n";
  PrintChannelTable((*writer)->totals(), out);
  return absl::OkStatus();
}

absl::Status Recover(const RecorderArgs& a, std::ostream& out) {
  absl::StatusOr<RecoverReport> r = McapRecover(a.file, a.output, McapWriterOptions());
  if (!r.ok()) return r.status();
  out << "recovered " << r->messages << " messages on " << r->channels << " channels from "
      << a.file << " into " << a.output << "\n";
  out << "kept " << r->bytes_kept << " bytes, dropped " << r->bytes_dropped << "\n";
  if (r->truncated) out << "the input ended: " << *r->truncated << "\n";
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<uint64_t> ParseRecordingTime(const std::string& flag, const std::string& text,
                                            uint64_t first_ns) {
  double seconds;
  if (absl::SimpleAtod(text, &seconds)) {
    if (!(seconds >= 0) || !std::isfinite(seconds) || seconds > 1e9) {
      return Bad(absl::StrCat(flag, " \"", text,
                              "\": not a number of seconds from the first message (0 to 1e9)"));
    }
    return first_ns + static_cast<uint64_t>(seconds * 1e9);
  }
  absl::Time t;
  std::string err;
  if (!absl::ParseTime(absl::RFC3339_full, text, &t, &err)) {
    return Bad(absl::StrCat(flag, " \"", text,
                            "\": neither seconds from the first message nor an RFC 3339 time (",
                            err, ")"));
  }
  int64_t ns = absl::ToUnixNanos(t);
  if (ns < 0) return Bad(absl::StrCat(flag, " \"", text, "\": before 1970"));
  return static_cast<uint64_t>(ns);
}

absl::StatusOr<RecorderArgs> ParseRecorderArgs(const std::vector<std::string>& args) {
  if (args.empty()) return Bad("no command (record, play, info, split, recover)");
  RecorderArgs a;
  a.command = args[0];
  static const std::set<std::string> kCommands = {"record", "play", "info", "split", "recover"};
  if (kCommands.count(a.command) == 0) {
    return Bad(absl::StrCat("unknown command \"", a.command,
                            "\" (record, play, info, split, recover)"));
  }
  static const std::map<std::string, std::set<std::string>> kFlags = {
      {"record",
       {"-a", "-c", "-k", "-o", "-i", "-m", "--compression", "--duration", "--queue_bytes"}},
      {"play",
       {"-f", "-r", "-b", "-e", "-s", "-l", "-d", "-c", "-k", "--wait_for_readers", "--no_keys"}},
      {"info", {"-f"}},
      {"split", {"-f", "-o", "-b", "-e", "-c", "-k", "--compression"}},
      {"recover", {"-f", "-o"}}};
  static const std::set<std::string> kSwitches = {"-a", "-l", "--no_keys"};
  const std::set<std::string>& allowed = kFlags.at(a.command);
  std::vector<std::string> operands;
  for (size_t i = 1; i < args.size(); ++i) {
    std::string flag = args[i];
    std::string value;
    bool has_value = false;
    if (flag.rfind("--", 0) == 0 && flag.find('=') != std::string::npos) {
      value = flag.substr(flag.find('=') + 1);
      flag = flag.substr(0, flag.find('='));
      has_value = true;
    }
    if (flag.empty() || flag[0] != '-') {
      operands.push_back(flag);
      continue;
    }
    if (allowed.count(flag) == 0) {
      return Bad(absl::StrCat(a.command, ": unknown flag ", flag, " (it takes ",
                              absl::StrJoin(allowed, " "), ")"));
    }
    if (kSwitches.count(flag) == 0 && !has_value) {
      if (i + 1 >= args.size()) return Bad(absl::StrCat(a.command, ": ", flag, " needs a value"));
      value = args[++i];
    }
    if (flag == "-a") a.all = true;
    if (flag == "-l") a.loop = true;
    if (flag == "--no_keys") a.keys = false;
    if (flag == "-c") {
      for (absl::string_view c : absl::StrSplit(value, ',', absl::SkipEmpty())) a.channels.emplace_back(c);
    }
    if (flag == "-k") {
      for (absl::string_view c : absl::StrSplit(value, ',', absl::SkipEmpty())) a.exclude.emplace_back(c);
    }
    if (flag == "-f") a.file = value;
    if (flag == "-o") a.output = value;
    if (flag == "-b") a.begin = value;
    if (flag == "-e") a.end = value;
    if (flag == "--compression") a.compression = value;
    if (flag == "-i") {
      absl::StatusOr<absl::Duration> d = Seconds("-i", value, false);
      if (!d.ok()) return d.status();
      a.split_duration = *d;
    }
    if (flag == "-m") {
      uint64_t mb;
      if (!absl::SimpleAtoi(value, &mb) || mb == 0) {
        return Bad(absl::StrCat("-m \"", value, "\": not a whole number of MiB > 0"));
      }
      a.split_bytes = mb << 20;
    }
    if (flag == "--queue_bytes") {
      if (!absl::SimpleAtoi(value, &a.queue_bytes) || a.queue_bytes == 0) {
        return Bad(absl::StrCat("--queue_bytes \"", value, "\": not a whole number of bytes > 0"));
      }
    }
    if (flag == "--duration") {
      absl::StatusOr<absl::Duration> d = Seconds("--duration", value, false);
      if (!d.ok()) return d.status();
      a.duration = *d;
    }
    if (flag == "-r") {
      if (!absl::SimpleAtod(value, &a.rate) || !(a.rate > 0) || !std::isfinite(a.rate)) {
        return Bad(absl::StrCat("-r \"", value, "\": not a rate > 0"));
      }
    }
    if (flag == "-s") {
      absl::StatusOr<absl::Duration> d = Seconds("-s", value, true);
      if (!d.ok()) return d.status();
      a.start_offset = *d;
    }
    if (flag == "-d") {
      absl::StatusOr<absl::Duration> d = Seconds("-d", value, true);
      if (!d.ok()) return d.status();
      a.delay = *d;
    }
    if (flag == "--wait_for_readers") {
      absl::StatusOr<absl::Duration> d = Seconds("--wait_for_readers", value, true);
      if (!d.ok()) return d.status();
      a.wait_for_readers = *d;
    }
  }
  if (a.command == "info" && a.file.empty() && operands.size() == 1) {
    a.file = operands[0];
    operands.clear();
  }
  if (!operands.empty()) {
    return Bad(absl::StrCat(a.command, ": unexpected operand \"", operands[0], "\""));
  }
  if (a.command == "record" && !a.all && a.channels.empty()) {
    return Bad("record: nothing selected: -a (all channels) or -c CHANNEL");
  }
  if (a.command != "record" && a.file.empty()) {
    return Bad(absl::StrCat(a.command, ": which file? (-f FILE)"));
  }
  if ((a.command == "split" || a.command == "recover") && a.output.empty()) {
    return Bad(absl::StrCat(a.command, ": where to? (-o OUT.mcap)"));
  }
  if ((a.command == "split" || a.command == "recover") && a.output == a.file) {
    return Bad(absl::StrCat(a.command, ": -o \"", a.output, "\" is the input file"));
  }
  return a;
}

bool NeedsDomain(const RecorderArgs& args) {
  return args.command == "record" || args.command == "play";
}

absl::Status RunOnDomain(const RecorderArgs& args, graph::DomainGraph& graph, std::ostream& out,
                         const inspect::StopFn& stop) {
  if (args.command == "record") return Record(args, graph, out, stop);
  return Play(args, graph, out, stop);
}

absl::Status RunOnFiles(const RecorderArgs& args, std::ostream& out) {
  if (!args.output.empty()) {
    // The same file under another spelling (./a.mcap, a link): writing it
    // would truncate what is being read.
    struct stat in_stat, out_stat;
    if (stat(args.file.c_str(), &in_stat) == 0 && stat(args.output.c_str(), &out_stat) == 0 &&
        in_stat.st_dev == out_stat.st_dev && in_stat.st_ino == out_stat.st_ino) {
      return Bad(absl::StrCat(args.command, ": -o \"", args.output, "\" is the input file \"",
                              args.file, "\""));
    }
  }
  if (args.command == "info") return Info(args, out);
  if (args.command == "split") return Split(args, out);
  return Recover(args, out);
}

}  // namespace record
}  // namespace cyber
