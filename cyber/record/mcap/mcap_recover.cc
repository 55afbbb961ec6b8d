#include "cyber/record/mcap/mcap_recover.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "absl/strings/str_cat.h"
#include "cyber/record/mcap/mcap_reader.h"
#include "cyber/record/mcap/recording.h"

namespace cyber {
namespace record {
namespace {

// What recover counts itself when the file has no channel statistics (its
// recorder was killed before writing them): messages per channel and gaps
// in each writer's sequence numbers.
class StatsFromOrigins {
 public:
  void Writer(const std::string& channel) { ++stats_[channel].writers; }
  void Message(const std::string& channel, const std::optional<OriginRecord>& origin) {
    ++stats_[channel].received;
    if (origin.has_value()) {
      stats_[channel].lost += gaps_.Next(absl::StrCat(origin->writer_id), origin->sequence);
    }
  }
  const std::map<std::string, ChannelRecordStats>& stats() const { return stats_; }

 private:
  SequenceGaps gaps_;  // by writer id
  std::map<std::string, ChannelRecordStats> stats_;
};

}  // namespace

namespace {
absl::StatusOr<RecoverReport> Rewrite(const std::string& in, const std::string& out,
                                      const McapWriterOptions& options);
}  // namespace

absl::StatusOr<RecoverReport> McapRecover(const std::string& in, const std::string& out,
                                          const McapWriterOptions& options) {
  absl::StatusOr<RecoverReport> r = Rewrite(in, out, options);
  // A failed rewrite leaves no file that looks complete.
  if (!r.ok()) std::remove(out.c_str());
  return r;
}

namespace {

absl::StatusOr<RecoverReport> Rewrite(const std::string& in, const std::string& out,
                                      const McapWriterOptions& options) {
  absl::StatusOr<std::unique_ptr<McapReader>> reader = McapReader::Open(in);
  if (!reader.ok()) return reader.status();
  absl::StatusOr<std::unique_ptr<McapWriter>> writer = McapWriter::Open(out, options);
  if (!writer.ok()) return writer.status();

  RecoverReport report;
  std::map<uint16_t, uint16_t> schema_ids;   // in → out
  std::map<uint16_t, uint16_t> channel_ids;  // in → out
  std::map<uint16_t, std::string> topics;    // in id → topic
  std::optional<OriginRecord> origin;
  std::optional<std::map<std::string, ChannelRecordStats>> recorded_stats;
  StatsFromOrigins counted;
  absl::Status failure;
  auto fail = [&](const absl::Status& s) {
    failure = absl::Status(s.code(), absl::StrCat(in, " → ", out, ": ", s.message()));
    return false;
  };

  absl::StatusOr<McapScanEnd> end = (*reader)->ForEachRecord(
      [&](const McapRecordView& v) {
        switch (v.opcode) {
          case static_cast<uint8_t>(McapOp::kSchema): {
            absl::StatusOr<McapSchema> s = ParseMcapSchema(v.content);
            if (!s.ok()) return fail(s.status());
            if (schema_ids.count(s->id) > 0) return true;  // repeated in later chunks
            absl::StatusOr<uint16_t> id = (*writer)->AddSchema(s->name, s->encoding, s->data);
            if (!id.ok()) return fail(id.status());
            schema_ids[s->id] = *id;
            return true;
          }
          case static_cast<uint8_t>(McapOp::kChannel): {
            absl::StatusOr<McapChannel> c = ParseMcapChannel(v.content);
            if (!c.ok()) return fail(c.status());
            if (channel_ids.count(c->id) > 0) return true;
            uint16_t schema = 0;
            if (c->schema_id != 0) {
              auto s = schema_ids.find(c->schema_id);
              if (s == schema_ids.end()) {
                return fail(absl::DataLossError(absl::StrCat(
                    "channel \"", c->topic, "\" names schema_id ", c->schema_id,
                    ", which no Schema record before it defines")));
              }
              schema = s->second;
            }
            absl::StatusOr<uint16_t> id =
                (*writer)->AddChannel(c->topic, schema, c->message_encoding, c->metadata);
            if (!id.ok()) return fail(id.status());
            channel_ids[c->id] = *id;
            topics[c->id] = c->topic;
            ++report.channels;
            return true;
          }
          case kWriterOpcode: {
            absl::StatusOr<WriterRecord> w = DecodeWriterRecord(v.content);
            if (!w.ok()) return fail(w.status());
            auto c = channel_ids.find(w->channel_id);
            if (c == channel_ids.end()) {
              return fail(absl::DataLossError(absl::StrCat(
                  "writer ", w->writer_id, " (", w->process_label, ") names channel_id ",
                  w->channel_id, ", which no Channel record before it defines")));
            }
            counted.Writer(topics[w->channel_id]);
            w->channel_id = c->second;
            absl::Status s = (*writer)->WritePrivate(kWriterOpcode, EncodeWriterRecord(*w));
            return s.ok() ? true : fail(s);
          }
          case kOriginOpcode: {
            absl::StatusOr<OriginRecord> o = DecodeOriginRecord(v.content);
            if (!o.ok()) return fail(o.status());
            origin = *o;
            absl::Status s = (*writer)->WritePrivate(kOriginOpcode, v.content);
            return s.ok() ? true : fail(s);
          }
          case static_cast<uint8_t>(McapOp::kMessage): {
            McapMessage m;
            m.sequence = v.message->sequence;
            m.log_time = v.message->log_time;
            m.publish_time = v.message->publish_time;
            m.data = v.message->data;
            auto c = channel_ids.find(v.message->channel_id);
            if (c == channel_ids.end()) {
              return fail(absl::DataLossError(absl::StrCat(
                  "a Message at log_time ", m.log_time, " names channel_id ",
                  v.message->channel_id, ", which no Channel record before it defines")));
            }
            m.channel_id = c->second;
            counted.Message(topics[v.message->channel_id], origin);
            origin.reset();
            absl::Status s = (*writer)->Write(m);
            if (!s.ok()) return fail(s);
            ++report.messages;
            return true;
          }
          case static_cast<uint8_t>(McapOp::kMetadata): {
            absl::StatusOr<McapMetadata> m = ParseMcapMetadata(v.content);
            if (!m.ok()) return fail(m.status());
            if (m->name == kChannelStatsMetadata) {
              absl::StatusOr<std::map<std::string, ChannelRecordStats>> stats =
                  DecodeChannelStats(m->metadata);
              if (!stats.ok()) return fail(stats.status());
              recorded_stats = *std::move(stats);
              return true;  // written once, at the end
            }
            absl::Status s = (*writer)->WriteMetadata(m->name, m->metadata);
            return s.ok() ? true : fail(s);
          }
          default:
            if (v.opcode >= 0x80) {
              absl::Status s = (*writer)->WritePrivate(v.opcode, v.content);
              return s.ok() ? true : fail(s);
            }
            return true;  // index records are rebuilt by the writer
        }
      },
      /*damage_ends_scan=*/true);
  if (!failure.ok()) return failure;
  if (!end.ok()) return end.status();
  report.truncated = end->truncated;
  report.bytes_kept = end->valid_until;
  if (report.truncated.has_value()) {
    report.bytes_dropped =
        (*reader)->size() - std::min<uint64_t>((*reader)->size(), end->valid_until);
  }
  const std::map<std::string, ChannelRecordStats>& stats =
      recorded_stats.has_value() ? *recorded_stats : counted.stats();
  if (absl::Status s = (*writer)->WriteMetadata(kChannelStatsMetadata, EncodeChannelStats(stats));
      !s.ok()) {
    return s;
  }
  if (absl::Status s = (*writer)->Close(); !s.ok()) return s;
  return report;
}

}  // namespace

}  // namespace record
}  // namespace cyber
