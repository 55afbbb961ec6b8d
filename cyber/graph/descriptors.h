// Message descriptors as they travel with the graph: a type's
// FileDescriptorSet (its file and every file it imports, dependencies
// first, as protoc's --include_imports writes it, which is what MCAP's
// `protobuf` schema encoding and Foxglove expect), a pool that loads such
// sets from many processes, and the fields in which two versions of one
// type differ — which makes "another message version" on a channel a
// precise error instead of bytes that parse into the wrong fields.
//
// Threads: free functions are pure; DescriptorLibrary is thread-safe.

#ifndef CYBER_GRAPH_DESCRIPTORS_H_
#define CYBER_GRAPH_DESCRIPTORS_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "cyber/common/mutex.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/descriptor.pb.h"
#include "google/protobuf/dynamic_message.h"

namespace cyber {
namespace graph {

// The file defining `type` and every file it imports, each once,
// dependencies before their dependents.
google::protobuf::FileDescriptorSet DescriptorSetOf(const google::protobuf::Descriptor* type);

// The differences between two versions of one message type (or two types
// used on one channel), one line each, by field number, nested message
// types included ("field 3 of sensor.Imu: yaw (double) vs yaw (float)",
// "field 5 of sensor.Imu: only in the writer's: z (int32)"). `a_name` and
// `b_name` say whose each side is. Empty when the two are compatible field
// for field (names, numbers, types, labels).
std::vector<std::string> TypeDifferences(const google::protobuf::Descriptor* a,
                                         const std::string& a_name,
                                         const google::protobuf::Descriptor* b,
                                         const std::string& b_name);

// Message types loaded from FileDescriptorSets received from many
// processes. Each announced set is kept in its own pool, keyed by the
// set's bytes, so two processes with different versions of one type both
// decode their own messages, and a bad set affects no other.
class DescriptorLibrary {
 public:
  DescriptorLibrary() = default;
  DescriptorLibrary(const DescriptorLibrary&) = delete;
  DescriptorLibrary& operator=(const DescriptorLibrary&) = delete;

  // Loads `set` (idempotent) and returns its `type_name`. InvalidArgument
  // when the set does not build (naming the file and protobuf's error) or
  // lacks the type. The descriptor lives as long as the library.
  absl::StatusOr<const google::protobuf::Descriptor*> Load(
      const google::protobuf::FileDescriptorSet& set, const std::string& type_name);
  // A prototype message of `type` (a descriptor from Load()).
  const google::protobuf::Message* Prototype(const google::protobuf::Descriptor* type);

 private:
  struct Pool {
    google::protobuf::DescriptorPool pool;
    std::unique_ptr<google::protobuf::DynamicMessageFactory> factory;
  };
  Mutex mu_;
  std::map<std::string, std::unique_ptr<Pool>> pools_ ABSL_GUARDED_BY(mu_);
  std::map<const google::protobuf::Descriptor*, Pool*> owner_ ABSL_GUARDED_BY(mu_);
};

}  // namespace graph
}  // namespace cyber

#endif  // CYBER_GRAPH_DESCRIPTORS_H_
