// The Cyber RT spellings a ported component uses on its base and node:
// node_ (a protected member), node_->CreateWriter/CreateReader returning
// std::shared_ptr (nullptr plus an AERROR on failure), GetProtoConfig.

#include <atomic>
#include <fstream>
#include <memory>
#include <string>

#include "cyber/common/test_waits.h"
#include "cyber/component/timer_component.h"
#include "google/protobuf/duration.pb.h"
#include "gtest/gtest.h"
#include "scheduler/config/scheduler_config.h"
#include "scheduler/scheduler.h"

namespace cyber {
namespace {

// A component as Cyber RT code writes one, set up by hand (no graph).
class PortedComponent : public TimerComponent {
 public:
  bool Init() override { return true; }
  bool Proc() override { return true; }
  using ComponentBase::SetUp;
  std::shared_ptr<Node>& cyber_node() { return node_; }  // the member itself
};

class ComponentCyberApiTest : public ::testing::Test {
 protected:
  ComponentCyberApiTest() : runtime_(Options()) {
    context_.runtime = &runtime_;
  }
  ~ComponentCyberApiTest() override {
    component_.Shutdown();
    runtime_.Shutdown();
  }
  static Runtime::Options Options() {
    Runtime::Options o;
    o.name = "compat";
    o.config = scheduler::DefaultSchedulerConfig(1);
    return o;
  }
  std::string Write(const std::string& name, const std::string& content) {
    const std::string path = std::string(getenv("TEST_TMPDIR")) + "/" + name;
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }
  absl::Status SetUpComponent(const std::string& config_path) {
    return component_.SetUp("PortedComponent", "ported", config_path, "", context_);
  }

  Runtime runtime_;
  scheduler::Scheduler& sched_ = *runtime_.scheduler();
  ChannelBus& bus_ = *runtime_.bus();
  ComponentContext context_;
  PortedComponent component_;
};

TEST_F(ComponentCyberApiTest, NodeIsTheProtectedMemberAndCreatesWritersAndReaders) {
  ASSERT_TRUE(SetUpComponent("").ok());
  std::shared_ptr<Node>& node = component_.cyber_node();
  ASSERT_NE(node, nullptr);
  EXPECT_EQ(node, component_.node());
  std::atomic<int> sum{0};
  auto reader = node->CreateReader<int>(
      "/numbers", [&](const std::shared_ptr<int>& n) { sum += *n; });
  ASSERT_NE(reader, nullptr);
  auto writer = node->CreateWriter<int>("/numbers");
  ASSERT_NE(writer, nullptr);
  // (One at a time: the default pending queue keeps only the newest.)
  EXPECT_TRUE(writer->Write(3));
  EXPECT_TRUE(test::Eventually([&] { return sum.load() == 3; }));
  EXPECT_TRUE(writer->Write(4));
  EXPECT_TRUE(test::Eventually([&] { return sum.load() == 7; }));
  ReaderConfig config;
  config.channel_name = "/numbers";
  config.pending_queue_size = 4;
  EXPECT_NE(node->CreateReader<int>(config, [](const std::shared_ptr<int>&) {}), nullptr);
}

TEST_F(ComponentCyberApiTest, FailuresAreNullptrNotCrashes) {
  ASSERT_TRUE(SetUpComponent("").ok());
  std::shared_ptr<Node>& node = component_.cyber_node();
  EXPECT_EQ(node->CreateWriter<int>(""), nullptr);  // empty channel
  ASSERT_NE(node->CreateWriter<int>("/typed"), nullptr);
  EXPECT_EQ(node->CreateWriter<double>("/typed"), nullptr);  // another type
  EXPECT_EQ(node->CreateReader<double>("/typed", [](const std::shared_ptr<double>&) {}),
            nullptr);
  // Cyber's polling reader (no callback) is not supported: said, not crashed.
  EXPECT_EQ(node->CreateReader<int>("/typed", nullptr), nullptr);
  ReaderConfig zero;
  zero.channel_name = "/typed";
  zero.pending_queue_size = 0;
  EXPECT_EQ(node->CreateReader<int>(zero, [](const std::shared_ptr<int>&) {}), nullptr);
  node->Shutdown();
  EXPECT_EQ(node->CreateWriter<int>("/typed"), nullptr);  // shut down
  // The Status forms say why.
  auto why = node->TryCreateWriter<int>("/typed");
  ASSERT_FALSE(why.ok());
  EXPECT_NE(why.status().message().find("node \"ported\""), std::string::npos);
  EXPECT_NE(why.status().message().find("shut down"), std::string::npos);
}

TEST_F(ComponentCyberApiTest, GetProtoConfigReadsTextFormat) {
  ASSERT_TRUE(SetUpComponent(Write("ok.pb.txt", "seconds: 5\nnanos: 7\n")).ok());
  google::protobuf::Duration config;
  ASSERT_TRUE(component_.GetProtoConfig(&config));
  EXPECT_EQ(config.seconds(), 5);
  EXPECT_EQ(config.nanos(), 7);
}

TEST_F(ComponentCyberApiTest, GetProtoConfigReadsTheBinaryFormatFromADotBinFile) {
  google::protobuf::Duration written;
  written.set_seconds(9);
  ASSERT_TRUE(SetUpComponent(Write("conf.bin", written.SerializeAsString())).ok());
  google::protobuf::Duration config;
  ASSERT_TRUE(component_.GetProtoConfig(&config));
  EXPECT_EQ(config.seconds(), 9);
}

TEST_F(ComponentCyberApiTest, NoConfigFileIsAFailedPreconditionNamingTheComponent) {
  ASSERT_TRUE(SetUpComponent("").ok());
  google::protobuf::Duration config;
  EXPECT_FALSE(component_.GetProtoConfig(&config));
  const absl::Status s = component_.ReadProtoConfig(&config);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(),
            "component \"ported\": GetProtoConfig(google.protobuf.Duration): its graph "
            "entry has no config_file_path");
}

TEST_F(ComponentCyberApiTest, AMissingFileIsNotFoundNamingThePath) {
  ASSERT_TRUE(SetUpComponent("/nonexistent/conf.pb.txt").ok());
  google::protobuf::Duration config;
  EXPECT_FALSE(component_.GetProtoConfig(&config));
  const absl::Status s = component_.ReadProtoConfig(&config);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_NE(s.message().find("\"/nonexistent/conf.pb.txt\" could not be read"),
            std::string::npos)
      << s;
}

TEST_F(ComponentCyberApiTest, BadTextIsInvalidArgumentWithFileLineAndColumn) {
  const std::string path = Write("bad.pb.txt", "seconds: 5\nnanoz: 7\n");
  ASSERT_TRUE(SetUpComponent(path).ok());
  google::protobuf::Duration config;
  EXPECT_FALSE(component_.GetProtoConfig(&config));
  const absl::Status s = component_.ReadProtoConfig(&config);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("component \"ported\": config of type google.protobuf.Duration: " +
                             path + ":2:"),
            std::string::npos)
      << s;
  EXPECT_NE(s.message().find("nanoz"), std::string::npos) << s;
}

TEST_F(ComponentCyberApiTest, ABadBinaryFileIsInvalidArgument) {
  ASSERT_TRUE(SetUpComponent(Write("junk.bin", "\xff\xff\xff")).ok());
  google::protobuf::Duration config;
  const absl::Status s = component_.ReadProtoConfig(&config);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("is not a binary google.protobuf.Duration message"),
            std::string::npos)
      << s;
}

}  // namespace
}  // namespace cyber
