// Content capture (recorder/internal/content.h): the bytes behind UpdateSubresourceUP and a
// mapping at Unmap reach the trace, copied before the driver runs, on IC and DC tables.
#include "format/content.h"

#include <cstring>
#include <string>
#include <vector>

#include "ddi/catalog.h"
#include "format/trace_reader.h"
#include "gtest/gtest.h"
#include "recorder/internal/content.h"
#include "recorder/internal/fake_driver.h"
#include "recorder/internal/recording_testing.h"
#include "recorder/recorder.h"

namespace cltrace::recorder {
namespace {

using format::CallId;
using testing::FakeRtContext;
using testing::FakeRuntime;

struct Content {
  CallId call;
  std::string bytes;  // empty: the event has none
};

// The events of `calls`, in seq order, with their content.
std::vector<Content> ContentOf(const std::string& trace, std::vector<CallId> calls) {
  format::testing::ReadResult r = testing::ReadRecording(trace);
  EXPECT_TRUE(r.status.ok()) << r.status;
  std::vector<Content> out;
  for (const format::Event& ev : r.events) {
    if (std::find(calls.begin(), calls.end(), ev.call) == calls.end()) continue;
    out.push_back({ev.call, std::string(r.contents.Token(ev.content))});
  }
  return out;
}

// `mip` holds the size (pMipInfoList) and must outlive the structure's use.
D3D11DDIARG_CREATERESOURCE Buffer(UINT bytes, D3D10DDI_MIPINFO* mip) {
  *mip = D3D10DDI_MIPINFO{bytes, 1, 1, bytes, 1, 1};
  D3D11DDIARG_CREATERESOURCE a{};
  a.pMipInfoList = mip;
  a.ResourceDimension = D3D10DDIRESOURCE_BUFFER;
  a.MipLevels = a.ArraySize = 1;
  return a;
}

TEST(ContentRoleTest, ThunkRolesAgreeWithTheCatalog) {
  for (int i = 1; i < format::kCallIdCount; ++i) {
    const auto id = static_cast<CallId>(i);
    EXPECT_EQ(internal::ThunkContentRole(id), format::ContentRoleOf(id))
        << format::GetCall(id)->name;
  }
}

// Records the fake runtime's device, with one resource handle's memory to create into.
class ContentCaptureTest : public testing::RecordingTest {
 protected:
  void SetUp() override {
    rec_ = Start();
    ASSERT_EQ(rt_.Create(&testing::RecordedOpenAdapter), S_OK);
  }

  std::unique_ptr<Recorder> rec_;
  FakeRuntime rt_;
  alignas(8) unsigned char res_mem_[64] = {};
  D3D10DDI_HRESOURCE res_{res_mem_};
};

TEST_F(ContentCaptureTest, UploadSourceAndMappedBytesAreCapturedBeforeTheDriverRuns) {
  FakeRtContext& ic = rt_.ic();
  const D3D10DDI_HRESOURCE res = res_;
  D3D10DDI_MIPINFO mip;
  D3D11DDIARG_CREATERESOURCE create = Buffer(48, &mip);
  ic.funcs.pfnCreateResource(ic.handle, &create, res, D3D10DDI_HRTRESOURCE{});

  // A boxed upload: only the box's 16 bytes are the source.
  std::vector<uint8_t> src(48);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(100 + i);
  D3D10_DDI_BOX box{8, 0, 0, 24, 1, 1};
  ic.funcs.pfnResourceUpdateSubresourceUP(ic.handle, res, 0, &box, src.data() + 8, 0, 0);
  // The whole buffer.
  ic.funcs.pfnResourceUpdateSubresourceUP(ic.handle, res, 0, nullptr, src.data(), 48, 0);

  // Map, write, Unmap (the fake driver wipes its memory in Unmap).
  D3D10DDI_MAPPED_SUBRESOURCE m{};
  ic.funcs.pfnDynamicIABufferMapDiscard(ic.handle, res, 0, D3D10_DDI_MAP_WRITE_DISCARD, 0, &m);
  ASSERT_NE(m.pData, nullptr);
  std::memcpy(m.pData, "written through the map", 23);
  ic.funcs.pfnDynamicIABufferUnmap(ic.handle, res, 0);
  // A read-only map captures nothing; an Unmap with no Map before it neither.
  ic.funcs.pfnResourceMap(ic.handle, res, 0, D3D10_DDI_MAP_READ, 0, &m);
  ic.funcs.pfnResourceUnmap(ic.handle, res, 0);
  ic.funcs.pfnResourceUnmap(ic.handle, res, 0);

  // The same on a deferred context: its own mapping.
  FakeRtContext* dc = rt_.CreateDeferredContext();
  ic.funcs.pfnDynamicIABufferMapDiscard(ic.handle, res, 0, D3D10_DDI_MAP_WRITE_DISCARD, 0, &m);
  D3D10DDI_MAPPED_SUBRESOURCE dm{};
  dc->funcs.pfnDynamicIABufferMapDiscard(dc->handle, res, 0, D3D10_DDI_MAP_WRITE_DISCARD, 0, &dm);
  std::memcpy(dm.pData, "deferred", 8);
  std::memcpy(m.pData, "immediate", 9);
  dc->funcs.pfnDynamicIABufferUnmap(dc->handle, res, 0);
  ic.funcs.pfnDynamicIABufferUnmap(ic.handle, res, 0);
  Stats stats = rec_->Stop();

  std::vector<Content> got =
      ContentOf(bytes_, {CallId::kResourceUpdateSubresourceUP, CallId::kDynamicIABufferUnmap,
                         CallId::kResourceUnmap});
  ASSERT_EQ(got.size(), 7u);
  EXPECT_EQ(got[0].bytes, std::string(src.begin() + 8, src.begin() + 24));
  EXPECT_EQ(got[1].bytes, std::string(src.begin(), src.end()));
  // A buffer's mapping is its width (48), not the driver's 256-byte pitch.
  std::string written(48, '\0');
  std::memcpy(written.data(), "written through the map", 23);
  EXPECT_EQ(got[2].bytes, written);
  EXPECT_EQ(got[3].bytes, "") << "a READ map has nothing to capture";
  EXPECT_EQ(got[4].bytes, "") << "nothing was mapped";
  std::string deferred(48, '\0'), immediate(48, '\0');
  std::memcpy(deferred.data(), "deferred", 8);
  std::memcpy(immediate.data(), "immediate", 9);
  // Both contexts' maps used the fake driver's per-context memory, each captured on its own.
  EXPECT_EQ(got[5].bytes, deferred);
  EXPECT_EQ(got[6].bytes, immediate);
  EXPECT_EQ(stats.contents, 5u);
  EXPECT_EQ(stats.content_bytes, 16u + 48 * 4);
  EXPECT_EQ(stats.contents_skipped, 0u);
}

// CreateResource's initial data: every subresource's region at its pSysMem, in subresource
// order, without the gaps past the last row; nothing without pInitialDataUP.
TEST_F(ContentCaptureTest, InitialDataIsEverySubresourceInOrder) {
  FakeRtContext& ic = rt_.ic();
  // A buffer with initial data, then one without.
  D3D10DDI_MIPINFO mip;
  D3D11DDIARG_CREATERESOURCE buffer = Buffer(16, &mip);
  const char kBufferBytes[] = "sixteen bytes!!";
  char buffer_bytes[16];
  std::memcpy(buffer_bytes, kBufferBytes, 16);
  const D3D10_DDIARG_SUBRESOURCE_UP buffer_up{buffer_bytes, 0, 0};
  buffer.pInitialDataUP = &buffer_up;
  ic.funcs.pfnCreateResource(ic.handle, &buffer, res_, D3D10DDI_HRTRESOURCE{});
  alignas(8) unsigned char plain_mem[64] = {};
  buffer.pInitialDataUP = nullptr;
  ic.funcs.pfnCreateResource(ic.handle, &buffer, D3D10DDI_HRESOURCE{plain_mem},
                             D3D10DDI_HRTRESOURCE{});
  // A 2 x 2 R8G8B8A8_UNORM texture array of 2 slices with 2 mips (2x2, 1x1): mip 0 rows of 8
  // bytes at SysMemPitch 12, mip 1 one row of 4 bytes.
  D3D10DDI_MIPINFO mips[2] = {{2, 2, 1, 2, 2, 1}, {1, 1, 1, 1, 1, 1}};
  D3D11DDIARG_CREATERESOURCE texture{};
  texture.pMipInfoList = mips;
  texture.ResourceDimension = D3D10DDIRESOURCE_TEXTURE2D;
  texture.Format = 28;
  texture.MipLevels = 2;
  texture.ArraySize = 2;
  std::vector<uint8_t> slice0(20), slice1(20), small0(4), small1(4);
  for (size_t i = 0; i < 20; ++i) slice0[i] = static_cast<uint8_t>(i);
  for (size_t i = 0; i < 20; ++i) slice1[i] = static_cast<uint8_t>(0x40 + i);
  for (size_t i = 0; i < 4; ++i) small0[i] = static_cast<uint8_t>(0x80 + i);
  for (size_t i = 0; i < 4; ++i) small1[i] = static_cast<uint8_t>(0xc0 + i);
  const D3D10_DDIARG_SUBRESOURCE_UP up[4] = {
      {slice0.data(), 12, 0}, {small0.data(), 4, 0}, {slice1.data(), 12, 0}, {small1.data(), 4, 0}};
  texture.pInitialDataUP = up;
  alignas(8) unsigned char tex_mem[64] = {};
  ic.funcs.pfnCreateResource(ic.handle, &texture, D3D10DDI_HRESOURCE{tex_mem},
                             D3D10DDI_HRTRESOURCE{});
  Stats stats = rec_->Stop();

  std::vector<Content> got = ContentOf(bytes_, {CallId::kCreateResource});
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].bytes, std::string(kBufferBytes, 16));
  EXPECT_EQ(got[1].bytes, "") << "no pInitialDataUP";
  // Mip 0 spans 12 + 8 bytes (the 4 past its last row are not the application's).
  std::string want(slice0.begin(), slice0.end());
  want.append(small0.begin(), small0.end());
  want.append(slice1.begin(), slice1.end());
  want.append(small1.begin(), small1.end());
  EXPECT_EQ(got[2].bytes, want);
  EXPECT_EQ(stats.contents, 2u);
  EXPECT_EQ(stats.content_bytes, 16u + 48);
  EXPECT_EQ(stats.contents_skipped, 0u);
}

TEST_F(ContentCaptureTest, WhatCannotBeSizedIsSkippedAndCountedWithTheReason) {
  FakeRtContext& ic = rt_.ic();
  const D3D10DDI_HRESOURCE res = res_;
  D3D11DDIARG_CREATERESOURCE tex{};
  tex.ResourceDimension = D3D10DDIRESOURCE_TEXTURE2D;
  tex.Format = 103;  // NV12: planar, no texel size
  const D3D10DDI_MIPINFO mip{16, 16, 1, 16, 16, 1};
  tex.pMipInfoList = &mip;
  tex.MipLevels = tex.ArraySize = 1;
  ic.funcs.pfnCreateResource(ic.handle, &tex, res, D3D10DDI_HRTRESOURCE{});
  std::vector<uint8_t> src(1024, 7);
  ic.funcs.pfnResourceUpdateSubresourceUP(ic.handle, res, 0, nullptr, src.data(), 16, 0);
  // A resource the recorder never saw created.
  alignas(8) unsigned char other_mem[64] = {};
  ic.funcs.pfnResourceUpdateSubresourceUP(ic.handle, D3D10DDI_HRESOURCE{other_mem}, 0, nullptr,
                                          src.data(), 16, 0);
  ic.funcs.pfnDestroyResource(ic.handle, res);
  Stats stats = rec_->Stop();
  EXPECT_EQ(stats.contents, 0u);
  EXPECT_EQ(stats.contents_skipped, 2u);
  EXPECT_NE(stats.first_content_skip.find("DXGI format 103"), std::string::npos)
      << stats.first_content_skip;
  for (const Content& c : ContentOf(bytes_, {CallId::kResourceUpdateSubresourceUP})) {
    EXPECT_EQ(c.bytes, "");
  }
}

}  // namespace
}  // namespace cltrace::recorder
