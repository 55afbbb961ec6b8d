// JsonWriter: just enough JSON output for the accuracy tool's summary file,
// indented so that a diff of two runs reads line by line.
//
// Why not a library: the project builds from Debian packages only and the
// summary needs objects, arrays, strings and numbers, nothing more. Keys are
// given for members of objects and ignored inside arrays. Non-finite numbers
// are written as null. Strings are escaped (quotes, backslash, control
// characters); bytes >= 0x80 pass through, so UTF-8 stays UTF-8.
//
// Not thread-safe.

#ifndef TESTS_ACCURACY_JSON_WRITER_H_
#define TESTS_ACCURACY_JSON_WRITER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cyber {
namespace accuracy {

class JsonWriter {
 public:
  JsonWriter();  // opens the top-level object

  void BeginObject(std::string_view key);
  void EndObject();
  void BeginArray(std::string_view key);
  void EndArray();

  void String(std::string_view key, std::string_view value);
  void Number(std::string_view key, double value);
  void Integer(std::string_view key, int64_t value);
  void Bool(std::string_view key, bool value);
  void Null(std::string_view key);

  // Closes what is still open and returns the text (ends with a newline).
  std::string Finish();

 private:
  struct Level {
    bool is_array = false;
    bool empty = true;
  };
  // Writes the separator, indentation and (in an object) the key.
  void Prefix(std::string_view key);
  void Close(char bracket);

  std::string out_;
  std::vector<Level> levels_;
};

std::string JsonQuote(std::string_view s);

}  // namespace accuracy
}  // namespace cyber

#endif  // TESTS_ACCURACY_JSON_WRITER_H_
