// RecordingWriter and Recording together: what the recorder and split
// write is what play and replay read (writers, sequences, the one order),
// losses are counted from sequence gaps and drops, splits by size and by
// log time, and every file passes Foxglove's reader.
#include "cyber/record/recording_writer.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "cyber/record/mcap/recording.h"
#include "cyber/record/mcap/testing/foxglove_mcap_check.h"
#include "google/protobuf/descriptor.pb.h"
#include "google/protobuf/timestamp.pb.h"
#include "gtest/gtest.h"

namespace cyber {
namespace record {
namespace {

std::string TempPath(const std::string& name) {
  return absl::StrCat(std::getenv("TEST_TMPDIR"), "/", name);
}

ChannelInfo Channel(const std::string& name) {
  google::protobuf::FileDescriptorSet set;
  google::protobuf::Timestamp::descriptor()->file()->CopyTo(set.add_file());
  return ChannelInfo{name, "google.protobuf.Timestamp", set.SerializeAsString(),
                     {{"reliable", "true"}, {"transient_local", "false"}, {"depth", "16"}}};
}

std::string Stamp(int64_t seconds) {
  google::protobuf::Timestamp t;
  t.set_seconds(seconds);
  return t.SerializeAsString();
}

constexpr uint64_t kT0 = 1'700'000'000'000'000'000ull;

TEST(RecordingWriter, WritersSequencesAndTheOneOrderSurviveARoundTrip) {
  std::string path = TempPath("order.mcap");
  RecordingWriterOptions options;
  options.path = path;
  options.recording_metadata = {{"domain", "9"}};
  auto w = RecordingWriter::Open(options);
  ASSERT_TRUE(w.ok()) << w.status();
  ChannelInfo imu = Channel("/imu"), scan = Channel("/scan");
  MessageOrigin a{"pollers@h:1", "aaaa", 0}, b{"other@h:2", "bbbb", 0};
  // Written out of order (as two writers' messages arrive); read back in
  // (log_time, channel, writer, sequence) order.
  for (int i = 1; i <= 5; ++i) {
    a.sequence = i;
    b.sequence = i;
    ASSERT_TRUE((*w)->Write(scan, b, kT0 + i * 10, kT0 + i * 10 - 1, Stamp(i)).ok());
    ASSERT_TRUE((*w)->Write(imu, a, kT0 + i * 10, kT0 + i * 10 - 2, Stamp(i)).ok());
  }
  ASSERT_TRUE((*w)->Close().ok());
  absl::StatusOr<Recording> r = Recording::Load(path);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->messages().size(), 10u);
  EXPECT_FALSE(r->truncated().has_value());
  for (size_t i = 0; i < 10; i += 2) {
    EXPECT_EQ(r->messages()[i].channel, "/imu");
    EXPECT_EQ(r->messages()[i].writer, "pollers@h:1");
    EXPECT_EQ(r->messages()[i].writer_guid, "aaaa");
    EXPECT_EQ(r->messages()[i].sequence, i / 2 + 1);
    EXPECT_EQ(r->messages()[i].publish_time, r->messages()[i].log_time - 2);
    EXPECT_EQ(r->messages()[i + 1].channel, "/scan");
    EXPECT_EQ(r->messages()[i + 1].writer, "other@h:2");
  }
  ASSERT_EQ(r->channels().size(), 2u);
  EXPECT_EQ(r->channels()[0].type_name, "google.protobuf.Timestamp");
  EXPECT_FALSE(r->channels()[0].transient_local);
  EXPECT_EQ(r->stats().at("/imu").received, 5u);
  EXPECT_EQ(r->stats().at("/imu").writers, 1u);
  EXPECT_TRUE(testing::CheckWithFoxgloveMcap(path).ok());
}

TEST(RecordingWriter, GapsInAWritersSequenceAndDropsAreCountedAndStored) {
  std::string path = TempPath("lost.mcap");
  RecordingWriterOptions options;
  options.path = path;
  auto w = RecordingWriter::Open(options);
  ASSERT_TRUE(w.ok());
  ChannelInfo imu = Channel("/imu");
  for (uint64_t seq : {1, 2, 5, 6, 10}) {  // 3, 4, 7, 8, 9 lost
    ASSERT_TRUE((*w)->Write(imu, {"p@h:1", "g1", seq}, kT0 + seq, kT0 + seq, Stamp(seq)).ok());
  }
  // A second writer (a restarted process: a new GUID) starts from 1 again.
  ASSERT_TRUE((*w)->Write(imu, {"p@h:7", "g2", 1}, kT0 + 20, kT0 + 20, Stamp(1)).ok());
  (*w)->CountDropped("/imu", 3);
  EXPECT_EQ((*w)->totals().at("/imu").lost, 5u);
  ASSERT_TRUE((*w)->Close().ok());
  absl::StatusOr<Recording> r = Recording::Load(path);
  ASSERT_TRUE(r.ok()) << r.status();
  const ChannelRecordStats& s = r->stats().at("/imu");
  EXPECT_EQ(s.received, 6u);
  EXPECT_EQ(s.lost, 5u);
  EXPECT_EQ(s.dropped, 3u);
  EXPECT_EQ(s.writers, 2u);
}

TEST(RecordingWriter, SplitsBySizeAndByLogTimeIntoNumberedFilesEachComplete) {
  RecordingWriterOptions by_time;
  by_time.path = TempPath("timed.mcap");
  by_time.split_duration = absl::Seconds(1);
  auto w = RecordingWriter::Open(by_time);
  ASSERT_TRUE(w.ok()) << w.status();
  ChannelInfo imu = Channel("/imu");
  for (uint64_t i = 0; i < 35; ++i) {  // 3.4 s at 10 Hz: 4 files
    ASSERT_TRUE((*w)->Write(imu, {"p@h:1", "g", i + 1}, kT0 + i * 100'000'000,
                            kT0 + i * 100'000'000, Stamp(i)).ok());
  }
  ASSERT_TRUE((*w)->Close().ok());
  ASSERT_EQ((*w)->files().size(), 4u);
  EXPECT_EQ((*w)->files()[0], TempPath("timed.00000.mcap"));
  EXPECT_EQ((*w)->files()[3], TempPath("timed.00003.mcap"));
  uint64_t total = 0;
  for (const std::string& f : (*w)->files()) {
    absl::StatusOr<Recording> r = Recording::Load(f);
    ASSERT_TRUE(r.ok()) << r.status();
    total += r->messages().size();
    // Each part names its writers again: a part alone is a whole recording.
    EXPECT_EQ(r->messages().front().writer, "p@h:1");
    EXPECT_EQ(r->stats().at("/imu").lost, 0u) << f;
    EXPECT_TRUE(testing::CheckWithFoxgloveMcap(f).ok()) << f;
  }
  EXPECT_EQ(total, 35u);

  RecordingWriterOptions by_size;
  by_size.path = TempPath("sized.mcap");
  by_size.split_bytes = 64 * 1024;
  by_size.mcap.chunk_size = 16 * 1024;
  auto s = RecordingWriter::Open(by_size);
  ASSERT_TRUE(s.ok());
  for (uint64_t i = 0; i < 5000; ++i) {
    ASSERT_TRUE((*s)->Write(imu, {"p@h:1", "g", i + 1}, kT0 + i, kT0 + i, Stamp(i)).ok());
  }
  ASSERT_TRUE((*s)->Close().ok());
  EXPECT_GE((*s)->files().size(), 3u);
  uint64_t messages = 0;
  for (const std::string& f : (*s)->files()) {
    absl::StatusOr<Recording> r = Recording::Load(f);
    ASSERT_TRUE(r.ok()) << r.status();
    messages += r->messages().size();
    // A part closes at the first message past the size: at most one chunk
    // and its indexes and summary over.
    std::FILE* file = std::fopen(f.c_str(), "rb");
    ASSERT_NE(file, nullptr);
    std::fseek(file, 0, SEEK_END);
    EXPECT_LE(std::ftell(file), 64 * 1024 + 16 * 1024 + 8 * 1024) << f;
    std::fclose(file);
  }
  EXPECT_EQ(messages, 5000u);
}

TEST(RecordingWriter, BadOptionsAreNamed) {
  EXPECT_EQ(RecordingWriter::Open({}).status().code(), absl::StatusCode::kInvalidArgument);
  RecordingWriterOptions o;
  o.path = TempPath("no_suffix");
  o.split_bytes = 1;
  absl::Status s = RecordingWriter::Open(o).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("no_suffix"), std::string::npos) << s;
}

}  // namespace
}  // namespace record
}  // namespace cyber
