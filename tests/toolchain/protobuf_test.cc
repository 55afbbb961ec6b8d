// The system protoc generates C++ that builds and parses text format, which
// graph (.dag) files will use.
#include <string>

#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "tests/toolchain/sample.pb.h"

namespace {

TEST(ProtobufToolchainTest, ParsesTextFormat) {
  cyber::toolchain_test::Sample sample;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"(name: "imu" interval: 10 channel: "/a" channel: "/b")", &sample));
  EXPECT_EQ(sample.name(), "imu");
  EXPECT_EQ(sample.interval(), 10u);
  ASSERT_EQ(sample.channel_size(), 2);
  EXPECT_EQ(sample.channel(1), "/b");
}

TEST(ProtobufToolchainTest, RejectsUnknownFieldWithLineNumber) {
  cyber::toolchain_test::Sample sample;
  // The default parser logs errors; a collector is what the graph loader
  // will use to report file:line, so check the line is known.
  google::protobuf::TextFormat::Parser parser;
  struct Collector : google::protobuf::io::ErrorCollector {
    int line = -1;
    void AddError(int l, int, const std::string&) override { line = l; }
  } collector;
  parser.RecordErrorsTo(&collector);
  EXPECT_FALSE(parser.ParseFromString("name: \"x\"\nbogus: 1\n", &sample));
  EXPECT_EQ(collector.line, 1);  // zero-based: the second line
}

}  // namespace
