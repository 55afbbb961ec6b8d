// cyber_recorder's argument parsing: Cyber RT's spellings, repeated flags,
// and every bad argument named.
#include "cyber/record/recorder_command.h"

#include "gtest/gtest.h"

namespace cyber {
namespace record {
namespace {

TEST(ParseRecorderArgs, CybersSpellingsAndRepeatedChannels) {
  auto a = ParseRecorderArgs({"record", "-c", "/a", "-c", "/b,/c", "-k", "/b", "-o", "x.mcap",
                              "-i", "60", "-m", "512", "--compression=lz4"});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->channels, (std::vector<std::string>{"/a", "/b", "/c"}));
  EXPECT_EQ(a->exclude, (std::vector<std::string>{"/b"}));
  EXPECT_EQ(a->output, "x.mcap");
  EXPECT_EQ(*a->split_duration, absl::Seconds(60));
  EXPECT_EQ(a->split_bytes, uint64_t{512} << 20);
  EXPECT_EQ(a->compression, "lz4");
  EXPECT_TRUE(NeedsDomain(*a));

  auto p = ParseRecorderArgs({"play", "-f", "d.mcap", "-r", "0.5", "-s", "2", "-l", "-b", "1.5"});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->rate, 0.5);
  EXPECT_EQ(p->start_offset, absl::Seconds(2));
  EXPECT_TRUE(p->loop);
  EXPECT_EQ(*p->begin, "1.5");

  auto i = ParseRecorderArgs({"info", "d.mcap"});
  ASSERT_TRUE(i.ok());
  EXPECT_EQ(i->file, "d.mcap");
  EXPECT_FALSE(NeedsDomain(*i));
}

TEST(ParseRecorderArgs, BadArgumentsAreNamed) {
  struct Case {
    std::vector<std::string> args;
    std::string named;
  };
  for (const Case& c : std::vector<Case>{
           {{}, "no command"},
           {{"rec"}, "\"rec\""},
           {{"record"}, "nothing selected"},
           {{"record", "-a", "-x"}, "-x"},
           {{"record", "-a", "-i", "0"}, "-i \"0\""},
           {{"record", "-a", "-m", "half"}, "-m \"half\""},
           {{"record", "-a", "-o"}, "-o needs a value"},
           {{"play"}, "-f FILE"},
           {{"play", "-f", "x", "-r", "-1"}, "-r \"-1\""},
           {{"play", "-f", "x", "-s", "soon"}, "-s \"soon\""},
           {{"split", "-f", "x"}, "-o OUT.mcap"},
           {{"recover", "-f", "x", "-o", "x"}, "is the input file"},
           {{"info", "a", "b"}, "unexpected operand"},
       }) {
    auto r = ParseRecorderArgs(c.args);
    ASSERT_FALSE(r.ok()) << c.named;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(c.named), std::string::npos)
        << "expected \"" << c.named << "\" in: " << r.status();
  }
}

TEST(ParseRecordingTime, SecondsFromTheFirstMessageOrRfc3339) {
  EXPECT_EQ(*ParseRecordingTime("-b", "1.5", 1000), 1000 + 1'500'000'000u);
  EXPECT_EQ(*ParseRecordingTime("-e", "1970-01-01T00:00:02Z", 0), 2'000'000'000u);
  auto bad = ParseRecordingTime("-b", "yesterday", 0);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("-b \"yesterday\""), std::string::npos) << bad.status();
  EXPECT_FALSE(ParseRecordingTime("-b", "-3", 0).ok());
}

}  // namespace
}  // namespace record
}  // namespace cyber
