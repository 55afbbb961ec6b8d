#include "cyber/transport/remote_transport.h"

#include "absl/strings/str_cat.h"

namespace cyber {

std::string RemotePeer::ToString() const {
  return absl::StrCat(process, " (host ", host, ", pid ", pid, ")");
}

}  // namespace cyber
