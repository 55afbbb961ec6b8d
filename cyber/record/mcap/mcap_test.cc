// McapWriter and McapReader against each other and against Foxglove's own
// reader (check_mcap.js): every compression, many chunks, metadata and
// private records, a file cut short as a killed writer leaves it, a
// damaged chunk, and bad input.
#include <cstdio>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "cyber/record/mcap/mcap_bytes.h"
#include "cyber/record/mcap/mcap_reader.h"
#include "cyber/record/mcap/mcap_recover.h"
#include "cyber/record/mcap/mcap_writer.h"
#include "cyber/record/mcap/testing/foxglove_mcap_check.h"
#include "google/protobuf/descriptor.pb.h"
#include "google/protobuf/timestamp.pb.h"
#include "gtest/gtest.h"

namespace cyber {
namespace record {
namespace {

std::string TimestampSchema() {
  google::protobuf::FileDescriptorSet set;
  google::protobuf::Timestamp::descriptor()->file()->CopyTo(set.add_file());
  return set.SerializeAsString();
}

std::string TempPath(const std::string& name) {
  return absl::StrCat(std::getenv("TEST_TMPDIR"), "/", name);
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void WriteAll(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

// Two channels of google.protobuf.Timestamp, `n` messages each, small
// chunks so that a file has many.
void WriteSample(McapWriter& w, int n) {
  absl::StatusOr<uint16_t> schema =
      w.AddSchema("google.protobuf.Timestamp", "protobuf", TimestampSchema());
  ASSERT_TRUE(schema.ok()) << schema.status();
  absl::StatusOr<uint16_t> a = w.AddChannel("/a", *schema, "protobuf", {{"qos", "reliable"}});
  absl::StatusOr<uint16_t> b = w.AddChannel("/b", *schema, "protobuf", {});
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE(w.WriteMetadata("cyber.recording", {{"domain", "7"}}).ok());
  for (int i = 0; i < n; ++i) {
    google::protobuf::Timestamp t;
    t.set_seconds(i);
    t.set_nanos(i * 3);
    std::string data = t.SerializeAsString();
    ASSERT_TRUE(w.WritePrivate(0x90, "application record").ok());
    ASSERT_TRUE(w.Write({*a, static_cast<uint32_t>(i), 1000u + 2 * i, 900u + 2 * i, data}).ok());
    ASSERT_TRUE(w.Write({*b, static_cast<uint32_t>(i), 1001u + 2 * i, 901u + 2 * i, data}).ok());
  }
}

class McapRoundTrip : public ::testing::TestWithParam<McapCompression> {};

TEST_P(McapRoundTrip, WhatIsWrittenIsReadBackByOurReaderAndByFoxglovesAndTheSummaryAgrees) {
  std::string path = TempPath(absl::StrCat("round_trip_", static_cast<int>(GetParam()), ".mcap"));
  McapWriterOptions options;
  options.compression = GetParam();
  options.chunk_size = 4096;
  {
    absl::StatusOr<std::unique_ptr<McapWriter>> w = McapWriter::Open(path, options);
    ASSERT_TRUE(w.ok()) << w.status();
    WriteSample(**w, 500);
    EXPECT_EQ((*w)->message_count(), 1000u);
    ASSERT_TRUE((*w)->Close().ok());
  }
  absl::StatusOr<std::unique_ptr<McapReader>> r = McapReader::Open(path);
  ASSERT_TRUE(r.ok()) << r.status();
  absl::StatusOr<McapSummary> summary = (*r)->Summary();
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_TRUE(summary->from_summary_section);
  EXPECT_EQ(summary->library, "cyber_recorder");
  EXPECT_EQ(summary->statistics.message_count, 1000u);
  EXPECT_EQ(summary->statistics.message_start_time, 1000u);
  EXPECT_EQ(summary->statistics.message_end_time, 1000u + 2 * 499 + 1);
  EXPECT_EQ(summary->statistics.channel_message_counts.at(0), 500u);
  EXPECT_EQ(summary->statistics.channel_message_counts.at(1), 500u);
  EXPECT_GT(summary->chunks.size(), 5u);
  EXPECT_EQ(summary->statistics.chunk_count, summary->chunks.size());
  ASSERT_EQ(summary->channels.size(), 2u);
  EXPECT_EQ(summary->channels.at(0).metadata.at("qos"), "reliable");
  ASSERT_EQ(summary->metadata.size(), 1u);
  EXPECT_EQ(summary->metadata[0].metadata.at("domain"), "7");
  for (const McapChunkInfo& c : summary->chunks) {
    EXPECT_EQ(c.compression, McapCompressionName(GetParam()));
    // The chunk closed by WriteMetadata holds the schema and channels only.
    if (c.message_end_time != 0) {
      EXPECT_EQ(c.message_index_offsets.size(), 2u);
    }
  }

  int messages = 0, privates = 0;
  uint64_t last_a = 0;
  absl::StatusOr<McapScanEnd> end = (*r)->ForEachRecord([&](const McapRecordView& v) {
    if (v.opcode == 0x90) ++privates;
    if (v.message.has_value()) {
      EXPECT_TRUE(v.in_chunk);
      ++messages;
      google::protobuf::Timestamp t;
      EXPECT_TRUE(t.ParseFromArray(v.message->data.data(), v.message->data.size()));
      if (v.message->channel_id == 0) {
        EXPECT_EQ(t.seconds(), v.message->sequence);
        EXPECT_EQ(v.message->publish_time + 100, v.message->log_time);
        if (messages > 1) {
          EXPECT_EQ(v.message->log_time, last_a + 2);
        }
        last_a = v.message->log_time;
      }
    }
    return true;
  });
  ASSERT_TRUE(end.ok()) << end.status();
  EXPECT_FALSE(end->truncated.has_value());
  EXPECT_EQ(messages, 1000);
  EXPECT_EQ(privates, 500);

  absl::StatusOr<std::string> foxglove = testing::CheckWithFoxgloveMcap(path);
  ASSERT_TRUE(foxglove.ok()) << foxglove.status();
  EXPECT_NE(foxglove->find("\"messages\":1000"), std::string::npos) << *foxglove;
  EXPECT_NE(foxglove->find("\"/a\":{\"schema\":\"google.protobuf.Timestamp\",\"messages\":500}"),
            std::string::npos)
      << *foxglove;
}

INSTANTIATE_TEST_SUITE_P(EveryCompression, McapRoundTrip,
                         ::testing::Values(McapCompression::kNone, McapCompression::kZstd,
                                           McapCompression::kLz4));

TEST(McapWriter, AnEmptyRecordingIsAValidFile) {
  std::string path = TempPath("empty.mcap");
  {
    absl::StatusOr<std::unique_ptr<McapWriter>> w = McapWriter::Open(path, {});
    ASSERT_TRUE(w.ok());
  }  // closed by the destructor
  absl::StatusOr<std::unique_ptr<McapReader>> r = McapReader::Open(path);
  ASSERT_TRUE(r.ok());
  absl::StatusOr<McapSummary> s = (*r)->Summary();
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->statistics.message_count, 0u);
  EXPECT_TRUE(testing::CheckWithFoxgloveMcap(path).ok());
}

// What a writer killed with -9 leaves: the complete chunks it flushed and
// part of the next one, no summary, no footer.
TEST(McapReader, AFileCutShortYieldsEveryCompleteChunkAndRecoverMakesItWhole) {
  std::string path = TempPath("killed.mcap");
  std::string copy = TempPath("killed_copy.mcap");
  McapWriterOptions options;
  options.chunk_size = 1 << 20;  // nothing closes a chunk but Flush
  {
    absl::StatusOr<std::unique_ptr<McapWriter>> w = McapWriter::Open(path, options);
    ASSERT_TRUE(w.ok());
    WriteSample(**w, 100);
    ASSERT_TRUE((*w)->Flush().ok());
    std::string flushed = ReadAll(path);
    WriteSample(**w, 50);  // a second schema and channels, in the next chunk
    ASSERT_TRUE((*w)->Flush().ok());
    std::string both = ReadAll(path);
    // Cut in the middle of the last chunk (its message indexes follow it).
    absl::StatusOr<std::unique_ptr<McapReader>> whole = McapReader::FromBytes(both, "both");
    ASSERT_TRUE(whole.ok());
    absl::StatusOr<McapSummary> scanned = (*whole)->Summary();
    ASSERT_TRUE(scanned.ok()) << scanned.status();
    const McapChunkInfo& last = scanned->chunks.back();
    ASSERT_GT(last.chunk_start_offset, flushed.size());
    WriteAll(copy, both.substr(0, last.chunk_start_offset + last.chunk_length / 2));
  }
  absl::StatusOr<std::unique_ptr<McapReader>> r = McapReader::Open(copy);
  ASSERT_TRUE(r.ok());
  int messages = 0;
  absl::StatusOr<McapScanEnd> end = (*r)->ForEachRecord([&](const McapRecordView& v) {
    if (v.message.has_value()) ++messages;
    return true;
  });
  ASSERT_TRUE(end.ok()) << end.status();
  ASSERT_TRUE(end->truncated.has_value());
  EXPECT_NE(end->truncated->find("claims"), std::string::npos) << *end->truncated;
  EXPECT_EQ(messages, 200);
  absl::StatusOr<McapSummary> s = (*r)->Summary();
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_FALSE(s->from_summary_section);
  EXPECT_EQ(s->statistics.message_count, 200u);
  EXPECT_EQ(s->chunks.size(), 3u);  // schema, messages, the second's schema
  EXPECT_TRUE(testing::CheckWithFoxgloveMcap(copy, /*truncated=*/true).ok());
  EXPECT_FALSE(testing::CheckWithFoxgloveMcap(copy).ok()) << "a cut file must not pass as whole";

  std::string recovered = TempPath("recovered.mcap");
  absl::StatusOr<RecoverReport> report = McapRecover(copy, recovered, {});
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->messages, 200u);
  EXPECT_EQ(report->channels, 4u);  // both samples' channels came before the cut
  ASSERT_TRUE(report->truncated.has_value());
  EXPECT_GT(report->bytes_dropped, 0u);
  EXPECT_EQ(report->bytes_kept + report->bytes_dropped, ReadAll(copy).size());
  absl::StatusOr<std::string> foxglove = testing::CheckWithFoxgloveMcap(recovered);
  ASSERT_TRUE(foxglove.ok()) << foxglove.status();
  EXPECT_NE(foxglove->find("\"messages\":200"), std::string::npos) << *foxglove;
}

TEST(McapReader, ADamagedChunkIsNamedByItsByteAndRecoverKeepsWhatCameBefore) {
  std::string path = TempPath("damaged.mcap");
  McapWriterOptions options;
  options.compression = McapCompression::kNone;
  options.chunk_size = 2048;
  {
    absl::StatusOr<std::unique_ptr<McapWriter>> w = McapWriter::Open(path, options);
    ASSERT_TRUE(w.ok());
    WriteSample(**w, 200);
  }
  absl::StatusOr<std::unique_ptr<McapReader>> clean = McapReader::Open(path);
  ASSERT_TRUE(clean.ok());
  absl::StatusOr<McapSummary> s = (*clean)->Summary();
  ASSERT_TRUE(s.ok());
  ASSERT_GT(s->chunks.size(), 3u);
  const McapChunkInfo& third = s->chunks[2];
  std::string bytes = ReadAll(path);
  // A byte in the middle of the third chunk's records flipped.
  bytes[third.chunk_start_offset + third.chunk_length / 2] ^= 0x5A;
  std::string damaged = TempPath("damaged_copy.mcap");
  WriteAll(damaged, bytes);

  absl::StatusOr<std::unique_ptr<McapReader>> r = McapReader::Open(damaged);
  ASSERT_TRUE(r.ok());
  absl::StatusOr<McapScanEnd> end = (*r)->ForEachRecord([](const McapRecordView&) { return true; });
  ASSERT_FALSE(end.ok());
  EXPECT_EQ(end.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(end.status().message().find(absl::StrCat("byte ", third.chunk_start_offset)),
            std::string::npos)
      << end.status();
  EXPECT_NE(end.status().message().find("uncompressed_crc"), std::string::npos) << end.status();

  std::string recovered = TempPath("damaged_recovered.mcap");
  absl::StatusOr<RecoverReport> report = McapRecover(damaged, recovered, {});
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_TRUE(report->truncated.has_value());
  EXPECT_EQ(report->bytes_kept, third.chunk_start_offset);
  EXPECT_TRUE(testing::CheckWithFoxgloveMcap(recovered).ok());
}

TEST(McapReader, BadInputIsNamed) {
  absl::StatusOr<std::unique_ptr<McapReader>> none = McapReader::Open(TempPath("nonexistent.mcap"));
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(none.status().message().find("nonexistent.mcap"), std::string::npos);

  std::string text = TempPath("text.mcap");
  WriteAll(text, "not an mcap file at all");
  absl::StatusOr<std::unique_ptr<McapReader>> bad = McapReader::Open(text);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("magic"), std::string::npos) << bad.status();

  absl::StatusOr<std::unique_ptr<McapReader>> header_only =
      McapReader::FromBytes(std::string(kMcapMagic, kMcapMagicSize) + "\x03", "fuzz input");
  ASSERT_TRUE(header_only.ok());
  absl::StatusOr<McapScanEnd> end =
      (*header_only)->ForEachRecord([](const McapRecordView&) { return true; });
  ASSERT_TRUE(end.ok());
  EXPECT_TRUE(end->truncated.has_value());
}

TEST(McapWriter, BadCallsAreRefusedByName) {
  McapWriterOptions zero;
  zero.chunk_size = 0;
  EXPECT_EQ(McapWriter::Open(TempPath("zero.mcap"), zero).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(McapWriter::Open("/nonexistent-dir/x.mcap", {}).ok());
  absl::StatusOr<std::unique_ptr<McapWriter>> w = McapWriter::Open(TempPath("bad.mcap"), {});
  ASSERT_TRUE(w.ok());
  absl::Status s = (*w)->Write({3, 0, 0, 0, "x"});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("channel_id 3"), std::string::npos) << s;
  absl::StatusOr<uint16_t> c = (*w)->AddChannel("/x", 9, "protobuf", {});
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(c.status().message().find("\"/x\""), std::string::npos) << c.status();
  EXPECT_EQ((*w)->WritePrivate(0x05, "x").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(ParseMcapCompression("gzip").ok());
  EXPECT_NE(ParseMcapCompression("gzip").status().message().find("gzip"), std::string::npos);
}

}  // namespace
}  // namespace record
}  // namespace cyber
