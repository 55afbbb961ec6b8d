// DDS Security for one participant, from one directory.
//
// Why a directory and not a profile file: a process's security is six
// files that belong together (its identity, the CAs that vouch for it and
// for its rights, the rules of the domain and its own rights), and the
// robot's key set (tools/make_security_set.sh) makes one directory per
// process with exactly these names, so `--security=DIR` is all a process
// needs (the flag lives in process_link.cc, beside the other DDS flags).
// The names follow ROS 2's SROS2 "enclave" layout, so a set made by
// `ros2 security` reads the same way:
//
//   identity_ca.cert.pem     the CA that signs every participant's certificate
//   cert.pem                 this participant's certificate (X.509, PEM)
//   key.pem                  its private key (PEM)
//   permissions_ca.cert.pem  the CA that signed governance and permissions
//   governance.p7s           the domain's rules (S/MIME signed XML)
//   permissions.p7s          this participant's rights (S/MIME signed XML)
//
// Fast-DDS 2.9 (Debian's libfastrtps is built with security) takes them as
// participant properties (DdsSecurityProperties): authentication
// builtin.PKI-DH, access control builtin.Access-Permissions, encryption
// builtin.AES-GCM-GMAC. What the files say is checked by Fast-DDS when the
// participant is made (a certificate not signed by the CA, a permissions
// file whose signature does not verify: the participant is not made, and
// Fast-DDS logs why); what is checked here, before anything starts, is
// that each file is there, readable and of the right kind (PEM, S/MIME),
// so a typo in a path is named at once.
//
// Threads: plain functions, no state.

#ifndef CYBER_TRANSPORT_DDS_DDS_SECURITY_H_
#define CYBER_TRANSPORT_DDS_DDS_SECURITY_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cyber {
namespace dds {

// The absolute paths of one participant's security files.
struct DdsSecurityFiles {
  std::string identity_ca;
  std::string certificate;
  std::string private_key;
  std::string permissions_ca;
  std::string governance;
  std::string permissions;
};

// The files of `dir`, each checked. `source` says where `dir` came from,
// for the message ("flag --security"). InvalidArgument naming the source,
// the directory and the file for a missing directory, or a file that is
// missing, unreadable, empty or not of its kind, e.g.
//   flag --security: "/etc/robot/keys/planner": file "permissions.p7s"
//   (this process's rights, S/MIME signed) is missing
absl::StatusOr<DdsSecurityFiles> DdsSecurityFilesIn(absl::string_view dir,
                                                    absl::string_view source);

// The participant properties that turn Fast-DDS's security plugins on with
// `files` (name, value; file:// URIs, as Fast-DDS 2.9 reads them).
std::vector<std::pair<std::string, std::string>> DdsSecurityProperties(
    const DdsSecurityFiles& files);

}  // namespace dds
}  // namespace cyber

#endif  // CYBER_TRANSPORT_DDS_DDS_SECURITY_H_
