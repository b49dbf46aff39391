#include "wddm/content_model.h"

#include "absl/types/span.h"
#include "gtest/gtest.h"
#include "wddm/digest.h"

namespace cltrace::gpu {
namespace {

// Pinned values (computed independently from the formulas in wddm/README.md): the digest
// functions are part of the replay contract and must not change.
// Creates allocations 1 and 2 of `size` bytes each in `m`.
bool CreateOneAndTwo(ContentModel& m, uint64_t size) {
  return m.Create(1, size).ok() && m.Create(2, size).ok();
}

TEST(DigestTest, KnownValuesAreStable) {
  EXPECT_EQ(HashBytes(nullptr, 0), 0xcba138219ae79b87ull);
  EXPECT_EQ(HashBytes("abc", 3), 0xaf4dae7d104013aeull);
  EXPECT_EQ(ZeroDigest(256), 0x10a542ae0c738c54ull);
}

// The operation formulas of wddm/README.md, evaluated independently (Python) on one sequence.
TEST(ContentModelTest, FormulasMatchTheReadme) {
  ContentModel m;
  ASSERT_TRUE(CreateOneAndTwo(m, 64));
  ASSERT_TRUE(m.Create(3, 64).ok());
  ASSERT_TRUE(m.Clear(1, 0xAB).ok());
  EXPECT_EQ(m.Digest(1), 0x937d1afb5a97d667ull);
  ASSERT_TRUE(m.Copy(3, 1).ok());  // 3 = clear
  ASSERT_TRUE(m.Update(1, 8, 16, HashBytes("abc", 3)).ok());
  EXPECT_EQ(m.Digest(1), 0x1354ef3f198829e0ull);
  ASSERT_TRUE(m.CopyRegion(1, 0, 2, 4, 8).ok());
  EXPECT_EQ(m.Digest(1), 0x95769ee54e551a0cull);
  const AllocationId in[] = {2, 3};
  ASSERT_TRUE(m.Draw(1, 0x77, 3, 0, 1, in).ok());
  EXPECT_EQ(m.Digest(1), 0xc582df5783acfc28ull);
}

TEST(DigestTest, TailBytesMatter) {
  const char a[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  const char b[9] = {1, 2, 3, 4, 5, 6, 7, 8, 10};
  EXPECT_NE(HashBytes(a, 9), HashBytes(b, 9));
  EXPECT_NE(HashBytes(a, 8), HashBytes(a, 9));
}

TEST(ContentModelTest, FreshAllocationsOfEqualSizeHaveEqualDigests) {
  ContentModel m;
  ASSERT_TRUE(CreateOneAndTwo(m, 64));
  ASSERT_TRUE(m.Create(3, 128).ok());
  EXPECT_EQ(m.Digest(1), m.Digest(2));
  EXPECT_NE(m.Digest(1), m.Digest(3));
}

TEST(ContentModelTest, CreateTwiceIsAlreadyExists) {
  ContentModel m;
  ASSERT_TRUE(m.Create(1, 64).ok());
  EXPECT_EQ(m.Create(1, 64).code(), absl::StatusCode::kAlreadyExists);
}

TEST(ContentModelTest, UnknownAllocationIsNotFound) {
  ContentModel m;
  EXPECT_EQ(m.Clear(9, 0).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(m.Destroy(9).code(), absl::StatusCode::kNotFound);
  EXPECT_FALSE(m.Digest(9).has_value());
}

TEST(ContentModelTest, FullCopyMakesDigestsEqual) {
  ContentModel m;
  ASSERT_TRUE(CreateOneAndTwo(m, 64));
  ASSERT_TRUE(m.Clear(1, 0xAB).ok());
  ASSERT_NE(m.Digest(1), m.Digest(2));
  ASSERT_TRUE(m.Copy(2, 1).ok());
  EXPECT_EQ(m.Digest(1), m.Digest(2));
}

TEST(ContentModelTest, ClearDependsOnlyOnSizeAndValue) {
  ContentModel m;
  ASSERT_TRUE(CreateOneAndTwo(m, 64));
  ASSERT_TRUE(m.Update(1, 0, 8, 42).ok());
  ASSERT_TRUE(m.Clear(1, 7).ok());
  ASSERT_TRUE(m.Clear(2, 7).ok());
  EXPECT_EQ(m.Digest(1), m.Digest(2));
}

TEST(ContentModelTest, FullUpdateReplacesPartialUpdateFolds) {
  ContentModel m;
  ASSERT_TRUE(CreateOneAndTwo(m, 16));
  ASSERT_TRUE(m.Clear(1, 5).ok());
  ASSERT_TRUE(m.Update(1, 0, 16, 99).ok());
  ASSERT_TRUE(m.Update(2, 0, 16, 99).ok());
  EXPECT_EQ(m.Digest(1), m.Digest(2));
  ASSERT_TRUE(m.Clear(1, 5).ok());
  ASSERT_TRUE(m.Update(1, 4, 4, 99).ok());
  ASSERT_TRUE(m.Update(2, 4, 4, 99).ok());
  EXPECT_NE(m.Digest(1), m.Digest(2));
}

TEST(ContentModelTest, UpdatePastEndIsOutOfRange) {
  ContentModel m;
  ASSERT_TRUE(m.Create(1, 16).ok());
  EXPECT_EQ(m.Update(1, 12, 8, 0).code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(m.Update(1, 17, 0, 0).code(), absl::StatusCode::kOutOfRange);
}

TEST(ContentModelTest, CopyRegionOutOfRange) {
  ContentModel m;
  ASSERT_TRUE(CreateOneAndTwo(m, 16));
  EXPECT_EQ(m.CopyRegion(1, 8, 2, 0, 9).code(), absl::StatusCode::kOutOfRange);
  EXPECT_TRUE(m.CopyRegion(1, 8, 2, 0, 8).ok());
}

TEST(ContentModelTest, DrawDependsOnInputsStateAndOrder) {
  ContentModel a, b;
  for (ContentModel* m : {&a, &b}) {
    ASSERT_TRUE(m->Create(1, 64).ok());
    ASSERT_TRUE(m->Create(2, 64).ok());
    ASSERT_TRUE(m->Create(3, 64).ok());
    ASSERT_TRUE(m->Clear(2, 1).ok());
  }
  const AllocationId in23[] = {2, 3}, in32[] = {3, 2};
  ASSERT_TRUE(a.Draw(1, 7, 3, 0, 1, in23).ok());
  ASSERT_TRUE(b.Draw(1, 7, 3, 0, 1, in32).ok());
  EXPECT_NE(a.Digest(1), b.Digest(1));
  ContentModel c;
  ASSERT_TRUE(c.Create(1, 64).ok());
  ASSERT_TRUE(c.Create(2, 64).ok());
  ASSERT_TRUE(c.Create(3, 64).ok());
  ASSERT_TRUE(c.Clear(2, 1).ok());
  ASSERT_TRUE(c.Draw(1, 7, 3, 0, 1, in23).ok());
  EXPECT_EQ(a.Digest(1), c.Digest(1));
  EXPECT_EQ(a.CombinedDigest(), c.CombinedDigest());
  EXPECT_NE(a.CombinedDigest(), b.CombinedDigest());
}

// CombinedDigest is kept up to date change by change; it must stay the README formula
// C(sum over allocations of C(id, size, digest), count), whatever sequence of changes led there.
uint64_t CombinedFromScratch(const ContentModel& m, absl::Span<const AllocationId> ids) {
  uint64_t sum = 0;
  size_t live = 0;
  for (AllocationId id : ids) {
    if (!m.Contains(id)) continue;
    sum += DigestCombineAll(id, {*m.Size(id), *m.Digest(id)});
    ++live;
  }
  return DigestCombine(sum, live);
}

TEST(ContentModelTest, CombinedDigestFollowsEveryChange) {
  ContentModel m;
  const AllocationId ids[] = {1, 2, 3, 4};
  EXPECT_EQ(m.CombinedDigest(), CombinedFromScratch(m, ids));
  ASSERT_TRUE(m.Create(1, 64).ok());
  ASSERT_TRUE(m.Create(2, 64).ok());
  ASSERT_TRUE(m.Create(3, 32).ok());
  EXPECT_EQ(m.CombinedDigest(), CombinedFromScratch(m, ids));
  ASSERT_TRUE(m.Clear(1, 0xAB).ok());
  EXPECT_EQ(m.CombinedDigest(), CombinedFromScratch(m, ids));
  ASSERT_TRUE(m.Update(2, 8, 8, 0x1234).ok());
  EXPECT_EQ(m.CombinedDigest(), CombinedFromScratch(m, ids));
  ASSERT_TRUE(m.Copy(2, 1).ok());  // equal sizes: dst takes src's digest
  EXPECT_EQ(m.CombinedDigest(), CombinedFromScratch(m, ids));
  ASSERT_TRUE(m.Copy(3, 1).ok());  // different sizes: a region copy
  EXPECT_EQ(m.CombinedDigest(), CombinedFromScratch(m, ids));
  ASSERT_TRUE(m.CopyRegion(1, 4, 3, 0, 16).ok());
  EXPECT_EQ(m.CombinedDigest(), CombinedFromScratch(m, ids));
  const AllocationId in[] = {2, 3};
  ASSERT_TRUE(m.Draw(1, 7, 3, 0, 1, in).ok());
  EXPECT_EQ(m.CombinedDigest(), CombinedFromScratch(m, ids));
  ASSERT_TRUE(m.Destroy(2).ok());
  EXPECT_EQ(m.CombinedDigest(), CombinedFromScratch(m, ids));
  ASSERT_TRUE(m.Create(4, 16).ok());
  EXPECT_EQ(m.CombinedDigest(), CombinedFromScratch(m, ids));
  // Failed changes leave it alone.
  const uint64_t before = m.CombinedDigest();
  EXPECT_FALSE(m.Update(4, 8, 16, 1).ok());
  EXPECT_FALSE(m.Clear(2, 1).ok());
  EXPECT_EQ(m.CombinedDigest(), before);
  // Back to where it started: the same digest as a model that never changed.
  for (AllocationId id : {1u, 3u, 4u}) ASSERT_TRUE(m.Destroy(id).ok());
  EXPECT_EQ(m.CombinedDigest(), ContentModel().CombinedDigest());
}

// Pinned (wddm/README.md "Content digests"): replays compare these values with recordings.
TEST(ContentModelTest, CombinedDigestPinnedValues) {
  ContentModel m;
  EXPECT_EQ(m.CombinedDigest(), DigestCombine(0, 0));
  ASSERT_TRUE(m.Create(1, 4096).ok());
  EXPECT_EQ(m.CombinedDigest(), DigestCombine(DigestCombineAll(1, {4096, ZeroDigest(4096)}), 1));
  ASSERT_TRUE(m.Clear(1, 7).ok());
  EXPECT_EQ(m.CombinedDigest(), 0x651ab8fd98f22718ull);
}

}  // namespace
}  // namespace cltrace::gpu
