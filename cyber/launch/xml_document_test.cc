#include "cyber/launch/xml_document.h"

#include <string>

#include "gtest/gtest.h"

namespace cyber {
namespace launch {
namespace {

TEST(XmlDocumentTest, ElementsTextAttributesAndLines) {
  const char* text =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<!-- a comment -->\n"
      "<cyber version='1'>\n"
      "  <module>\n"
      "    <name>a &amp; b &lt;&#65;&#x42;&gt;</name>\n"
      "    <!-- <name>not this</name> -->\n"
      "    <dag_conf><![CDATA[x<y>.dag]]></dag_conf>\n"
      "    <empty/>\n"
      "  </module>\n"
      "</cyber>\n";
  absl::StatusOr<XmlElement> root = ParseXml(text, "t.launch");
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(root->name, "cyber");
  EXPECT_EQ(root->line, 3);
  ASSERT_EQ(root->attributes.size(), 1u);
  EXPECT_EQ(root->attributes[0].first, "version");
  EXPECT_EQ(root->attributes[0].second, "1");
  ASSERT_EQ(root->children.size(), 1u);
  const XmlElement& module = root->children[0];
  EXPECT_EQ(module.line, 4);
  ASSERT_EQ(module.children.size(), 3u);
  EXPECT_EQ(module.children[0].name, "name");
  EXPECT_EQ(module.children[0].text, "a & b <AB>");
  EXPECT_EQ(module.children[0].line, 5);
  EXPECT_EQ(module.children[1].text, "x<y>.dag");
  EXPECT_EQ(module.children[1].line, 7);
  EXPECT_EQ(module.children[2].name, "empty");
  EXPECT_EQ(module.children[2].line, 8);
  EXPECT_TRUE(module.children[2].children.empty());
}

// Each malformed input: the error names the file, the line and what.
struct BadXml {
  const char* text;
  const char* expected;  // a substring of the message
};

class XmlErrorTest : public testing::TestWithParam<BadXml> {};

TEST_P(XmlErrorTest, NamesFileLineAndWhat) {
  absl::StatusOr<XmlElement> root = ParseXml(GetParam().text, "bad.launch");
  ASSERT_FALSE(root.ok()) << GetParam().text;
  EXPECT_EQ(root.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(root.status().message()).find(GetParam().expected), std::string::npos)
      << root.status();
}

INSTANTIATE_TEST_SUITE_P(
    Errors, XmlErrorTest,
    testing::Values(
        BadXml{"", "bad.launch:1: no element: the file is empty"},
        BadXml{"<cyber>\n<module>\n</cyber>", "bad.launch:3: </cyber> closes <module> opened on line 2"},
        BadXml{"<cyber>\n<module>\n", "bad.launch:2: <module> is not closed"},
        BadXml{"<cyber>\n\n<name>a & b</name></cyber>", "bad.launch:3: '&' not followed"},
        BadXml{"<cyber>&nbsp;</cyber>", "bad.launch:1: unknown entity \"&nbsp;\""},
        BadXml{"<cyber>&#0;</cyber>", "character reference \"&#0;\""},
        BadXml{"<cyber a=1/>", "the value of attribute \"a\" of <cyber> is not quoted"},
        BadXml{"<cyber a='1' a='2'/>", "attribute \"a\" given twice"},
        BadXml{"<cyber a/>", "attribute \"a\" of <cyber> has no '='"},
        BadXml{"<cyber/>\n<more/>", "bad.launch:2: more after the root element <cyber>"},
        BadXml{"hello <cyber/>", "text \"hello \" outside the root element"},
        BadXml{"<!DOCTYPE x><cyber/>", "DTD or processing instruction"},
        BadXml{"<cyber>\n<!-- open\n</cyber>", "bad.launch:2: comment \"<!--\" is not closed"},
        BadXml{"<cyber><![CDATA[x</cyber>", "CDATA section is not closed"},
        BadXml{"<cyber>< module/></cyber>", "expected an element name after '<', found ' '"},
        BadXml{"<cyber></cyber >x", "more after the root element"}));

}  // namespace
}  // namespace launch
}  // namespace cyber
