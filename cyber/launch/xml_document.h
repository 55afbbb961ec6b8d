// XmlElement, ParseXml: the small part of XML that launch files use —
// elements, attributes, text, comments, CDATA, the <?xml ...?> declaration
// and the five predefined entities (&amp; &lt; &gt; &quot; &apos;) plus
// numeric character references — parsed into a tree where every element
// knows the line it starts on, so a launch file's errors can say
// "sensor.launch:12: <respawn_limit> ...".
//
// Why not libxml2 or tinyxml2: a launch file is a dozen lines of plain
// elements; a 200-line reader keeps the launcher free of a system library
// the build would have to find, and its errors in our own words.
//
// Not supported (an error names the line): DTDs (<!DOCTYPE>), processing
// instructions other than the declaration, entities other than the above.
// Namespaces are kept as part of the name.
//
// Pure functions; no state; any thread.

#ifndef CYBER_LAUNCH_XML_DOCUMENT_H_
#define CYBER_LAUNCH_XML_DOCUMENT_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cyber {
namespace launch {

struct XmlElement {
  std::string name;
  int line = 0;  // 1-based line of its '<'
  std::vector<std::pair<std::string, std::string>> attributes;
  // The concatenated character data directly inside the element (entities
  // decoded), not that of its children.
  std::string text;
  std::vector<XmlElement> children;
};

// Parses `text`, naming `file` in errors: InvalidArgument
// "FILE:LINE: <what went wrong, with the offending name or character>".
// The result is the root element; text outside it may only be whitespace,
// comments and the declaration.
absl::StatusOr<XmlElement> ParseXml(absl::string_view text, absl::string_view file);

}  // namespace launch
}  // namespace cyber

#endif  // CYBER_LAUNCH_XML_DOCUMENT_H_
