#include "cyber/transport/loan/loan_reference.h"

#include <string>

#include "cyber/transport/loan/loan_inlet.h"
#include "gtest/gtest.h"

namespace cyber {
namespace loan {
namespace {

TEST(LoanReferenceTest, ALoanRoundTrips) {
  LoanReference r;
  r.segment = "cyber_loan.12.0.abcdef01";
  r.slot = 7;
  r.generation = 4242;
  r.size = 6u << 20;
  r.sequence = 123456789012ull;
  r.host = ThisHostBootId();
  absl::StatusOr<DecodedReference> d = DecodeReference(EncodeLoan(r));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->loaned);
  EXPECT_EQ(d->loan.segment, r.segment);
  EXPECT_EQ(d->loan.slot, 7u);
  EXPECT_EQ(d->loan.generation, 4242u);
  EXPECT_EQ(d->loan.size, 6u << 20);
  EXPECT_EQ(d->loan.sequence, 123456789012ull);
  EXPECT_EQ(d->loan.host, r.host);
}

TEST(LoanReferenceTest, InlineBytesRoundTrip) {
  const std::string bytes("a\0b\xff", 4);
  const std::string wire = EncodeInline(bytes);  // inline_bytes views it
  absl::StatusOr<DecodedReference> d = DecodeReference(wire);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_FALSE(d->loaned);
  EXPECT_EQ(d->inline_bytes, bytes);
}

TEST(LoanReferenceTest, TheHostBootIdIsRead) {
  EXPECT_NE(ThisHostBootId(), BootId{}) << "no /proc/sys/kernel/random/boot_id";
  EXPECT_EQ(BootIdText(ThisHostBootId()).size(), 32u);
}

TEST(LoanReferenceTest, GarbageIsRefusedWithTheFieldNamed) {
  EXPECT_NE(DecodeReference("").status().message().find("CYLR"), std::string::npos);
  std::string wrong_version = EncodeInline("x");
  wrong_version[4] = 9;
  EXPECT_NE(DecodeReference(wrong_version).status().message().find("version 9"),
            std::string::npos);
  std::string wrong_kind = EncodeInline("x");
  wrong_kind[5] = 5;
  EXPECT_NE(DecodeReference(wrong_kind).status().message().find("kind 5"), std::string::npos);
  LoanReference r;
  r.segment = "cyber_loan.1.0.0";
  const std::string wire = EncodeLoan(r);
  for (size_t n = 0; n < wire.size(); ++n) {
    EXPECT_FALSE(DecodeReference(wire.substr(0, n)).ok()) << n;
  }
  EXPECT_NE(DecodeReference(wire + "z").status().message().find("segment name length"),
            std::string::npos);
}

TEST(LoanInletTest, ALoanFromAnotherHostIsRefusedNamingBothHosts) {
  LoanReference r;
  r.segment = "cyber_loan.1.0.0";
  r.host = ThisHostBootId();
  r.host[0] ^= 0xff;
  LoanInlet inlet("/camera");
  absl::StatusOr<std::shared_ptr<const SharedBytes>> got = inlet.Resolve(EncodeLoan(r));
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(got.status().message().find("\"/camera\""), std::string::npos);
  EXPECT_NE(got.status().message().find(BootIdText(r.host)), std::string::npos);
  EXPECT_NE(got.status().message().find(BootIdText(ThisHostBootId())), std::string::npos);
  EXPECT_EQ(inlet.stats().refused, 1u);
}

TEST(LoanInletTest, InlineBytesAreCopiedOut) {
  std::string wire = EncodeInline("hello");
  LoanInlet inlet("/c");
  absl::StatusOr<std::shared_ptr<const SharedBytes>> got = inlet.Resolve(wire);
  ASSERT_TRUE(got.ok()) << got.status();
  wire.assign(wire.size(), 'x');
  EXPECT_EQ((*got)->view(), "hello");
  EXPECT_EQ((*got)->loan(), nullptr);
  EXPECT_EQ(inlet.stats().inlined, 1u);
}

}  // namespace
}  // namespace loan
}  // namespace cyber
