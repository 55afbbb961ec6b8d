#include "cyber/record/mcap/recording.h"

#include <algorithm>
#include <tuple>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cyber/record/mcap/mcap_bytes.h"

namespace cyber {
namespace record {
namespace {

uint64_t* StatField(ChannelRecordStats* s, absl::string_view suffix) {
  if (suffix == "received") return &s->received;
  if (suffix == "lost") return &s->lost;
  if (suffix == "dropped") return &s->dropped;
  if (suffix == "writers") return &s->writers;
  return nullptr;
}

}  // namespace

uint64_t SequenceGaps::Next(const std::string& writer, uint64_t sequence) {
  auto [last, first] = last_.try_emplace(writer, sequence);
  if (first || sequence == 0) return 0;
  const uint64_t gap = sequence > last->second + 1 ? sequence - last->second - 1 : 0;
  last->second = std::max(last->second, sequence);
  return gap;
}

std::string EncodeWriterRecord(const WriterRecord& w) {
  std::string out;
  McapBytesOut b(&out);
  b.U32(w.writer_id);
  b.U16(w.channel_id);
  b.String(w.process_label);
  b.String(w.guid);
  return out;
}

absl::StatusOr<WriterRecord> DecodeWriterRecord(absl::string_view content) {
  McapBytesIn in(content);
  WriterRecord w;
  if (!in.U32(&w.writer_id) || !in.U16(&w.channel_id) || !in.String(&w.process_label) ||
      !in.String(&w.guid)) {
    return absl::DataLossError("Writer record (0x80): a field runs past the record's length");
  }
  return w;
}

std::string EncodeOriginRecord(const OriginRecord& o) {
  std::string out;
  McapBytesOut b(&out);
  b.U32(o.writer_id);
  b.U64(o.sequence);
  return out;
}

absl::StatusOr<OriginRecord> DecodeOriginRecord(absl::string_view content) {
  McapBytesIn in(content);
  OriginRecord o;
  if (!in.U32(&o.writer_id) || !in.U64(&o.sequence)) {
    return absl::DataLossError("Origin record (0x81): a field runs past the record's length");
  }
  return o;
}

std::map<std::string, std::string> EncodeChannelStats(
    const std::map<std::string, ChannelRecordStats>& stats) {
  std::map<std::string, std::string> out;
  for (const auto& [channel, s] : stats) {
    out[channel + "/received"] = absl::StrCat(s.received);
    out[channel + "/lost"] = absl::StrCat(s.lost);
    out[channel + "/dropped"] = absl::StrCat(s.dropped);
    out[channel + "/writers"] = absl::StrCat(s.writers);
  }
  return out;
}

absl::StatusOr<std::map<std::string, ChannelRecordStats>> DecodeChannelStats(
    const std::map<std::string, std::string>& metadata) {
  std::map<std::string, ChannelRecordStats> out;
  for (const auto& [key, value] : metadata) {
    size_t slash = key.rfind('/');
    uint64_t* field = nullptr;
    ChannelRecordStats probe;
    if (slash != std::string::npos && slash > 0) {
      field = StatField(&probe, absl::string_view(key).substr(slash + 1));
    }
    if (field == nullptr) {
      return absl::DataLossError(absl::StrCat(
          kChannelStatsMetadata, " metadata: key \"", key,
          "\" is not <channel>/received, /lost, /dropped or /writers"));
    }
    uint64_t v;
    if (!absl::SimpleAtoi(value, &v)) {
      return absl::DataLossError(absl::StrCat(kChannelStatsMetadata, " metadata: key \"", key,
                                              "\": value \"", value,
                                              "\" is not a non-negative integer"));
    }
    *StatField(&out[key.substr(0, slash)], absl::string_view(key).substr(slash + 1)) = v;
  }
  return out;
}

std::vector<FedMessage> Recording::Feed(const std::set<std::string>& channels) const {
  std::vector<FedMessage> feed;
  if (messages_.empty()) return feed;
  const uint64_t first = messages_.front().log_time;
  for (const RecordedMessage& m : messages_) {
    if (channels.count(m.channel) != 0) feed.push_back(FedMessage{m.log_time - first, &m});
  }
  return feed;
}

absl::StatusOr<Recording> Recording::Load(const std::string& path) {
  absl::StatusOr<std::unique_ptr<McapReader>> reader = McapReader::Open(path);
  if (!reader.ok()) return reader.status();
  return Read(**reader);
}

absl::StatusOr<Recording> Recording::LoadBytes(std::string bytes, const std::string& name) {
  absl::StatusOr<std::unique_ptr<McapReader>> reader =
      McapReader::FromBytes(std::move(bytes), name);
  if (!reader.ok()) return reader.status();
  return Read(**reader);
}

absl::StatusOr<Recording> Recording::Read(McapReader& mcap) {
  McapReader* reader = &mcap;
  const std::string& path = mcap.path();
  Recording r;
  absl::StatusOr<McapSummary> summary = reader->Summary();
  if (!summary.ok()) return summary.status();
  r.summary_ = *std::move(summary);

  std::map<uint16_t, McapSchema> schemas;
  std::map<uint16_t, McapChannel> channels;
  std::map<uint32_t, WriterRecord> writers;
  std::optional<OriginRecord> origin;
  absl::Status failure;
  auto fail = [&](const absl::Status& s) {
    failure = absl::DataLossError(absl::StrCat(path, ": ", s.message()));
    return false;
  };
  absl::StatusOr<McapScanEnd> end = reader->ForEachRecord([&](const McapRecordView& v) {
    switch (v.opcode) {
      case static_cast<uint8_t>(McapOp::kSchema): {
        absl::StatusOr<McapSchema> s = ParseMcapSchema(v.content);
        if (!s.ok()) return fail(s.status());
        schemas[s->id] = *std::move(s);
        return true;
      }
      case static_cast<uint8_t>(McapOp::kChannel): {
        absl::StatusOr<McapChannel> c = ParseMcapChannel(v.content);
        if (!c.ok()) return fail(c.status());
        channels[c->id] = *std::move(c);
        return true;
      }
      case static_cast<uint8_t>(McapOp::kMetadata): {
        absl::StatusOr<McapMetadata> m = ParseMcapMetadata(v.content);
        if (!m.ok()) return fail(m.status());
        if (m->name == kChannelStatsMetadata) {
          absl::StatusOr<std::map<std::string, ChannelRecordStats>> stats =
              DecodeChannelStats(m->metadata);
          if (!stats.ok()) return fail(stats.status());
          r.stats_ = *std::move(stats);
        }
        return true;
      }
      case kWriterOpcode: {
        absl::StatusOr<WriterRecord> w = DecodeWriterRecord(v.content);
        if (!w.ok()) return fail(w.status());
        writers[w->writer_id] = *std::move(w);
        return true;
      }
      case kOriginOpcode: {
        absl::StatusOr<OriginRecord> o = DecodeOriginRecord(v.content);
        if (!o.ok()) return fail(o.status());
        origin = *o;
        return true;
      }
      case static_cast<uint8_t>(McapOp::kMessage): {
        const McapRecordView::Message& m = *v.message;
        auto c = channels.find(m.channel_id);
        if (c == channels.end()) {
          return fail(absl::DataLossError(absl::StrCat(
              "a Message at log_time ", m.log_time, " names channel_id ", m.channel_id,
              ", which no Channel record before it defines")));
        }
        RecordedMessage out;
        out.channel = c->second.topic;
        auto s = schemas.find(c->second.schema_id);
        if (s != schemas.end()) out.type_name = s->second.name;
        out.log_time = m.log_time;
        out.publish_time = m.publish_time;
        out.sequence = m.sequence;
        if (origin.has_value()) {
          out.writer_id = origin->writer_id;
          out.sequence = origin->sequence;
          auto w = writers.find(origin->writer_id);
          if (w != writers.end()) {
            out.writer = w->second.process_label;
            out.writer_guid = w->second.guid;
          }
          origin.reset();
        }
        out.data.assign(m.data.data(), m.data.size());
        r.messages_.push_back(std::move(out));
        return true;
      }
      default:
        return true;
    }
  });
  if (!failure.ok()) return failure;
  if (!end.ok()) return end.status();
  r.truncated_ = end->truncated;

  for (const auto& [id, c] : channels) {
    RecordedChannel rc;
    rc.name = c.topic;
    rc.metadata = c.metadata;
    auto s = schemas.find(c.schema_id);
    if (s != schemas.end()) {
      rc.type_name = s->second.name;
      rc.descriptor_set = s->second.data;
    }
    auto tl = c.metadata.find("transient_local");
    rc.transient_local = tl != c.metadata.end() && tl->second == "true";
    r.channels_.push_back(std::move(rc));
  }
  std::stable_sort(r.messages_.begin(), r.messages_.end(),
                   [](const RecordedMessage& a, const RecordedMessage& b) {
                     return std::tie(a.log_time, a.channel, a.writer_id, a.sequence) <
                            std::tie(b.log_time, b.channel, b.writer_id, b.sequence);
                   });
  return r;
}

}  // namespace record
}  // namespace cyber
