#include "cyber/record/recording_writer.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "glog/logging.h"

namespace cyber {
namespace record {

absl::StatusOr<std::unique_ptr<RecordingWriter>> RecordingWriter::Open(
    RecordingWriterOptions options) {
  if (options.path.empty()) {
    return absl::InvalidArgumentError("recording: path is empty");
  }
  bool split = options.split_bytes > 0 || options.split_duration > absl::ZeroDuration();
  if (split && !absl::EndsWith(options.path, ".mcap")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "recording: path \"", options.path,
        "\" must end in .mcap when splitting (the parts are numbered before it)"));
  }
  if (options.split_duration < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "recording: split_duration ", absl::FormatDuration(options.split_duration),
        " is negative"));
  }
  std::unique_ptr<RecordingWriter> w(new RecordingWriter(std::move(options)));
  if (absl::Status s = w->OpenFile(); !s.ok()) return s;
  return w;
}

RecordingWriter::RecordingWriter(RecordingWriterOptions options) : options_(std::move(options)) {}

RecordingWriter::~RecordingWriter() {
  if (!closed_) {
    absl::Status s = Close();
    LOG_IF(ERROR, !s.ok()) << "RecordingWriter: " << s;
  }
}

std::string RecordingWriter::FilePath(int index) const {
  if (options_.split_bytes == 0 && options_.split_duration <= absl::ZeroDuration()) {
    return options_.path;
  }
  absl::string_view stem(options_.path);
  stem.remove_suffix(5);  // ".mcap"
  return absl::StrFormat("%s.%05d.mcap", stem, index);
}

absl::Status RecordingWriter::OpenFile() {
  std::string path = FilePath(static_cast<int>(files_.size()));
  absl::StatusOr<std::unique_ptr<McapWriter>> w = McapWriter::Open(path, options_.mcap);
  if (!w.ok()) return w.status();
  mcap_ = *std::move(w);
  files_.push_back(path);
  channel_ids_.clear();
  writer_ids_.clear();
  file_stats_.clear();
  have_first_log_time_ = false;
  if (!options_.recording_metadata.empty()) {
    absl::Status s = mcap_->WriteMetadata(kRecordingMetadata, options_.recording_metadata);
    if (!s.ok()) return s;
  }
  for (const auto& [name, info] : declared_) {
    absl::StatusOr<uint16_t> id = ChannelId(info);
    if (!id.ok()) return id.status();
  }
  return absl::OkStatus();
}

absl::StatusOr<uint16_t> RecordingWriter::ChannelId(const ChannelInfo& channel) {
  auto c = channel_ids_.find(channel.name);
  if (c != channel_ids_.end()) return c->second;
  absl::StatusOr<uint16_t> schema =
      mcap_->AddSchema(channel.type_name, "protobuf", channel.descriptor_set);
  if (!schema.ok()) return schema.status();
  absl::StatusOr<uint16_t> id = mcap_->AddChannel(channel.name, *schema, "protobuf", channel.metadata);
  if (!id.ok()) return id.status();
  channel_ids_.emplace(channel.name, *id);
  file_stats_[channel.name];
  totals_[channel.name];
  return *id;
}

absl::Status RecordingWriter::DeclareChannel(const ChannelInfo& channel) {
  if (closed_) {
    return absl::FailedPreconditionError(
        absl::StrCat("recording ", options_.path, ": DeclareChannel after Close"));
  }
  declared_[channel.name] = channel;
  return ChannelId(channel).status();
}

absl::Status RecordingWriter::CloseFile() {
  if (mcap_ == nullptr) return absl::OkStatus();
  absl::Status s = mcap_->WriteMetadata(kChannelStatsMetadata, EncodeChannelStats(file_stats_));
  absl::Status c = mcap_->Close();
  closed_bytes_ += mcap_->size();
  mcap_.reset();
  return s.ok() ? c : s;
}

absl::Status RecordingWriter::Write(const ChannelInfo& channel, const MessageOrigin& origin,
                                    uint64_t log_time, uint64_t publish_time,
                                    absl::string_view data) {
  if (closed_) {
    return absl::FailedPreconditionError(
        absl::StrCat("recording ", options_.path, ": Write after Close"));
  }
  bool by_size = options_.split_bytes > 0 && mcap_->size() >= options_.split_bytes;
  bool by_time = options_.split_duration > absl::ZeroDuration() && have_first_log_time_ &&
                 log_time >= file_first_log_time_ &&
                 absl::Nanoseconds(log_time - file_first_log_time_) >= options_.split_duration;
  if ((by_size || by_time) && mcap_->message_count() > 0) {
    if (absl::Status s = CloseFile(); !s.ok()) return s;
    if (absl::Status s = OpenFile(); !s.ok()) return s;
  }
  if (!have_first_log_time_) {
    have_first_log_time_ = true;
    file_first_log_time_ = log_time;
  }

  absl::StatusOr<uint16_t> channel_id = ChannelId(channel);
  if (!channel_id.ok()) return channel_id.status();
  ChannelRecordStats& file = file_stats_[channel.name];
  ChannelRecordStats& total = totals_[channel.name];

  uint32_t writer_id = 0;
  if (!origin.writer_guid.empty()) {
    auto w = writer_ids_.find(origin.writer_guid);
    if (w == writer_ids_.end()) {
      WriterRecord record;
      record.writer_id = next_writer_id_++;
      record.channel_id = *channel_id;
      record.process_label = origin.writer_label;
      record.guid = origin.writer_guid;
      if (absl::Status s = mcap_->WritePrivate(kWriterOpcode, EncodeWriterRecord(record));
          !s.ok()) {
        return s;
      }
      w = writer_ids_.emplace(origin.writer_guid, record.writer_id).first;
      ++file.writers;
    }
    writer_id = w->second;
    if (!sequence_gaps_.Seen(origin.writer_guid)) ++total.writers;
    const uint64_t gap = sequence_gaps_.Next(origin.writer_guid, origin.sequence);
    if (options_.count_sequence_gaps) {
      file.lost += gap;
      total.lost += gap;
    }
    if (absl::Status s = mcap_->WritePrivate(kOriginOpcode,
                                             EncodeOriginRecord({writer_id, origin.sequence}));
        !s.ok()) {
      return s;
    }
  }
  McapMessage m;
  m.channel_id = *channel_id;
  m.sequence = static_cast<uint32_t>(origin.sequence);
  m.log_time = log_time;
  m.publish_time = publish_time;
  m.data = data;
  if (absl::Status s = mcap_->Write(m); !s.ok()) return s;
  ++file.received;
  ++total.received;
  return absl::OkStatus();
}

void RecordingWriter::CountLost(const std::string& channel, uint64_t n) {
  file_stats_[channel].lost += n;
  totals_[channel].lost += n;
}

void RecordingWriter::CountDropped(const std::string& channel, uint64_t n) {
  file_stats_[channel].dropped += n;
  totals_[channel].dropped += n;
}

absl::Status RecordingWriter::Flush() {
  if (mcap_ == nullptr) return absl::OkStatus();
  return mcap_->Flush();
}

absl::Status RecordingWriter::Close() {
  if (closed_) return absl::OkStatus();
  closed_ = true;
  return CloseFile();
}

uint64_t RecordingWriter::bytes() const {
  return closed_bytes_ + (mcap_ != nullptr ? mcap_->size() : 0);
}

}  // namespace record
}  // namespace cyber
