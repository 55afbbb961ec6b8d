#include "cyber/graph/descriptors.h"

#include <string>
#include <vector>

#include "cyber/transport/dds/testing/test_messages.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cyber {
namespace graph {
namespace {

namespace pb = google::protobuf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(DescriptorSetOfTest, HoldsTheFileAndLoadsIntoAFreshPool) {
  const pb::FileDescriptorSet set = DescriptorSetOf(dds_test::Ping::descriptor());
  ASSERT_EQ(set.file_size(), 1);
  EXPECT_EQ(set.file(0).name(), dds_test::Ping::descriptor()->file()->name());

  DescriptorLibrary library;
  absl::StatusOr<const pb::Descriptor*> ping = library.Load(set, "cyber.dds_test.Ping");
  ASSERT_TRUE(ping.ok()) << ping.status();
  EXPECT_NE(*ping, dds_test::Ping::descriptor());  // its own pool, not the generated one
  EXPECT_THAT(TypeDifferences(*ping, "a", dds_test::Ping::descriptor(), "b"), IsEmpty());

  // A message of the loaded type reads what the compiled type wrote.
  dds_test::Ping sent;
  sent.set_seq(42);
  sent.set_body("x");
  std::unique_ptr<pb::Message> got(library.Prototype(*ping)->New());
  ASSERT_TRUE(got->ParseFromString(sent.SerializeAsString()));
  EXPECT_THAT(got->ShortDebugString(), HasSubstr("seq: 42"));
}

TEST(DescriptorLibraryTest, RefusesASetWithoutTheTypeOrWithABrokenFile) {
  DescriptorLibrary library;
  const pb::FileDescriptorSet set = DescriptorSetOf(dds_test::Ping::descriptor());
  absl::StatusOr<const pb::Descriptor*> missing = library.Load(set, "cyber.dds_test.Nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("cyber.dds_test.Nope"));

  pb::FileDescriptorSet broken = set;
  broken.mutable_file(0)->add_dependency("not/there.proto");
  absl::StatusOr<const pb::Descriptor*> bad = library.Load(broken, "cyber.dds_test.Ping");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("does not build"));
}

// Another version of Ping: seq's type changes, body goes, a field is added.
const pb::Descriptor* PingV2(pb::DescriptorPool* pool) {
  pb::FileDescriptorProto file;
  dds_test::Ping::descriptor()->file()->CopyTo(&file);
  pb::DescriptorProto* ping = file.mutable_message_type(0);
  EXPECT_EQ(ping->name(), "Ping");
  ping->mutable_field(0)->set_type(pb::FieldDescriptorProto::TYPE_INT32);
  ping->mutable_field()->erase(ping->mutable_field()->begin() + 1);  // body
  pb::FieldDescriptorProto* extra = ping->add_field();
  extra->set_name("frame");
  extra->set_number(7);
  extra->set_type(pb::FieldDescriptorProto::TYPE_STRING);
  extra->set_label(pb::FieldDescriptorProto::LABEL_OPTIONAL);
  const pb::FileDescriptor* built = pool->BuildFile(file);
  EXPECT_NE(built, nullptr);
  return built == nullptr ? nullptr : built->FindMessageTypeByName("Ping");
}

TEST(TypeDifferencesTest, NamesEachFieldThatDiffers) {
  pb::DescriptorPool pool;
  const pb::Descriptor* v2 = PingV2(&pool);
  ASSERT_NE(v2, nullptr);
  EXPECT_THAT(TypeDifferences(dds_test::Ping::descriptor(), "writer", v2, "reader"),
              ElementsAre("field 1 of cyber.dds_test.Ping: seq (uint64) in writer's, "
                          "seq (int32) in reader's",
                          "field 2 of cyber.dds_test.Ping: only in writer's: body (bytes)",
                          "field 7 of cyber.dds_test.Ping: only in reader's: frame (string)"));
}

TEST(TypeDifferencesTest, NamesTwoDifferentTypes) {
  const std::vector<std::string> diff =
      TypeDifferences(dds_test::Ping::descriptor(), "a", dds_test::Telemetry::descriptor(), "b");
  ASSERT_FALSE(diff.empty());
  EXPECT_EQ(diff[0], "type cyber.dds_test.Ping in a's, cyber.dds_test.Telemetry in b's");
}

}  // namespace
}  // namespace graph
}  // namespace cyber
