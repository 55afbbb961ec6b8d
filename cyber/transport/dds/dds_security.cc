#include "cyber/transport/dds/dds_security.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace cyber {
namespace dds {
namespace {

enum class Kind { kCertificate, kPrivateKey, kSigned };

struct Expected {
  const char* name;
  const char* what;  // for messages
  Kind kind;
  std::string DdsSecurityFiles::*field;
};

constexpr size_t kMaxFileBytes = 1 << 20;  // these files are a few KiB

const Expected kFiles[] = {
    {"identity_ca.cert.pem", "the CA of every participant's certificate, PEM",
     Kind::kCertificate, &DdsSecurityFiles::identity_ca},
    {"cert.pem", "this process's certificate, PEM", Kind::kCertificate,
     &DdsSecurityFiles::certificate},
    {"key.pem", "this process's private key, PEM", Kind::kPrivateKey,
     &DdsSecurityFiles::private_key},
    {"permissions_ca.cert.pem", "the CA that signed governance and permissions, PEM",
     Kind::kCertificate, &DdsSecurityFiles::permissions_ca},
    {"governance.p7s", "the domain's rules, S/MIME signed", Kind::kSigned,
     &DdsSecurityFiles::governance},
    {"permissions.p7s", "this process's rights, S/MIME signed", Kind::kSigned,
     &DdsSecurityFiles::permissions},
};

bool OfKind(const std::string& text, Kind kind) {
  switch (kind) {
    case Kind::kCertificate:
      return absl::StrContains(text, "-----BEGIN CERTIFICATE-----");
    case Kind::kPrivateKey:
      return absl::StrContains(text, "-----BEGIN ") && absl::StrContains(text, "PRIVATE KEY-----");
    case Kind::kSigned:
      return absl::StrContains(text, "MIME-Version:") ||
             absl::StrContains(text, "-----BEGIN PKCS7-----");
  }
  return false;
}

}  // namespace

absl::StatusOr<DdsSecurityFiles> DdsSecurityFilesIn(absl::string_view dir,
                                                    absl::string_view source) {
  const std::string where = absl::StrCat(source, ": \"", dir, "\"");
  if (dir.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        source, ": empty (a directory made by tools/make_security_set.sh)"));
  }
  char resolved[PATH_MAX] = {};
  struct stat st {};
  const std::string dir_string(dir);
  if (realpath(dir_string.c_str(), resolved) == nullptr || stat(resolved, &st) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": no such directory (", std::strerror(errno), ")"));
  }
  if (!S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": not a directory"));
  }
  DdsSecurityFiles files;
  for (const Expected& e : kFiles) {
    const std::string path = absl::StrCat(resolved, "/", e.name);
    const std::string named = absl::StrCat(where, ": file \"", e.name, "\" (", e.what, ")");
    if (stat(path.c_str(), &st) != 0) {
      return absl::InvalidArgumentError(absl::StrCat(named, " is missing"));
    }
    if (!S_ISREG(st.st_mode) || st.st_size == 0 ||
        static_cast<size_t>(st.st_size) > kMaxFileBytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          named, " is not a file of 1 byte to 1 MiB (", st.st_size, " bytes)"));
    }
    std::ifstream in(path, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) {
      return absl::InvalidArgumentError(absl::StrCat(named, " cannot be read"));
    }
    if (!OfKind(text, e.kind)) {
      return absl::InvalidArgumentError(absl::StrCat(
          named, " is not of that kind (no ",
          e.kind == Kind::kSigned ? "S/MIME or PKCS7" : "PEM", " content in it)"));
    }
    files.*e.field = path;
  }
  return files;
}

std::vector<std::pair<std::string, std::string>> DdsSecurityProperties(
    const DdsSecurityFiles& files) {
  const std::string auth = "dds.sec.auth.builtin.PKI-DH.";
  const std::string access = "dds.sec.access.builtin.Access-Permissions.";
  return {
      {"dds.sec.auth.plugin", "builtin.PKI-DH"},
      {auth + "identity_ca", "file://" + files.identity_ca},
      {auth + "identity_certificate", "file://" + files.certificate},
      {auth + "private_key", "file://" + files.private_key},
      {"dds.sec.access.plugin", "builtin.Access-Permissions"},
      {access + "permissions_ca", "file://" + files.permissions_ca},
      {access + "governance", "file://" + files.governance},
      {access + "permissions", "file://" + files.permissions},
      {"dds.sec.crypto.plugin", "builtin.AES-GCM-GMAC"},
  };
}

}  // namespace dds
}  // namespace cyber
