#include "cyber/transport/dds/sample_frame.h"

#include <string>

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace cyber {
namespace dds {
namespace {

std::string Frame(const FrameHeader& h, const std::string& payload) {
  std::string out;
  AppendFrameHeader(h, static_cast<uint32_t>(payload.size()), &out);
  out += payload;
  return out;
}

TEST(SampleFrameTest, RoundTripsEveryField) {
  FrameHeader h;
  h.kind = FrameKind::kResponse;
  h.sequence = 0x0102030405060708;
  h.sent_ns = -5;  // not a real time, but every bit must survive
  h.correlation_client = ~uint64_t{0};
  h.correlation_sequence = 42;
  const std::string bytes = Frame(h, "payload");
  ASSERT_EQ(bytes.size(), kFrameHeaderSize + 7);
  absl::StatusOr<FrameView> v = DecodeFrame(bytes);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->version, kFrameVersion);
  EXPECT_EQ(v->header.kind, FrameKind::kResponse);
  EXPECT_EQ(v->header.sequence, h.sequence);
  EXPECT_EQ(v->header.sent_ns, -5);
  EXPECT_EQ(v->header.correlation_client, h.correlation_client);
  EXPECT_EQ(v->header.correlation_sequence, 42u);
  EXPECT_EQ(v->payload, "payload");
}

TEST(SampleFrameTest, AnEmptyPayloadIsAFrame) {
  const std::string bytes = Frame(FrameHeader{}, "");
  absl::StatusOr<FrameView> v = DecodeFrame(bytes);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_TRUE(v->payload.empty());
}

TEST(SampleFrameTest, RefusesWhatIsNotAFrameAndSaysWhy) {
  EXPECT_NE(DecodeFrame("").status().message().find("shorter than the smallest (48-byte) header"),
            std::string::npos);
  std::string bytes = Frame(FrameHeader{}, "x");
  std::string bad_magic = bytes;
  bad_magic[0] = 'X';
  EXPECT_NE(DecodeFrame(bad_magic).status().message().find("CYBR"), std::string::npos);
  std::string bad_kind = bytes;
  bad_kind[5] = 4;
  EXPECT_NE(DecodeFrame(bad_kind).status().message().find("kind 4"), std::string::npos);
  std::string version0 = bytes;
  version0[4] = 0;
  EXPECT_FALSE(DecodeFrame(version0).ok());
  std::string small_header = bytes;
  small_header[6] = 47;
  EXPECT_NE(DecodeFrame(small_header).status().message().find("header size 47"),
            std::string::npos);
  std::string long_header = bytes;
  long_header[6] = 100;  // beyond the 49 bytes given
  EXPECT_FALSE(DecodeFrame(long_header).ok());
  std::string long_payload = bytes;
  long_payload[8] = 2;  // 2 payload bytes claimed, 1 present
  EXPECT_NE(DecodeFrame(long_payload).status().message().find("payload size 2"),
            std::string::npos);
  EXPECT_FALSE(DecodeFrame(bytes.substr(0, 47)).ok());
}

TEST(SampleFrameTest, PaddingAfterThePayloadIsIgnored) {
  // Fast-DDS pads samples to a multiple of 4 bytes.
  const std::string bytes = Frame(FrameHeader{}, "abcde") + std::string(3, '\0');
  absl::StatusOr<FrameView> v = DecodeFrame(bytes);  // views into `bytes`
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->payload, "abcde");
}

TEST(SampleFrameTest, ANewerVersionWithALargerHeaderStillYieldsThePayload) {
  std::string bytes;
  AppendFrameHeader(FrameHeader{}, 7, &bytes);
  bytes[4] = 3;   // version 3
  bytes[6] = 64;  // 8 more header bytes this reader does not know
  bytes += std::string(8, '\0');
  bytes += "message";
  absl::StatusOr<FrameView> v = DecodeFrame(bytes);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->version, 3);
  EXPECT_EQ(v->payload, "message");
}

TEST(SampleFrameTest, ARequestCarriesItsBudget) {
  FrameHeader h;
  h.kind = FrameKind::kRequest;
  h.correlation_client = 9;
  h.correlation_sequence = 3;
  h.budget_ns = 150'000'000;
  const std::string request = Frame(h, "req");  // the view points into it
  absl::StatusOr<FrameView> v = DecodeFrame(request);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->header.budget_ns, 150'000'000);
  EXPECT_EQ(v->header.status, 0u);
  EXPECT_EQ(v->payload, "req");
  // Only a request has a budget.
  h.kind = FrameKind::kResponse;
  const std::string response = Frame(h, "resp");
  v = DecodeFrame(response);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->header.budget_ns, 0);
}

TEST(SampleFrameTest, AFailureCarriesItsStatusAndMessage) {
  FrameHeader h;
  h.kind = FrameKind::kFailure;
  h.status = static_cast<uint32_t>(absl::StatusCode::kResourceExhausted);
  h.correlation_client = 1;
  h.correlation_sequence = 2;
  const std::string failure = Frame(h, "queue full");
  absl::StatusOr<FrameView> v = DecodeFrame(failure);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->header.kind, FrameKind::kFailure);
  EXPECT_EQ(v->header.status, static_cast<uint32_t>(absl::StatusCode::kResourceExhausted));
  EXPECT_EQ(v->payload, "queue full");
  // A failure that says OK is not a frame.
  h.status = 0;
  const std::string says_ok = Frame(h, "?");
  absl::StatusOr<FrameView> ok_failure = DecodeFrame(says_ok);
  EXPECT_NE(ok_failure.status().message().find("status 0"), std::string::npos)
      << ok_failure.status();
}

// What a version-1 writer sends (48-byte header, offset 12 reserved): its
// request decodes with no deadline.
TEST(SampleFrameTest, AVersion1RequestHasNoBudget) {
  FrameHeader h;
  h.kind = FrameKind::kRequest;
  h.budget_ns = 77;
  std::string bytes;
  AppendFrameHeader(h, 3, &bytes);
  bytes.resize(48);
  bytes[4] = 1;
  bytes[6] = 48;
  bytes += "abc";
  absl::StatusOr<FrameView> v = DecodeFrame(bytes);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->version, 1);
  EXPECT_EQ(v->header.budget_ns, 0);
  EXPECT_EQ(v->payload, "abc");
}

TEST(SampleFrameTest, ANegativeBudgetReadsAsNone) {
  FrameHeader h;
  h.kind = FrameKind::kRequest;
  h.budget_ns = -1;
  const std::string bytes = Frame(h, "");
  absl::StatusOr<FrameView> v = DecodeFrame(bytes);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->header.budget_ns, 0);
}

}  // namespace
}  // namespace dds
}  // namespace cyber
