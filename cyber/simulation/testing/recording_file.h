// RecordingFile: writes a small recording in the cyber conventions
// (cyber/record/mcap/recording.h) from protobuf messages, for tests of
// replay and for generators of test recordings, so that neither needs a
// committed binary file nor a running recorder.
//
//   auto file = RecordingFile::Create(path);
//   ASSERT_TRUE(file.ok());
//   ASSERT_TRUE((*file)->Add("/sensor/imu", reading, /*log_time_ns=*/t).ok());
//   ASSERT_TRUE((*file)->Close().ok());
//
// What it writes, as the recorder does: a Schema per message type (its
// full name, encoding "protobuf", the FileDescriptorSet of its file and
// every import), a Channel per channel (encoding "protobuf",
// "transient_local": "false"), a Writer record per (writer, channel) before
// its first message, an Origin record before each message (the writer's
// sequence, 1, 2, ... per writer and channel), and the message with
// publish_time = log_time.
//
// Threads: one owner.

#ifndef CYBER_SIMULATION_TESTING_RECORDING_FILE_H_
#define CYBER_SIMULATION_TESTING_RECORDING_FILE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cyber/record/mcap/mcap_writer.h"
#include "google/protobuf/message.h"

namespace cyber {
namespace testing {

class RecordingFile {
 public:
  // Creates (truncates) `path`. Errors: McapWriter::Open's.
  static absl::StatusOr<std::unique_ptr<RecordingFile>> Create(const std::string& path);

  // Appends `message` on `channel`, received at `log_time_ns` (ns since
  // the epoch), written by the process `writer` ("pollers@robot:4242").
  // FailedPrecondition naming the channel when it was added with another
  // message type.
  absl::Status Add(const std::string& channel, const google::protobuf::Message& message,
                   uint64_t log_time_ns, const std::string& writer = "test@localhost:1");
  // Completes the file (summary, footer).
  absl::Status Close() { return mcap_->Close(); }

 private:
  explicit RecordingFile(std::unique_ptr<record::McapWriter> mcap) : mcap_(std::move(mcap)) {}

  struct Channel {
    uint16_t id = 0;
    std::string type_name;
  };
  struct Writer {
    uint32_t id = 0;
    uint64_t sequence = 0;  // of its last message
  };

  std::unique_ptr<record::McapWriter> mcap_;
  std::map<std::string, uint16_t> schemas_;  // type name -> schema id
  std::map<std::string, Channel> channels_;
  std::map<std::pair<std::string, std::string>, Writer> writers_;  // (writer, channel)
};

}  // namespace testing
}  // namespace cyber

#endif  // CYBER_SIMULATION_TESTING_RECORDING_FILE_H_
