#include "cyber/monitor/navigator.h"

#include "gtest/gtest.h"

namespace cyber {
namespace monitor {
namespace {

NavExtent Extent(std::vector<std::string> channels, size_t process_lines = 0,
                 size_t message_lines = 0) {
  NavExtent e;
  e.channels = std::move(channels);
  e.process_lines = process_lines;
  e.message_lines = message_lines;
  e.page = 2;
  return e;
}

TEST(NavigatorTest, UpAndDownStayInTheList) {
  Navigator nav;
  const NavExtent e = Extent({"/a", "/b", "/c"});
  EXPECT_EQ(nav.OnKey(Key::kUp, e), Action::kNone);
  EXPECT_EQ(nav.state().channel_row, 0u);
  nav.OnKey(Key::kDown, e);
  nav.OnKey(Key::kDown, e);
  nav.OnKey(Key::kDown, e);
  EXPECT_EQ(nav.state().channel_row, 2u);
  EXPECT_EQ(nav.state().channel_name, "/c");
  nav.OnKey(Key::kHome, e);
  EXPECT_EQ(nav.state().channel_name, "/a");
  nav.OnKey(Key::kPageDown, e);
  EXPECT_EQ(nav.state().channel_name, "/c");
  nav.OnKey(Key::kPageUp, e);
  EXPECT_EQ(nav.state().channel_name, "/a");
  nav.OnKey(Key::kEnd, e);
  EXPECT_EQ(nav.state().channel_name, "/c");
}

TEST(NavigatorTest, SelectionFollowsItsChannelWhenTheListChanges) {
  Navigator nav;
  nav.OnKey(Key::kDown, Extent({"/a", "/b"}));
  EXPECT_EQ(nav.state().channel_name, "/b");
  nav.Follow(Extent({"/0", "/a", "/b"}));  // a channel appeared above
  EXPECT_EQ(nav.state().channel_row, 2u);
  EXPECT_EQ(nav.state().channel_name, "/b");
  nav.Follow(Extent({"/0"}));  // it left: the selection stays in range
  EXPECT_EQ(nav.state().channel_row, 0u);
  EXPECT_EQ(nav.state().channel_name, "/0");
  nav.Follow(Extent({}));
  EXPECT_EQ(nav.state().channel_name, "");
}

TEST(NavigatorTest, EnterOpensTheSelectedChannelAndEscGoesBack) {
  Navigator nav;
  const NavExtent e = Extent({"/a", "/b"}, 0, 5);
  nav.OnKey(Key::kDown, e);
  EXPECT_EQ(nav.OnKey(Key::kEnter, e), Action::kOpenChannel);
  EXPECT_EQ(nav.state().view, View::kMessage);
  EXPECT_EQ(nav.state().open_channel, "/b");
  // Up/Down scroll the message, not the list.
  nav.OnKey(Key::kDown, e);
  EXPECT_EQ(nav.state().message_scroll, 1u);
  EXPECT_EQ(nav.state().channel_name, "/b");
  EXPECT_EQ(nav.OnKey(Key::kEscape, e), Action::kCloseChannel);
  EXPECT_EQ(nav.state().view, View::kChannels);
  EXPECT_EQ(nav.state().open_channel, "");
  EXPECT_EQ(nav.state().channel_name, "/b");
  // Right opens too, Left goes back.
  EXPECT_EQ(nav.OnKey(Key::kRight, e), Action::kOpenChannel);
  EXPECT_EQ(nav.state().message_scroll, 0u);
  EXPECT_EQ(nav.OnKey(Key::kLeft, e), Action::kCloseChannel);
}

TEST(NavigatorTest, EnterOnAnEmptyListDoesNothing) {
  Navigator nav;
  EXPECT_EQ(nav.OnKey(Key::kEnter, Extent({})), Action::kNone);
  EXPECT_EQ(nav.state().view, View::kChannels);
}

TEST(NavigatorTest, TabTogglesTheProcessView) {
  Navigator nav;
  const NavExtent e = Extent({"/a", "/b"}, 4);
  EXPECT_EQ(nav.OnKey(Key::kTab, e), Action::kNone);
  EXPECT_EQ(nav.state().view, View::kProcesses);
  nav.OnKey(Key::kDown, e);
  nav.OnKey(Key::kDown, e);
  EXPECT_EQ(nav.state().process_line, 2u);
  EXPECT_EQ(nav.state().channel_row, 0u);  // the channel list's selection is kept apart
  EXPECT_EQ(nav.OnKey(Key::kEnter, e), Action::kNone);
  EXPECT_EQ(nav.state().view, View::kProcesses);
  nav.OnKey(Key::kTab, e);
  EXPECT_EQ(nav.state().view, View::kChannels);
  nav.OnKey(Key::kTab, e);
  nav.OnKey(Key::kEscape, e);
  EXPECT_EQ(nav.state().view, View::kChannels);
  EXPECT_EQ(nav.state().process_line, 2u);  // kept for the next visit
}

TEST(NavigatorTest, QuitFromEveryView) {
  const NavExtent e = Extent({"/a"}, 1, 1);
  Navigator channels;
  EXPECT_EQ(channels.OnKey(Key::kQuit, e), Action::kQuit);
  Navigator processes;
  processes.OnKey(Key::kTab, e);
  EXPECT_EQ(processes.OnKey(Key::kQuit, e), Action::kQuit);
  Navigator message;
  message.OnKey(Key::kEnter, e);
  EXPECT_EQ(message.OnKey(Key::kQuit, e), Action::kQuit);
}

}  // namespace
}  // namespace monitor
}  // namespace cyber
