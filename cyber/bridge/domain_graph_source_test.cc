// The schema the bridge advertises: a type's file and every file it
// imports, dependencies first (as protobufjs and Foxglove load a
// FileDescriptorSet), each once. The source over a live domain is tested
// with Foxglove's client (cyber_bridge_foxglove_test).
#include "cyber/bridge/domain_graph_source.h"

#include "cyber/graph/graph.pb.h"
#include "google/protobuf/descriptor.pb.h"
#include "gtest/gtest.h"

namespace cyber {
namespace bridge {
namespace {

TEST(FileDescriptorSetOfTest, TheFileAndItsImportsDependenciesFirst) {
  google::protobuf::FileDescriptorSet set;
  ASSERT_TRUE(set.ParseFromString(FileDescriptorSetOf(*graph::ProcessGraph::descriptor())));
  ASSERT_EQ(set.file_size(), 2);
  EXPECT_EQ(set.file(0).name(), "google/protobuf/descriptor.proto");
  EXPECT_EQ(set.file(1).name(), "cyber/graph/graph.proto");
  bool found = false;
  for (const auto& m : set.file(1).message_type()) found |= m.name() == "ProcessGraph";
  EXPECT_TRUE(found);
}

TEST(FileDescriptorSetOfTest, AFileWithoutImportsIsAlone) {
  google::protobuf::FileDescriptorSet set;
  ASSERT_TRUE(set.ParseFromString(
      FileDescriptorSetOf(*google::protobuf::FileDescriptorProto::descriptor())));
  ASSERT_EQ(set.file_size(), 1);
  EXPECT_EQ(set.file(0).name(), "google/protobuf/descriptor.proto");
}

}  // namespace
}  // namespace bridge
}  // namespace cyber
