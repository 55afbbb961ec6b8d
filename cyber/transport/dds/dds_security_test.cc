// DdsSecurityFilesIn: a directory of a robot's key set is taken, and each
// way it can be wrong is named (source, directory, file). Whether Fast-DDS
// accepts the files' contents is the multi-host harness's business
// (tools/hosts/scenarios.sh, the security scenarios).

#include "cyber/transport/dds/dds_security.h"

#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace cyber {
namespace dds {
namespace {

constexpr char kCert[] = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
constexpr char kKey[] = "-----BEGIN PRIVATE KEY-----\nMIGH\n-----END PRIVATE KEY-----\n";
constexpr char kSigned[] =
    "MIME-Version: 1.0\nContent-Type: multipart/signed; protocol=\"application/x-pkcs7-signature\"\n";

class SecurityDir : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = getenv("TEST_TMPDIR");
    std::string pattern = std::string(tmp != nullptr ? tmp : "/tmp") + "/security.XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    Write("identity_ca.cert.pem", kCert);
    Write("cert.pem", kCert);
    Write("key.pem", kKey);
    Write("permissions_ca.cert.pem", kCert);
    Write("governance.p7s", kSigned);
    Write("permissions.p7s", kSigned);
  }
  void TearDown() override {
    for (const char* f : {"identity_ca.cert.pem", "cert.pem", "key.pem",
                          "permissions_ca.cert.pem", "governance.p7s", "permissions.p7s"}) {
      unlink((dir_ + "/" + f).c_str());
    }
    rmdir(dir_.c_str());
  }
  void Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ + "/" + name) << text;
  }
  std::string Error() {
    auto files = DdsSecurityFilesIn(dir_, "flag --security");
    EXPECT_FALSE(files.ok());
    return files.ok() ? "" : std::string(files.status().message());
  }

  std::string dir_;
};

TEST_F(SecurityDir, ACompleteDirectoryGivesFastDdsItsProperties) {
  auto files = DdsSecurityFilesIn(dir_, "flag --security");
  ASSERT_TRUE(files.ok()) << files.status();
  std::map<std::string, std::string> p;
  for (const auto& kv : DdsSecurityProperties(*files)) p[kv.first] = kv.second;
  EXPECT_EQ(p["dds.sec.auth.plugin"], "builtin.PKI-DH");
  EXPECT_EQ(p["dds.sec.access.plugin"], "builtin.Access-Permissions");
  EXPECT_EQ(p["dds.sec.crypto.plugin"], "builtin.AES-GCM-GMAC");
  EXPECT_EQ(p["dds.sec.auth.builtin.PKI-DH.identity_ca"], "file://" + files->identity_ca);
  EXPECT_EQ(p["dds.sec.auth.builtin.PKI-DH.identity_certificate"], "file://" + files->certificate);
  EXPECT_EQ(p["dds.sec.auth.builtin.PKI-DH.private_key"], "file://" + files->private_key);
  EXPECT_EQ(p["dds.sec.access.builtin.Access-Permissions.permissions_ca"],
            "file://" + files->permissions_ca);
  EXPECT_EQ(p["dds.sec.access.builtin.Access-Permissions.governance"],
            "file://" + files->governance);
  EXPECT_EQ(p["dds.sec.access.builtin.Access-Permissions.permissions"],
            "file://" + files->permissions);
  EXPECT_TRUE(absl::EndsWith(files->permissions, "/permissions.p7s")) << files->permissions;
  EXPECT_EQ(files->permissions[0], '/');
}

TEST_F(SecurityDir, AMissingDirectoryIsNamed) {
  const std::string message = [&] {
    auto files = DdsSecurityFilesIn(dir_ + "/nope", "flag --security");
    EXPECT_FALSE(files.ok());
    return files.ok() ? "" : std::string(files.status().message());
  }();
  EXPECT_TRUE(absl::StrContains(message, "flag --security")) << message;
  EXPECT_TRUE(absl::StrContains(message, dir_ + "/nope")) << message;
  EXPECT_TRUE(absl::StrContains(message, "no such directory")) << message;
}

TEST_F(SecurityDir, AnEmptyValueIsNamed) {
  auto files = DdsSecurityFilesIn("", "flag --security");
  ASSERT_FALSE(files.ok());
  EXPECT_TRUE(absl::StrContains(files.status().message(), "flag --security")) << files.status();
}

TEST_F(SecurityDir, AMissingFileIsNamed) {
  unlink((dir_ + "/permissions.p7s").c_str());
  const std::string message = Error();
  EXPECT_TRUE(absl::StrContains(message, "flag --security: \"" + dir_ + "\"")) << message;
  EXPECT_TRUE(absl::StrContains(message, "file \"permissions.p7s\"")) << message;
  EXPECT_TRUE(absl::StrContains(message, "is missing")) << message;
}

TEST_F(SecurityDir, AnEmptyFileIsNamed) {
  Write("key.pem", "");
  const std::string message = Error();
  EXPECT_TRUE(absl::StrContains(message, "file \"key.pem\"")) << message;
  EXPECT_TRUE(absl::StrContains(message, "0 bytes")) << message;
}

TEST_F(SecurityDir, AFileOfTheWrongKindIsNamed) {
  // An unsigned governance (the XML itself) is the usual slip.
  Write("governance.p7s", "<?xml version=\"1.0\"?><dds/>");
  std::string message = Error();
  EXPECT_TRUE(absl::StrContains(message, "file \"governance.p7s\"")) << message;
  EXPECT_TRUE(absl::StrContains(message, "S/MIME")) << message;
  SetUp();
  Write("cert.pem", kKey);
  message = Error();
  EXPECT_TRUE(absl::StrContains(message, "file \"cert.pem\"")) << message;
}

}  // namespace
}  // namespace dds
}  // namespace cyber
