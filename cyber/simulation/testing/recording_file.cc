#include "cyber/simulation/testing/recording_file.h"

#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cyber/record/mcap/recording.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/descriptor.pb.h"

namespace cyber {
namespace testing {

namespace {

// `file` and every file it imports, imports first.
void AddFile(const google::protobuf::FileDescriptor* file, std::set<std::string>* added,
             google::protobuf::FileDescriptorSet* set) {
  if (!added->insert(file->name()).second) return;
  for (int i = 0; i < file->dependency_count(); ++i) AddFile(file->dependency(i), added, set);
  file->CopyTo(set->add_file());
}

std::string DescriptorSet(const google::protobuf::Descriptor* type) {
  google::protobuf::FileDescriptorSet set;
  std::set<std::string> added;
  AddFile(type->file(), &added, &set);
  return set.SerializeAsString();
}

}  // namespace

absl::StatusOr<std::unique_ptr<RecordingFile>> RecordingFile::Create(const std::string& path) {
  record::McapWriterOptions options;
  options.library = "cyber RecordingFile (tests)";
  absl::StatusOr<std::unique_ptr<record::McapWriter>> mcap =
      record::McapWriter::Open(path, options);
  if (!mcap.ok()) return mcap.status();
  return std::unique_ptr<RecordingFile>(new RecordingFile(*std::move(mcap)));
}

absl::Status RecordingFile::Add(const std::string& channel,
                                const google::protobuf::Message& message, uint64_t log_time_ns,
                                const std::string& writer) {
  const google::protobuf::Descriptor* type = message.GetDescriptor();
  const std::string& type_name = type->full_name();
  auto c = channels_.find(channel);
  if (c == channels_.end()) {
    auto s = schemas_.find(type_name);
    if (s == schemas_.end()) {
      absl::StatusOr<uint16_t> id = mcap_->AddSchema(type_name, "protobuf", DescriptorSet(type));
      if (!id.ok()) return id.status();
      s = schemas_.emplace(type_name, *id).first;
    }
    absl::StatusOr<uint16_t> id =
        mcap_->AddChannel(channel, s->second, "protobuf", {{"transient_local", "false"}});
    if (!id.ok()) return id.status();
    c = channels_.emplace(channel, Channel{*id, type_name}).first;
  } else if (c->second.type_name != type_name) {
    return absl::FailedPreconditionError(absl::StrCat(
        "recording file: channel \"", channel, "\" carries ", c->second.type_name, ", not ",
        type_name));
  }
  auto w = writers_.find({writer, channel});
  if (w == writers_.end()) {
    const uint32_t id = static_cast<uint32_t>(writers_.size() + 1);
    record::WriterRecord record;
    record.writer_id = id;
    record.channel_id = c->second.id;
    record.process_label = writer;
    record.guid = absl::StrCat("test-guid-", id);
    absl::Status s = mcap_->WritePrivate(record::kWriterOpcode, record::EncodeWriterRecord(record));
    if (!s.ok()) return s;
    w = writers_.emplace(std::make_pair(writer, channel), Writer{id, 0}).first;
  }
  const uint64_t sequence = ++w->second.sequence;
  absl::Status s = mcap_->WritePrivate(
      record::kOriginOpcode, record::EncodeOriginRecord({w->second.id, sequence}));
  if (!s.ok()) return s;
  const std::string data = message.SerializeAsString();
  record::McapMessage m;
  m.channel_id = c->second.id;
  m.sequence = static_cast<uint32_t>(sequence);
  m.log_time = log_time_ns;
  m.publish_time = log_time_ns;
  m.data = data;
  return mcap_->Write(m);
}

}  // namespace testing
}  // namespace cyber
