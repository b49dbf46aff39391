#include "format/crc32c.h"

#include <random>
#include <string>

#include "gtest/gtest.h"

namespace cltrace::format::crc32c {
namespace {

TEST(Crc32cTest, CheckValueOf123456789) { EXPECT_EQ(Value("123456789"), 0xe3069283u); }

// Vectors from RFC 3720 (iSCSI) appendix B.4.
TEST(Crc32cTest, Rfc3720Vectors) {
  EXPECT_EQ(Value(std::string(32, '\0')), 0x8a9136aau);
  EXPECT_EQ(Value(std::string(32, '\xff')), 0x62a8ab43u);
  std::string ascending(32, '\0'), descending(32, '\0');
  for (int i = 0; i < 32; ++i) {
    ascending[i] = static_cast<char>(i);
    descending[i] = static_cast<char>(31 - i);
  }
  EXPECT_EQ(Value(ascending), 0x46dd794eu);
  EXPECT_EQ(Value(descending), 0x113fdb5cu);
}

TEST(Crc32cTest, EmptyIsZero) { EXPECT_EQ(Value(""), 0u); }

TEST(Crc32cTest, ExtendEqualsWhole) {
  std::string s = "hello, chunked world of command lists";
  for (size_t cut = 0; cut <= s.size(); ++cut) {
    EXPECT_EQ(Extend(Value(s.data(), cut), s.data() + cut, s.size() - cut), Value(s)) << cut;
  }
}

TEST(Crc32cTest, PortableAndHardwareAgreeOnEveryLengthAndAlignment) {
  if (!internal::HardwareAvailable()) GTEST_SKIP() << "no SSE4.2 on this CPU";
  std::mt19937_64 rng(7);
  std::string buf(300, '\0');
  for (char& c : buf) c = static_cast<char>(rng());
  for (size_t start = 0; start < 9; ++start) {
    for (size_t n = 0; start + n <= buf.size(); n += 1 + n / 8) {
      ASSERT_EQ(internal::ExtendPortable(0x1234u, buf.data() + start, n),
                internal::ExtendHardware(0x1234u, buf.data() + start, n))
          << start << " " << n;
    }
  }
}

TEST(Crc32cTest, PortableMatchesCheckValue) {
  EXPECT_EQ(internal::ExtendPortable(0, "123456789", 9), 0xe3069283u);
}

TEST(Crc32cTest, MaskRoundTripsAndDiffers) {
  for (uint32_t crc : {0u, 1u, 0xe3069283u, 0xffffffffu}) {
    EXPECT_EQ(Unmask(Mask(crc)), crc);
    EXPECT_NE(Mask(crc), crc);
    EXPECT_NE(Mask(Mask(crc)), Mask(crc));
  }
}

}  // namespace
}  // namespace cltrace::format::crc32c
