#include "wddm/internal/vidmm.h"

#include "gtest/gtest.h"

namespace cltrace::gpu::internal {
namespace {

TEST(VidMmTest, FirstResidencyIsAFillThenAddressesResolve) {
  VidMm mm(1 << 20);
  ASSERT_TRUE(mm.Create(1, 5000, 0).ok());
  const AllocationId ids[] = {1};
  auto ops = mm.MakeResident(ids);
  ASSERT_TRUE(ops.ok()) << ops.status();
  ASSERT_EQ(ops->size(), 1u);
  EXPECT_EQ((*ops)[0].kind, PagingOp::kFill);
  uint64_t va = mm.VideoAddress(1);
  EXPECT_EQ(va, kVideoSegmentBase);
  auto r = mm.Resolve(va);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->allocation, 1u);
  EXPECT_TRUE(r->video);
  EXPECT_EQ(mm.video_used(), 8192u);  // page granular
  // Already resident: no paging.
  auto again = mm.MakeResident(ids);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->empty());
}

TEST(VidMmTest, EvictsLeastRecentlyUsedUnpinned) {
  VidMm mm(3 * 4096);
  for (AllocationId id : {1u, 2u, 3u, 4u}) ASSERT_TRUE(mm.Create(id, 4096, 0).ok());
  for (AllocationId id : {1u, 2u, 3u}) {
    const AllocationId one[] = {id};
    ASSERT_TRUE(mm.MakeResident(one).ok());
  }
  const AllocationId pin[] = {1};
  mm.Pin(pin);  // 1 is the LRU but pinned: 2 must go
  const AllocationId four[] = {4};
  auto ops = mm.MakeResident(four);
  ASSERT_TRUE(ops.ok()) << ops.status();
  ASSERT_EQ(ops->size(), 2u);
  EXPECT_EQ((*ops)[0].kind, PagingOp::kTransferToSystem);
  EXPECT_EQ((*ops)[0].id, 2u);
  EXPECT_EQ((*ops)[1].kind, PagingOp::kFill);
  EXPECT_EQ(mm.VideoAddress(2), 0u);
  // 2 comes back with a transfer (it has content), evicting 3 (LRU, unpinned).
  const AllocationId two[] = {2};
  auto back = mm.MakeResident(two);
  ASSERT_TRUE(back.ok());
  ASSERT_EQ(back->size(), 2u);
  EXPECT_EQ((*back)[0].id, 3u);
  EXPECT_EQ((*back)[1].kind, PagingOp::kTransferToVideo);
}

TEST(VidMmTest, ExhaustedLeavesStateUnchanged) {
  VidMm mm(2 * 4096);
  for (AllocationId id : {1u, 2u, 3u}) ASSERT_TRUE(mm.Create(id, 4096, 0).ok());
  const AllocationId all[] = {1, 2, 3};
  EXPECT_FALSE(mm.CanFitTogether(all));
  auto ops = mm.MakeResident(all);
  EXPECT_EQ(ops.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(mm.video_used(), 0u);
  EXPECT_EQ(mm.VideoAddress(1), 0u);
}

TEST(VidMmTest, ExhaustedAfterEvictionsPutsEveryEvictedAllocationBack) {
  VidMm mm(3 * 4096);
  for (AllocationId id : {1u, 2u, 3u}) ASSERT_TRUE(mm.Create(id, 4096, 0).ok());
  for (AllocationId id : {4u, 5u}) ASSERT_TRUE(mm.Create(id, 2 * 4096, 0).ok());
  for (AllocationId id : {1u, 2u, 3u}) {
    const AllocationId one[] = {id};
    ASSERT_TRUE(mm.MakeResident(one).ok());
  }
  const AllocationId three[] = {3};
  mm.Pin(three);
  const uint64_t before[] = {mm.VideoAddress(1), mm.VideoAddress(2), mm.VideoAddress(3)};
  // 4 fits after evicting 1 and 2; 5 then finds nothing left to evict, and the compacting
  // retry fails too: both attempts must undo their evictions and placements.
  const AllocationId both[] = {4, 5};
  EXPECT_EQ(mm.MakeResident(both).status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(mm.video_used(), 3u * 4096);
  EXPECT_EQ(mm.VideoAddress(4), 0u);
  for (AllocationId id : {1u, 2u, 3u}) {
    EXPECT_EQ(mm.VideoAddress(id), before[id - 1]) << id;
    auto r = mm.Resolve(before[id - 1]);
    ASSERT_TRUE(r.has_value()) << id;
    EXPECT_EQ(r->allocation, id);
  }
  // The free space is consistent: a new page evicts 1 (least recently used) and takes its
  // page, not a page the failed attempt left marked free.
  ASSERT_TRUE(mm.Create(6, 4096, 0).ok());
  const AllocationId six[] = {6};
  auto ops = mm.MakeResident(six);
  ASSERT_TRUE(ops.ok()) << ops.status();
  ASSERT_EQ(ops->size(), 2u);
  EXPECT_EQ((*ops)[0].id, 1u);
  EXPECT_EQ(mm.VideoAddress(6), before[0]);
}

TEST(VidMmTest, DestroyWhilePinnedIsDeferred) {
  VidMm mm(1 << 20);
  ASSERT_TRUE(mm.Create(7, 100, 0).ok());
  const AllocationId ids[] = {7};
  ASSERT_TRUE(mm.MakeResident(ids).ok());
  mm.Pin(ids);
  auto d = mm.Destroy(7);
  ASSERT_TRUE(d.ok());
  EXPECT_FALSE(*d);
  EXPECT_TRUE(mm.Contains(7));
  EXPECT_EQ(mm.Destroy(7).status().code(), absl::StatusCode::kNotFound);
  auto released = mm.Unpin(ids);
  EXPECT_EQ(released, std::vector<AllocationId>{7});
  EXPECT_FALSE(mm.Contains(7));
  EXPECT_EQ(mm.video_used(), 0u);
}

TEST(VidMmTest, FreedRangesCoalesce) {
  VidMm mm(3 * 4096);
  for (AllocationId id : {1u, 2u, 3u}) ASSERT_TRUE(mm.Create(id, 4096, 0).ok());
  const AllocationId all[] = {1, 2, 3};
  ASSERT_TRUE(mm.MakeResident(all).ok());
  for (AllocationId id : {1u, 3u, 2u}) ASSERT_TRUE(mm.Destroy(id).ok());
  ASSERT_TRUE(mm.Create(4, 3 * 4096, 0).ok());
  const AllocationId big[] = {4};
  EXPECT_TRUE(mm.MakeResident(big).ok());
}

TEST(VidMmTest, FragmentationByTheSetItselfIsCompacted) {
  VidMm mm(4 * 4096);
  for (AllocationId id : {1u, 2u, 3u, 5u}) ASSERT_TRUE(mm.Create(id, 4096, 0).ok());
  ASSERT_TRUE(mm.Create(4, 3 * 4096, 0).ok());
  const AllocationId four[] = {1, 2, 3, 5};
  ASSERT_TRUE(mm.MakeResident(four).ok());  // pages 0..3
  for (AllocationId id : {1u, 3u, 5u}) ASSERT_TRUE(mm.Destroy(id).ok());
  // 2 sits alone in page 1: pages 0, 2, 3 are free but 4 needs three contiguous ones.
  const AllocationId want[] = {2, 4};
  auto ops = mm.MakeResident(want);
  ASSERT_TRUE(ops.ok()) << ops.status();
  EXPECT_NE(mm.VideoAddress(2), 0u);
  EXPECT_NE(mm.VideoAddress(4), 0u);
  ASSERT_EQ(ops->size(), 3u);
  EXPECT_EQ((*ops)[0].kind, PagingOp::kTransferToSystem);  // 2 moved out ...
  EXPECT_EQ((*ops)[1].kind, PagingOp::kTransferToVideo);   // ... and back in
  EXPECT_EQ((*ops)[2].kind, PagingOp::kFill);
}

TEST(VidMmTest, BadAlignmentIsInvalidArgument) {
  VidMm mm(1 << 20);
  EXPECT_EQ(mm.Create(1, 10, 3).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(mm.Create(1, 0, 0).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace cltrace::gpu::internal
