#include "wddm/gpu_engine.h"

#include <deque>
#include <vector>

#include "gtest/gtest.h"
#include "wddm/command_stream.h"
#include "wddm/internal/vidmm.h"

namespace cltrace::gpu {
namespace {

using internal::VidMm;

class GpuEngineTest : public ::testing::Test {
 protected:
  GpuEngineTest() : mm_(1 << 20), gpu_(&sched_, &content_, &mm_, 2, GpuTiming{}) {
    gpu_.SetInterruptLine([this] { ++interrupts_; });
    for (AllocationId id : {1u, 2u}) {
      EXPECT_TRUE(mm_.Create(id, 256, 0).ok());
      EXPECT_TRUE(content_.Create(id, 256).ok());
    }
    const AllocationId ids[] = {1, 2};
    EXPECT_TRUE(mm_.MakeResident(ids).ok());
  }
  uint64_t Va(AllocationId id) { return mm_.VideoAddress(id); }
  // Maps `words` at a fresh physical address and submits all of it.
  void Run(uint32_t node, const std::vector<uint32_t>& words, uint64_t fence) {
    buffers_.push_back(words);
    uint64_t phys = 0x4000000000ull + 0x100000ull * buffers_.size();
    gpu_.MapDmaMemory(phys, buffers_.back());
    gpu_.Submit(node, phys, static_cast<uint32_t>(words.size() * 4), fence, false);
  }

  Scheduler sched_;
  ContentModel content_;
  VidMm mm_;
  GpuEngine gpu_;
  int interrupts_ = 0;
  std::deque<std::vector<uint32_t>> buffers_;
};

TEST_F(GpuEngineTest, ExecutesAtCompletionAndLatchesFence) {
  std::vector<uint32_t> dma;
  AppendCommand(Command::Clear(Va(1), 5), CommandFormat::kDma, &dma, nullptr);
  AppendCommand(Command::Copy(Va(2), Va(1)), CommandFormat::kDma, &dma, nullptr);
  AppendCommand(Command::Fence(9), CommandFormat::kDma, &dma, nullptr);
  auto before = content_.Digest(2);
  Run(0, dma, 9);
  EXPECT_TRUE(gpu_.busy(0));
  EXPECT_EQ(content_.Digest(2), before);  // nothing visible before completion
  sched_.RunUntilIdle();
  EXPECT_EQ(content_.Digest(2), content_.Digest(1));
  EXPECT_EQ(gpu_.completed_fence(0), 9u);
  EXPECT_EQ(gpu_.last_dma_fence(0), 9u);
  EXPECT_EQ(interrupts_, 1);
  auto st = gpu_.ReadInterruptStatus();
  EXPECT_TRUE(st.nodes[0].dma_completed);
  EXPECT_EQ(st.nodes[0].completed_fence, 9u);
  EXPECT_FALSE(st.nodes[1].dma_completed);
  EXPECT_FALSE(gpu_.ReadInterruptStatus().Any());  // acknowledged
}

TEST_F(GpuEngineTest, LevelTriggeredLineCoalescesUntilAcknowledged) {
  std::vector<uint32_t> a, b;
  AppendCommand(Command::Nop(), CommandFormat::kDma, &a, nullptr);
  AppendCommand(Command::Nop(), CommandFormat::kDma, &b, nullptr);
  Run(0, a, 1);
  Run(0, b, 2);
  sched_.RunUntilIdle();
  EXPECT_EQ(interrupts_, 1);
  auto st = gpu_.ReadInterruptStatus();
  EXPECT_EQ(st.nodes[0].completed_fence, 2u);
}

TEST_F(GpuEngineTest, UnpatchedAddressFaultsAndSkipsRest) {
  std::vector<uint32_t> dma;
  AppendCommand(Command::Clear(0, 5), CommandFormat::kDma, &dma, nullptr);  // address 0
  AppendCommand(Command::Clear(Va(1), 5), CommandFormat::kDma, &dma, nullptr);
  auto before = content_.Digest(1);
  Run(1, dma, 4);
  sched_.RunUntilIdle();
  auto st = gpu_.ReadInterruptStatus();
  EXPECT_TRUE(st.nodes[1].dma_faulted);
  EXPECT_EQ(st.nodes[1].faulted_fence, 4u);
  EXPECT_NE(st.nodes[1].fault.find("no resident allocation at address 0x0"), std::string::npos)
      << st.nodes[1].fault;
  EXPECT_EQ(content_.Digest(1), before);
  EXPECT_EQ(gpu_.completed_fence(1), 4u);
  EXPECT_EQ(gpu_.stats().faults, 1u);
}

TEST_F(GpuEngineTest, NodesRunConcurrentlyRingsInOrder) {
  std::vector<uint32_t> big, small;
  for (int i = 0; i < 20; ++i) AppendCommand(Command::Nop(), CommandFormat::kDma, &big, nullptr);
  AppendCommand(Command::Nop(), CommandFormat::kDma, &small, nullptr);
  Run(0, big, 1);
  Run(1, small, 1);
  sched_.RunUntilCondition([&] { return gpu_.completed_fence(1) == 1; });
  EXPECT_EQ(gpu_.completed_fence(0), 0u);  // the long entry on node 0 is still running
  sched_.RunUntilIdle();
  EXPECT_EQ(gpu_.completed_fence(0), 1u);
  EXPECT_TRUE(gpu_.idle());
}

TEST_F(GpuEngineTest, UnmappedFetchFaults) {
  gpu_.Submit(0, 0x12340, 16, 3, false);
  sched_.RunUntilIdle();
  auto st = gpu_.ReadInterruptStatus();
  EXPECT_TRUE(st.nodes[0].dma_faulted);
  EXPECT_NE(st.nodes[0].fault.find("not mapped"), std::string::npos);
  EXPECT_EQ(gpu_.completed_fence(0), 3u);
}

TEST_F(GpuEngineTest, PresentBltCopiesAndRaisesVsync) {
  std::vector<uint32_t> dma;
  AppendCommand(Command::Clear(Va(2), 3), CommandFormat::kDma, &dma, nullptr);
  AppendCommand(Command::PresentBlt(Va(1), Va(2)), CommandFormat::kDma, &dma, nullptr);
  Run(0, dma, 1);
  sched_.RunUntilIdle();
  EXPECT_EQ(content_.Digest(1), content_.Digest(2));
  EXPECT_TRUE(gpu_.ReadInterruptStatus().vsync);
}

// The content digest of each completed entry is taken when the entry completes, over what the
// entry wrote: later changes (the next entry, CPU-side changes) and allocations it did not
// write do not show in it, whenever it is asked for.
TEST_F(GpuEngineTest, CompletionDigestIsTheContentTheEntryLeft) {
  std::vector<uint32_t> a, b;
  AppendCommand(Command::Clear(Va(1), 5), CommandFormat::kDma, &a, nullptr);
  AppendCommand(Command::Clear(Va(1), 6), CommandFormat::kDma, &b, nullptr);
  const uint64_t before = content_.CombinedDigest();
  Run(0, a, 1);
  Run(0, b, 2);
  Run(1, {}, 7);  // an empty entry on the other node: the content as it was
  sched_.RunUntilIdle();
  ContentModel m;  // just what the entries wrote: allocation 1 (2 exists, untouched)
  ASSERT_TRUE(m.Create(1, 256).ok());
  ASSERT_TRUE(m.Clear(1, 5).ok());
  const uint64_t after_a = m.CombinedDigest();
  ASSERT_TRUE(m.Clear(1, 6).ok());
  ASSERT_TRUE(content_.Create(3, 64).ok());  // a change after both completed
  EXPECT_EQ(gpu_.TakeCompletionDigest(0, 1), after_a);
  EXPECT_EQ(gpu_.TakeCompletionDigest(0, 2), m.CombinedDigest());
  EXPECT_EQ(gpu_.TakeCompletionDigest(1, 7), ContentModel().CombinedDigest());  // wrote nothing
  // Each is handed out once; unknown fences and nodes have none.
  EXPECT_EQ(gpu_.TakeCompletionDigest(0, 2), std::nullopt);
  EXPECT_EQ(gpu_.TakeCompletionDigest(0, 9), std::nullopt);
  EXPECT_EQ(gpu_.TakeCompletionDigest(5, 1), std::nullopt);
  EXPECT_NE(before, after_a);
}

// A completion nobody took is dropped when a later one is asked for.
TEST_F(GpuEngineTest, CompletionDigestsNotTakenAreSkipped) {
  std::vector<uint32_t> a;
  AppendCommand(Command::Clear(Va(2), 1), CommandFormat::kDma, &a, nullptr);
  Run(0, a, 3);
  Run(0, {}, 4);
  sched_.RunUntilIdle();
  EXPECT_EQ(gpu_.TakeCompletionDigest(0, 4), ContentModel().CombinedDigest());
  EXPECT_EQ(gpu_.TakeCompletionDigest(0, 3), std::nullopt);
}

}  // namespace
}  // namespace cltrace::gpu
