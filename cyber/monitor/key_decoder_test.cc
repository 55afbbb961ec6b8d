#include "cyber/monitor/key_decoder.h"

#include "gtest/gtest.h"

namespace cyber {
namespace monitor {
namespace {

std::vector<Key> Keys(std::initializer_list<Key> k) { return std::vector<Key>(k); }

TEST(KeyDecoderTest, ArrowsInBothCursorModes) {
  KeyDecoder d;
  EXPECT_EQ(d.Feed("\x1b[A\x1b[B\x1b[C\x1b[D"),
            Keys({Key::kUp, Key::kDown, Key::kRight, Key::kLeft}));
  EXPECT_EQ(d.Feed("\x1bOA\x1bOB"), Keys({Key::kUp, Key::kDown}));
  EXPECT_FALSE(d.pending());
}

TEST(KeyDecoderTest, ASequenceSplitOverReadsIsOneKey) {
  KeyDecoder d;
  EXPECT_TRUE(d.Feed("\x1b").empty());
  EXPECT_TRUE(d.pending());
  EXPECT_TRUE(d.Feed("[").empty());
  EXPECT_EQ(d.Feed("B"), Keys({Key::kDown}));
}

TEST(KeyDecoderTest, ALoneEscapeIsEscOnlyWhenNothingFollows) {
  KeyDecoder d;
  EXPECT_TRUE(d.Feed("\x1b").empty());
  EXPECT_EQ(d.Flush(), Keys({Key::kEscape}));
  EXPECT_FALSE(d.pending());
  EXPECT_TRUE(d.Flush().empty());
  // Esc twice: the first is a key at once.
  EXPECT_EQ(d.Feed("\x1b\x1b"), Keys({Key::kEscape}));
  EXPECT_EQ(d.Flush(), Keys({Key::kEscape}));
}

TEST(KeyDecoderTest, PlainKeys) {
  KeyDecoder d;
  EXPECT_EQ(d.Feed("\r\n\tqQjk"), Keys({Key::kEnter, Key::kEnter, Key::kTab, Key::kQuit,
                                        Key::kQuit, Key::kDown, Key::kUp}));
  EXPECT_TRUE(d.Feed("xyz 1").empty());
}

TEST(KeyDecoderTest, PagesAndUnknownSequences) {
  KeyDecoder d;
  EXPECT_EQ(d.Feed("\x1b[5~\x1b[6~\x1b[H\x1b[F"),
            Keys({Key::kPageUp, Key::kPageDown, Key::kHome, Key::kEnd}));
  // F5 (ESC [ 1 5 ~) and a modified arrow (ESC [ 1 ; 5 A) are read whole
  // and dropped: the bytes after them are keys again.
  EXPECT_EQ(d.Feed("\x1b[15~q"), Keys({Key::kQuit}));
  EXPECT_EQ(d.Feed("\x1b[1;5Aj"), Keys({Key::kDown}));
}

TEST(KeyDecoderTest, EscFollowedAtOnceByAnotherKeyIsBothKeys) {
  KeyDecoder d;
  EXPECT_EQ(d.Feed("\x1b\t"), Keys({Key::kEscape, Key::kTab}));
  EXPECT_EQ(d.Feed("\x1bq"), Keys({Key::kEscape, Key::kQuit}));
  EXPECT_EQ(d.Feed("\x1b\x1b[A"), Keys({Key::kEscape, Key::kUp}));
  EXPECT_FALSE(d.pending());
}

TEST(KeyDecoderTest, FlushDropsAnUnfinishedSequence) {
  KeyDecoder d;
  EXPECT_TRUE(d.Feed("\x1b[1").empty());
  EXPECT_TRUE(d.Flush().empty());
  EXPECT_EQ(d.Feed("q"), Keys({Key::kQuit}));
}

TEST(KeyDecoderTest, Names) {
  EXPECT_STREQ(KeyName(Key::kDown), "Down");
  EXPECT_STREQ(KeyName(Key::kEscape), "Escape");
}

}  // namespace
}  // namespace monitor
}  // namespace cyber
