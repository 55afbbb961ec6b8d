// sample_frame_fuzzer: arbitrary bytes as a sample received from another
// process, through everything that touches them before a reader's callback.
//
// Why: a sample from the network or from shared memory is the one input a
// process takes from code it does not control — another version of the
// message, a crashed writer's half-written buffer, or a hostile host. The
// transport promises to drop what it cannot decode, count it and name the
// sender, never to read past the bytes, crash or stall the reader
// (cyber/transport/dds/sample_frame.h, dds_transport.h).
//
// Each input is:
//   1. deserialized by the DDS type (FrameTopicType::deserialize, as Fast-DDS
//      calls it with the received payload, encapsulation included), as
//      bytes, (1b) parsed where it lies, as for a reader that names its
//      prototype: parsed exactly when the bytes path would parse a message
//      frame, to the same message, and (1c) discarded (a sample of the
//      reader's own process): neither parsed nor copied;
//   2. decoded as a frame (DecodeFrame);
//   3. when it is a frame, its payload handed to a channel's inlet handler
//      (the one Channel<M>::RemoteInlet gives the transport: parse as the
//      channel's protobuf message, deliver to every local reader), on a
//      runtime without threads whose routines are then run.
// Checked:
//   - a decoded frame's payload lies inside the received bytes, its header
//     size at least kMinFrameHeaderSize, and re-encoding the header with the
//     payload decodes to the same header and payload;
//   - the handler accepts exactly what protobuf's own parser accepts, and an
//     accepted message reaches the reader's callback once, equal to it;
//   - nothing else reaches the callback;
//   - an accepted message, serialized by the DDS type straight into a
//     payload (the sending path), decodes to the same header and bytes.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "cyber/runtime/runtime.h"
#include "cyber/transport/dds/frame_topic_type.h"
#include "cyber/transport/dds/sample_frame.h"
#include "cyber/transport/dds/testing/test_messages.pb.h"
#include "cyber/node/node.h"
#include "cyber/transport/testing/fake_transport.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/quiet_logging.h"

namespace cyber {
namespace fuzz {
namespace {

using dds_test::Ping;

struct World {
  World() {
    QuietLogging();
    Runtime::Options o;
    o.name = "fuzz";
    o.run_threads = false;
    o.remote = transport;
    runtime = std::make_unique<Runtime>(std::move(o));
    node = std::make_unique<Node>("fuzz", runtime->scheduler(), runtime->bus());
    ReaderConfig config;
    config.channel_name = "/fuzz";
    config.pending_queue_size = 4;
    auto r = node->TryCreateReader<Ping>(config, [this](const std::shared_ptr<const Ping>& p) {
      ++delivered;
      last = *p;
    });
    FUZZ_CHECK(r.ok()) << r.status();
    reader = *r;
    FUZZ_CHECK(!transport->SubscribedType("/fuzz").empty());
  }
  // Hands the channel's handler to the fuzzer instead of a network.
  std::shared_ptr<test::FakeTransport> transport = std::make_shared<test::FakeTransport>();
  std::unique_ptr<Runtime> runtime;
  std::unique_ptr<Node> node;
  std::shared_ptr<Reader<Ping>> reader;
  dds::FrameTopicType type{"cyber.dds_test.Ping"};
  int delivered = 0;
  Ping last;
};

World& TheWorld() {
  static World* world = new World();  // never destroyed: fuzzers exit hard
  return *world;
}

}  // namespace
}  // namespace fuzz
}  // namespace cyber

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cyber;        // NOLINT
  using namespace cyber::dds;   // NOLINT
  using namespace cyber::fuzz;  // NOLINT
  World& w = TheWorld();
  if (size > (1u << 20)) return 0;

  // 1. As Fast-DDS hands it over: encapsulation + frame.
  eprosima::fastrtps::rtps::SerializedPayload_t payload(static_cast<uint32_t>(size));
  if (size > 0) std::memcpy(payload.data, data, size);
  payload.length = static_cast<uint32_t>(size);
  FrameSample sample;
  FUZZ_CHECK(w.type.deserialize(&payload, &sample));
  FUZZ_CHECK(sample.bytes.size() == (size >= 4 ? size - 4 : 0));

  // 2. The frame.
  absl::StatusOr<FrameView> frame = DecodeFrame(sample.bytes);
  if (!frame.ok()) {
    FUZZ_CHECK(frame.status().code() == absl::StatusCode::kInvalidArgument);
    FrameSample in_place;  // not a frame: bytes, parsed or not (1b below)
    in_place.parse_as = &Ping::default_instance();
    FUZZ_CHECK(w.type.deserialize(&payload, &in_place));
    FUZZ_CHECK(in_place.parsed == nullptr && in_place.bytes == sample.bytes);
    return 0;
  }
  const char* begin = sample.bytes.data();
  const char* end = begin + sample.bytes.size();
  FUZZ_CHECK(frame->payload.data() >= begin + kMinFrameHeaderSize);
  FUZZ_CHECK(frame->payload.data() + frame->payload.size() <= end);
  std::string again;
  AppendFrameHeader(frame->header, static_cast<uint32_t>(frame->payload.size()), &again);
  again.append(frame->payload.data(), frame->payload.size());
  absl::StatusOr<FrameView> round = DecodeFrame(again);
  FUZZ_CHECK(round.ok()) << round.status();
  FUZZ_CHECK(round->payload == frame->payload);
  FUZZ_CHECK(round->header.kind == frame->header.kind);
  FUZZ_CHECK(round->header.sequence == frame->header.sequence);
  FUZZ_CHECK(round->header.sent_ns == frame->header.sent_ns);
  FUZZ_CHECK(round->header.correlation_client == frame->header.correlation_client);
  FUZZ_CHECK(round->header.correlation_sequence == frame->header.correlation_sequence);
  FUZZ_CHECK(round->header.status == frame->header.status);
  FUZZ_CHECK(round->header.budget_ns == frame->header.budget_ns);
  FUZZ_CHECK(frame->header.budget_ns >= 0);
  FUZZ_CHECK((frame->header.status != 0) == (frame->header.kind == FrameKind::kFailure));

  // 3. The channel's inlet: parse, deliver to the reader.
  dds_test::Ping expected;
  const bool parses =
      expected.ParseFromArray(frame->payload.data(), static_cast<int>(frame->payload.size()));

  // 1b. Parsed where it lies (a reader's prototype): exactly the message
  // frames that parse, equal to the reader's own parse; the rest as bytes.
  FrameSample in_place;
  in_place.parse_as = &Ping::default_instance();
  FUZZ_CHECK(w.type.deserialize(&payload, &in_place));
  const bool parsed_in_place = in_place.parsed != nullptr;
  FUZZ_CHECK(parsed_in_place == (parses && frame->header.kind == FrameKind::kMessage));
  if (parsed_in_place) {
    FUZZ_CHECK(in_place.bytes.empty());
    FUZZ_CHECK(in_place.parsed->SerializeAsString() == expected.SerializeAsString());
    FUZZ_CHECK(in_place.payload_size == frame->payload.size());
    FUZZ_CHECK(in_place.header.sequence == frame->header.sequence);
    FUZZ_CHECK(in_place.header.sent_ns == frame->header.sent_ns);
  } else {
    FUZZ_CHECK(in_place.bytes == sample.bytes);
  }
  // 1c. Taken as this process's own: neither parsed nor copied, whatever
  // the bytes.
  FrameSample discarded;
  discarded.parse_as = &Ping::default_instance();
  discarded.discard = true;
  FUZZ_CHECK(w.type.deserialize(&payload, &discarded));
  FUZZ_CHECK(discarded.parsed == nullptr && discarded.bytes.empty());
  const int before = w.delivered;
  const bool accepted = w.transport->Arrive("/fuzz", frame->payload);
  FUZZ_CHECK(accepted == parses);
  w.runtime->scheduler()->RunReady();
  FUZZ_CHECK(w.delivered == before + (accepted ? 1 : 0));
  if (accepted) {
    FUZZ_CHECK(w.last.SerializeAsString() == expected.SerializeAsString());
    // 4. The way out: the message serialized by the DDS type straight into
    // a payload decodes to the same header and the message's bytes.
    FrameSample out;
    out.message = &expected;
    out.message_size = static_cast<uint32_t>(expected.ByteSizeLong());
    out.header = frame->header;
    const uint32_t out_size = w.type.getSerializedSizeProvider(&out)();
    eprosima::fastrtps::rtps::SerializedPayload_t wire(out_size);
    FUZZ_CHECK(w.type.serialize(&out, &wire));
    FUZZ_CHECK(wire.length == out_size);
    FrameSample back;
    FUZZ_CHECK(w.type.deserialize(&wire, &back));
    absl::StatusOr<FrameView> sent = DecodeFrame(back.bytes);
    FUZZ_CHECK(sent.ok()) << sent.status();
    FUZZ_CHECK(sent->payload == expected.SerializeAsString());
    FUZZ_CHECK(sent->header.sequence == frame->header.sequence);
    FUZZ_CHECK(sent->header.correlation_client == frame->header.correlation_client);
  }
  return 0;
}
