#include "tests/accuracy/json_writer.h"

#include <limits>

#include "gtest/gtest.h"

namespace cyber {
namespace accuracy {
namespace {

TEST(JsonWriterTest, NestedObjectsAndArrays) {
  JsonWriter w;
  w.String("name", "a \"b\"\n");
  w.BeginObject("o");
  w.Integer("i", -3);
  w.Number("x", 1.5);
  w.Number("nan", std::numeric_limits<double>::quiet_NaN());
  w.EndObject();
  w.BeginArray("a");
  w.Bool("ignored", true);
  w.Null("");
  w.EndArray();
  w.BeginArray("empty");
  w.EndArray();
  EXPECT_EQ(w.Finish(),
            "{\n"
            "  \"name\": \"a \\\"b\\\"\\n\",\n"
            "  \"o\": {\n"
            "    \"i\": -3,\n"
            "    \"x\": 1.5,\n"
            "    \"nan\": null\n"
            "  },\n"
            "  \"a\": [\n"
            "    true,\n"
            "    null\n"
            "  ],\n"
            "  \"empty\": []\n"
            "}\n");
}

TEST(JsonWriterTest, QuotesControlCharacters) {
  EXPECT_EQ(JsonQuote(std::string("a\x01") + "\\"), "\"a\\u0001\\\\\"");
}

}  // namespace
}  // namespace accuracy
}  // namespace cyber
