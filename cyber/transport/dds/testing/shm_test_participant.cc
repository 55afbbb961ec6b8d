#include "cyber/transport/dds/testing/shm_test_participant.h"

#include <fastcdr/Cdr.h>
#include <fastcdr/FastBuffer.h>
#include <fastdds/rtps/transport/shared_mem/SharedMemTransportDescriptor.h>

#include <fastdds/dds/domain/DomainParticipant.hpp>
#include <fastdds/dds/domain/DomainParticipantFactory.hpp>
#include <fastdds/dds/domain/qos/DomainParticipantQos.hpp>
#include <fastdds/dds/publisher/DataWriter.hpp>
#include <fastdds/dds/publisher/Publisher.hpp>
#include <fastdds/dds/topic/Topic.hpp>
#include <fastdds/dds/topic/TopicDataType.hpp>
#include <fastdds/dds/topic/TypeSupport.hpp>
#include <utility>

#include "absl/strings/str_cat.h"

namespace cyber {
namespace dds {
namespace {

namespace fdds = eprosima::fastdds::dds;
using eprosima::fastrtps::rtps::InstanceHandle_t;
using eprosima::fastrtps::rtps::SerializedPayload_t;

constexpr char kTypeName[] = "cyber_shm_test_text";
constexpr char kTopicName[] = "cyber_shm_test";
constexpr uint32_t kMaxText = 256;

// A CDR string. Not plain (is_plain() stays false): no data sharing.
class TextType : public fdds::TopicDataType {
 public:
  TextType() {
    setName(kTypeName);
    m_typeSize = 4 /* encapsulation */ + 4 /* length */ + kMaxText + 1;
    m_isGetKeyDefined = false;
  }

  bool serialize(void* data, SerializedPayload_t* payload) override {
    eprosima::fastcdr::FastBuffer buffer(reinterpret_cast<char*>(payload->data),
                                         payload->max_size);
    eprosima::fastcdr::Cdr cdr(buffer, eprosima::fastcdr::Cdr::DEFAULT_ENDIAN,
                               eprosima::fastcdr::Cdr::DDS_CDR);
    payload->encapsulation =
        cdr.endianness() == eprosima::fastcdr::Cdr::BIG_ENDIANNESS ? CDR_BE
                                                                   : CDR_LE;
    try {
      cdr.serialize_encapsulation();
      cdr << *static_cast<std::string*>(data);
    } catch (const eprosima::fastcdr::exception::Exception&) {
      return false;
    }
    payload->length = static_cast<uint32_t>(cdr.getSerializedDataLength());
    return true;
  }

  bool deserialize(SerializedPayload_t* payload, void* data) override {
    eprosima::fastcdr::FastBuffer buffer(reinterpret_cast<char*>(payload->data),
                                         payload->length);
    eprosima::fastcdr::Cdr cdr(buffer, eprosima::fastcdr::Cdr::DEFAULT_ENDIAN,
                               eprosima::fastcdr::Cdr::DDS_CDR);
    try {
      cdr.read_encapsulation();
      cdr >> *static_cast<std::string*>(data);
    } catch (const eprosima::fastcdr::exception::Exception&) {
      return false;
    }
    return true;
  }

  std::function<uint32_t()> getSerializedSizeProvider(void* data) override {
    const auto size = static_cast<uint32_t>(
        4 + 4 + static_cast<std::string*>(data)->size() + 1);
    return [size] { return size; };
  }

  void* createData() override { return new std::string(); }
  void deleteData(void* data) override {
    delete static_cast<std::string*>(data);
  }
  bool getKey(void*, InstanceHandle_t*, bool) override { return false; }
};

}  // namespace

struct ShmTestParticipant::Entities {
  fdds::DomainParticipant* participant = nullptr;
  fdds::DataWriter* writer = nullptr;
};

absl::StatusOr<std::unique_ptr<ShmTestParticipant>> ShmTestParticipant::Create(
    int domain) {
  fdds::DomainParticipantQos qos;
  qos.transport().use_builtin_transports = false;
  qos.transport().user_transports.push_back(
      std::make_shared<
          eprosima::fastdds::rtps::SharedMemTransportDescriptor>());
  auto entities = std::make_unique<Entities>();
  entities->participant =
      fdds::DomainParticipantFactory::get_instance()->create_participant(
          static_cast<fdds::DomainId_t>(domain), qos);
  if (entities->participant == nullptr) {
    return absl::InternalError(absl::StrCat(
        "Fast-DDS refused a shared-memory participant in domain ", domain));
  }
  // From here on the destructor deletes what exists.
  std::unique_ptr<ShmTestParticipant> result(
      new ShmTestParticipant(std::move(entities)));
  fdds::DomainParticipant* participant = result->entities_->participant;
  fdds::TypeSupport type(new TextType());
  if (type.register_type(participant) != ReturnCode_t::RETCODE_OK) {
    return absl::InternalError(absl::StrCat("register_type ", kTypeName));
  }
  fdds::Topic* topic =
      participant->create_topic(kTopicName, kTypeName, fdds::TOPIC_QOS_DEFAULT);
  fdds::Publisher* publisher =
      topic == nullptr
          ? nullptr
          : participant->create_publisher(fdds::PUBLISHER_QOS_DEFAULT);
  result->entities_->writer =
      publisher == nullptr
          ? nullptr
          : publisher->create_datawriter(topic, fdds::DATAWRITER_QOS_DEFAULT);
  if (result->entities_->writer == nullptr) {
    return absl::InternalError(absl::StrCat("creating the writer of topic ",
                                            kTopicName, " in domain ", domain));
  }
  return result;
}

ShmTestParticipant::ShmTestParticipant(std::unique_ptr<Entities> entities)
    : entities_(std::move(entities)) {}

ShmTestParticipant::~ShmTestParticipant() {
  entities_->participant->delete_contained_entities();
  fdds::DomainParticipantFactory::get_instance()->delete_participant(
      entities_->participant);
}

absl::Status ShmTestParticipant::Publish(const std::string& text) {
  if (text.size() > kMaxText) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sample of ", text.size(), " characters; the type holds ", kMaxText));
  }
  std::string sample = text;
  if (!entities_->writer->write(&sample)) {
    return absl::InternalError(absl::StrCat("write on topic ", kTopicName));
  }
  return absl::OkStatus();
}

}  // namespace dds
}  // namespace cyber
