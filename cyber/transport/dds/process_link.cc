// Links the process runtime to other processes over DDS: a static
// initializer registers, before main, the maker that gives every process
// runtime (cyber/runtime/process_runtime.h) a DdsTransport, from Cyber RT's
// CYBER_DOMAIN_ID and CYBER_IP, CYBER_DISCOVERY_SERVER and the flags below.
// Linked (alwayslink) by //cyber/init and mainboard, and by any program that
// wants its channels to reach other processes; a program that does not link
// it stays in-process and does not load Fast-DDS. So every program that can
// join the domain takes --security.
//
// --security=DIR is checked when the flags are parsed (a gflags
// validator): a missing directory or file, or one of the wrong kind, is
// named on stderr (flag, directory, file) and the program exits at once,
// before it starts anything; a process that was asked to be secure never
// runs insecure, nor silently alone.

#include <errno.h>  // program_invocation_short_name

#include <cstdio>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "cyber/common/log.h"
#include "cyber/runtime/process_runtime.h"
#include "cyber/transport/dds/dds_security.h"
#include "cyber/transport/dds/dds_transport.h"
#include "gflags/gflags.h"

DEFINE_bool(in_process_only, false,
            "keep every channel inside this process: no DDS participant, nothing "
            "on the network or in /dev/shm (default: protobuf channels also reach "
            "the other processes of the DDS domain, CYBER_DOMAIN_ID)");
DEFINE_string(dds_profile_file, "",
              "a Fast-DDS XML profile file whose default participant profile the "
              "transport starts from (e.g. DDS Security's properties); empty: no "
              "profile file is read at all");

DEFINE_string(process_name, "",
              "how this process is named to the other processes of the domain and "
              "to the tools (cyber_channel info, cyber_monitor, ...): e.g. the launch "
              "file's process_name; empty: the program's name");

DEFINE_string(security, "",
              "DDS Security: a directory with this process's identity, its CAs, the "
              "domain's governance and its permissions (identity_ca.cert.pem, cert.pem, "
              "key.pem, permissions_ca.cert.pem, governance.p7s, permissions.p7s; "
              "tools/make_security_set.sh makes one per process); empty: off");

namespace cyber {
namespace dds {
namespace {

bool ValidSecurityDir(const char* /*flag*/, const std::string& dir) {
  if (dir.empty()) return true;
  absl::StatusOr<DdsSecurityFiles> files = DdsSecurityFilesIn(dir, "flag --security");
  if (!files.ok()) std::fprintf(stderr, "%s\n", std::string(files.status().message()).c_str());
  return files.ok();
}

const bool g_security_validator = gflags::RegisterFlagValidator(&FLAGS_security,
                                                                &ValidSecurityDir);

// The DDS transport (started by the first protobuf channel), unless
// --in_process_only. A malformed CYBER_DOMAIN_ID or CYBER_IP is reported
// and the process stays in-process: it runs, and says why it is alone.
std::shared_ptr<RemoteTransport> MakeFromFlags() {
  if (FLAGS_in_process_only) return nullptr;
  absl::StatusOr<DdsTransportOptions> options =
      DdsTransportOptionsFromEnvironment(
          FLAGS_process_name.empty() ? program_invocation_short_name : FLAGS_process_name);
  if (!options.ok()) {
    AERROR << options.status().message()
           << "; channels stay inside this process";
    return nullptr;
  }
  options->profile_file = FLAGS_dds_profile_file;
  options->security_dir = FLAGS_security;
  options->announces_graph = true;  // cyber::Init announces the process's graph on it
  return std::make_shared<DdsTransport>(*std::move(options));
}

const bool g_registered = [] {
  SetProcessRemoteMaker(&MakeFromFlags);
  return true;
}();

}  // namespace
}  // namespace dds
}  // namespace cyber
