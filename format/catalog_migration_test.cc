// Reading traces of older catalog versions (format/catalog_migration.h, FORMAT.md §8.1). The
// whole-trace case (a committed version-2 recording read, checked and replayed) is
// tests/cli/cli_e2e_test.cc CatalogVersion2TraceIsReadInTheNewLayouts.
#include "format/catalog_migration.h"

#include <string>
#include <vector>

#include "ddi/catalog.h"
#include "format/call_codec.h"
#include "format/chunk.h"
#include "format/trace.pb.h"
#include "format/trace_reader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cltrace::format {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

uint64_t Arg(const Event& e, const char* name) {
  const int i = FieldIndex(*GetCall(e.call), name);
  EXPECT_GE(i, 0) << name;
  return i < 0 ? ~uint64_t{0} : e.args[static_cast<size_t>(i)];
}

TEST(CatalogMigrationTest, VersionsThisBuildReads) {
  EXPECT_EQ(CatalogVersion(), 4);
  EXPECT_TRUE(CheckCatalogVersion(0).ok());  // not written by a cltrace writer
  EXPECT_TRUE(CheckCatalogVersion(2).ok());
  EXPECT_TRUE(CheckCatalogVersion(3).ok());
  EXPECT_TRUE(CheckCatalogVersion(4).ok());
  absl::Status v1 = CheckCatalogVersion(1);
  EXPECT_EQ(v1.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(v1.message(), HasSubstr("recorded with catalog version 1, cannot be read by this "
                                      "build (catalog version 4): "));
  absl::Status v5 = CheckCatalogVersion(5);
  EXPECT_EQ(v5.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(v5.message(), HasSubstr("recorded with catalog version 5, cannot be read by this "
                                      "build (catalog version 4): "));
}

TEST(CatalogMigrationTest, OpeningAVersion1TraceIsRefused) {
  proto::TraceHeader h;
  h.set_format_version(kFormatVersion);
  h.set_timestamp_unit_ns(1);
  h.set_catalog_version(1);
  h.add_call_names("");
  const std::string bytes = EncodeFileHeader(h);
  auto r = TraceReader::OpenBytes(bytes);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("recorded with catalog version 1"));
}

// Version 2: ... hDrvDevice, pDXGIBaseDDI, hRTCoreLayer, p11UMCallbacks, Flags.
TEST(CatalogMigrationTest, Version2CreateDeviceMovesTheDxgiTableIntoDxgiBaseArgs) {
  Event e;
  e.call = CallId::kCreateDevice;
  e.args = {1, 1, 2, 0x000B0001, 4, 0x2000, 0x3000, 3, 0x4000, 4, 0x5000, 0x10};
  MigrateEvent(2, &e);
  ASSERT_EQ(e.args.size(), Fields(*GetCall(e.call)).size());
  EXPECT_EQ(Arg(e, "hDrvDevice"), 3u);
  EXPECT_EQ(Arg(e, "DXGIBaseDDI.pDXGIBaseCallbacks"), 0u);
  EXPECT_EQ(Arg(e, "DXGIBaseDDI.pDXGIDDIBaseFunctions"), 0x4000u);
  EXPECT_EQ(Arg(e, "hRTCoreLayer"), 4u);
  EXPECT_EQ(Arg(e, "p11UMCallbacks"), 0x5000u);
  EXPECT_EQ(Arg(e, "Flags"), 0x10u);
  EXPECT_EQ(Arg(e, "ppfnRetrieveSubObject"), 0u);
  EXPECT_EQ(Arg(e, "Interface"), 0x000B0001u);  // as recorded
}

// Version 2: Type, pData (pointer), pInfo (the caps array, DataSize/4 words), DataSize.
TEST(CatalogMigrationTest, Version2GetCapsArrayIsPData) {
  Event e;
  e.call = CallId::kGetCaps;
  e.args = {1, 1, 128, 0x1000, 2, 4, 5};  // ... array count 2 = one element (5)
  MigrateEvent(2, &e);
  EXPECT_EQ(Arg(e, "pInfo"), 0x1000u);
  EXPECT_EQ(Arg(e, "pData.pData"), 2u);
  EXPECT_EQ(Arg(e, "DataSize"), 4u);
  EXPECT_THAT(e.args, ElementsAre(1, 1, 128, 0x1000, 2, 4, 5));
}

// Version 2: hDevice, present, hDrvResource, Format, ResourceDimension, MipSlice, the two
// handles. MipSlice sat where Microsoft's DSV has Flags; it is the union's first word now.
TEST(CatalogMigrationTest, Version2DepthStencilViewMipSliceMovesIntoTheUnion) {
  Event e;
  e.call = CallId::kCreateDepthStencilView;
  e.args = {1, 1, 2, 45, 3, 7, 4, 5};
  MigrateEvent(2, &e);
  ASSERT_EQ(e.args.size(), Fields(*GetCall(e.call)).size());
  EXPECT_EQ(Arg(e, "hDrvResource"), 2u);
  EXPECT_EQ(Arg(e, "Format"), 45u);
  EXPECT_EQ(Arg(e, "Flags"), 0u);
  EXPECT_EQ(Arg(e, "Tex2D.MipSlice"), 7u);
  EXPECT_EQ(Arg(e, "hDepthStencilView"), 4u);
  EXPECT_EQ(Arg(e, "hRTDepthStencilView"), 5u);
}

// Version 2 SRV: FirstElement, NumElements are the union's first two words.
TEST(CatalogMigrationTest, Version2ShaderResourceViewElementsAreTheUnionsFirstWords) {
  Event e;
  e.call = CallId::kCreateShaderResourceView;
  e.args = {1, 1, 2, 45, 1, 16, 64, 4, 5};
  MigrateEvent(2, &e);
  ASSERT_EQ(e.args.size(), Fields(*GetCall(e.call)).size());
  EXPECT_EQ(Arg(e, "Tex2D.MostDetailedMip"), 16u);
  EXPECT_EQ(Arg(e, "Tex2D.FirstArraySlice"), 64u);
  EXPECT_EQ(Arg(e, "Tex2D.MipLevels"), 0u);
  EXPECT_EQ(Arg(e, "hShaderResourceView"), 4u);
  EXPECT_EQ(Arg(e, "hRTShaderResourceView"), 5u);
}

TEST(CatalogMigrationTest, Version2FlushLosesFlagsAndReturnValue) {
  Event e;
  e.call = CallId::kFlush;
  e.args = {7, 1};
  e.ret = 1;
  MigrateEvent(2, &e);
  EXPECT_THAT(e.args, ElementsAre(7));
  EXPECT_EQ(e.ret, 0);
  // The current version is left alone.
  Event now;
  now.call = CallId::kFlush;
  now.args = {7};
  MigrateEvent(4, &now);
  EXPECT_THAT(now.args, ElementsAre(7));
}

// Versions 2 and 3: hDevice, present, ResourceDimension, Usage, BindFlags, MapFlags, MiscFlags,
// Format, Width, Height, Depth, MipLevels, ArraySize, SampleCount, ByteStride, hResource,
// hRTResource. Version 4 has Microsoft's layout: the sizes per mip in pMipInfoList, SampleDesc,
// and pPrimaryDesc for a primary (no MiscFlags bit).
TEST(CatalogMigrationTest, Version3CreateResourceSizesMoveIntoPMipInfoList) {
  for (uint32_t version : {2u, 3u}) {
    Event e;
    e.call = CallId::kCreateResource;
    // A 64x16 R8G8B8A8 texture, 3 mips, SHADER_RESOURCE, MISC_SHARED.
    e.args = {1, 1, 3, 0, 0x8, 0, 0x2, 28, 64, 16, 1, 3, 1, 1, 0, 2, 3};
    MigrateEvent(version, &e);
    const CallInfo& ci = *GetCall(e.call);
    EXPECT_EQ(Arg(e, "ResourceDimension"), 3u);
    EXPECT_EQ(Arg(e, "BindFlags"), 0x8u);
    EXPECT_EQ(Arg(e, "MiscFlags"), 0x2u);
    EXPECT_EQ(Arg(e, "Format"), 28u);
    EXPECT_EQ(Arg(e, "SampleDesc.Count"), 1u);
    EXPECT_EQ(Arg(e, "SampleDesc.Quality"), 0u);
    EXPECT_EQ(Arg(e, "MipLevels"), 3u);
    EXPECT_EQ(Arg(e, "ArraySize"), 1u);
    EXPECT_EQ(Arg(e, "pPrimaryDesc"), 0u);
    EXPECT_EQ(Arg(e, "pInitialDataUP"), 0u);  // NULL
    EXPECT_EQ(Arg(e, "hResource"), 2u);
    EXPECT_EQ(Arg(e, "hRTResource"), 3u);
    EXPECT_EQ(Arg(e, "pMipInfoList"), 4u);  // 1 + 3 elements
    const size_t fixed = Fields(ci).size();
    ASSERT_EQ(e.args.size(), fixed + 3 * 6);
    std::vector<uint64_t> mips(e.args.begin() + fixed, e.args.end());
    EXPECT_THAT(mips, ElementsAre(64, 16, 1, 64, 16, 1,  //
                                  32, 8, 1, 32, 8, 1,    //
                                  16, 4, 1, 16, 4, 1));
    EXPECT_TRUE(ValidateArgs(e.call, e.args).ok()) << ValidateArgs(e.call, e.args);
  }
}

TEST(CatalogMigrationTest, Version3MiscPrimaryBecomesPPrimaryDesc) {
  Event e;
  e.call = CallId::kCalcPrivateResourceSize;
  e.args = {1, 1, 3, 0, 0x20, 0, 0x80000000, 28, 128, 96, 1, 1, 1, 1, 0};
  MigrateEvent(3, &e);
  EXPECT_EQ(Arg(e, "MiscFlags"), 0u);  // the invented bit is gone
  EXPECT_EQ(Arg(e, "BindFlags"), 0x20u);
  EXPECT_EQ(Arg(e, "pPrimaryDesc"), 1u);
  EXPECT_EQ(Arg(e, "pPrimaryDesc.ModeDesc.Width"), 128u);
  EXPECT_EQ(Arg(e, "pPrimaryDesc.ModeDesc.Height"), 96u);
  EXPECT_EQ(Arg(e, "pPrimaryDesc.ModeDesc.Format"), 28u);
  EXPECT_EQ(Arg(e, "pPrimaryDesc.VidPnSourceId"), 0u);
  EXPECT_TRUE(ValidateArgs(e.call, e.args).ok()) << ValidateArgs(e.call, e.args);
}

// A buffer's one entry keeps its byte width; a NULL structure (a DC-local open) or MipLevels 0
// leaves pMipInfoList NULL.
TEST(CatalogMigrationTest, Version3BufferAndNullStructure) {
  Event buffer;
  buffer.call = CallId::kCreateResource;
  buffer.args = {1, 1, 1, 0, 0x8, 0, 0, 0, 256, 1, 1, 1, 1, 1, 0, 2, 3};
  MigrateEvent(3, &buffer);
  const size_t fixed = Fields(*GetCall(buffer.call)).size();
  ASSERT_EQ(buffer.args.size(), fixed + 6);
  EXPECT_THAT(std::vector<uint64_t>(buffer.args.begin() + fixed, buffer.args.end()),
              ElementsAre(256, 1, 1, 256, 1, 1));

  Event open;
  open.call = CallId::kCreateResource;
  open.args = {1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 3};
  MigrateEvent(3, &open);
  EXPECT_EQ(open.args.size(), fixed);
  EXPECT_EQ(Arg(open, "pCreateResource"), 0u);
  EXPECT_EQ(Arg(open, "pMipInfoList"), 0u);
  EXPECT_EQ(Arg(open, "hResource"), 2u);
  EXPECT_TRUE(ValidateArgs(open.call, open.args).ok());

  // The current version is left alone.
  Event now = open;
  MigrateEvent(4, &now);
  EXPECT_EQ(now, open);
}

// Versions 2 and 3: GetCaps(hAdapter, pCaps) with the caps array pData; Microsoft's parameter
// is pData, so the member is pData.pData.
TEST(CatalogMigrationTest, Version3GetCapsParameterIsPData) {
  Event e;
  e.call = CallId::kGetCaps;
  e.args = {1, 1, 128, 0x1000, 2, 4, 5};
  MigrateEvent(3, &e);
  EXPECT_EQ(Arg(e, "pData"), 1u);
  EXPECT_EQ(Arg(e, "pData.pData"), 2u);
  EXPECT_THAT(e.args, ElementsAre(1, 1, 128, 0x1000, 2, 4, 5));
}

// Versions 2 and 3: QUERYRESIDENCY without its leading hResource.
TEST(CatalogMigrationTest, Version3QueryResidencyGainsANullResource) {
  for (uint32_t version : {2u, 3u}) {
    Event e;
    e.call = CallId::kQueryResidencyCb;
    e.args = {1, 1, 2, 2, 2, 7, 8, 1, 1};  // NumAllocations 2, two handles, two statuses
    MigrateEvent(version, &e);
    ASSERT_EQ(e.args.size(), Fields(*GetCall(e.call)).size() + 4) << version;
    EXPECT_EQ(Arg(e, "hResource"), 0u);
    EXPECT_EQ(Arg(e, "NumAllocations"), 2u);
    EXPECT_EQ(Arg(e, "HandleList"), 2u);
    EXPECT_EQ(Arg(e, "pResidencyStatus"), 2u);
    EXPECT_THAT(e.args, ElementsAre(1, 1, 0, 2, 2, 2, 7, 8, 1, 1));
  }
}

// Version 3: EscapeCb(hDevice, pData) without D3DDDICB_ESCAPE's hDevice member; Microsoft's
// first parameter is hAdapter.
TEST(CatalogMigrationTest, Version3EscapeDeviceFillsAdapterAndMember) {
  Event e;
  e.call = CallId::kEscapeCb;
  e.args = {5, 1, 0, 0x2000, 16, 9};
  MigrateEvent(3, &e);
  EXPECT_THAT(e.args, ElementsAre(5, 1, 5, 0, 0x2000, 16, 9));
  EXPECT_EQ(Arg(e, "hAdapter"), 5u);
  EXPECT_EQ(Arg(e, "hDevice"), 5u);
  EXPECT_EQ(Arg(e, "hContext"), 9u);
}

// Version 3: LockCb(hDevice, pLockData) whose D3DDDICB_LOCK::pData is pData.pData now.
TEST(CatalogMigrationTest, Version3LockMappedAddressIsPDataPData) {
  Event e;
  e.call = CallId::kLockCb;
  e.args = {5, 1, 3, 0, 0, 0, 0x9000, 4, 0};
  MigrateEvent(3, &e);
  EXPECT_EQ(Arg(e, "pData"), 1u);
  EXPECT_EQ(Arg(e, "pData.pData"), 0x9000u);
  EXPECT_EQ(Arg(e, "Flags"), 4u);
}

// Version 3: hDevice, present, hContext (not Microsoft's), Info.Type, InitialState, MaxCount,
// InitialCount, FenceValue, hSyncObject. Info is Microsoft's union now, recorded through the
// semaphore's view, whose MaxCount is the mutex's InitialState.
TEST(CatalogMigrationTest, Version3SynchronizationObjectInfoIsTheUnion) {
  Event mutex;
  mutex.call = CallId::kCreateSynchronizationObjectCb;
  mutex.args = {5, 1, 6, 1 /* mutex */, 1, 0, 0, 0, 7};
  MigrateEvent(3, &mutex);
  EXPECT_THAT(mutex.args, ElementsAre(5, 1, 1, 1, 0, 7));
  EXPECT_EQ(Arg(mutex, "Info.Semaphore.MaxCount"), 1u);  // InitialState
  EXPECT_EQ(Arg(mutex, "hSyncObject"), 7u);
  Event semaphore;
  semaphore.call = CallId::kCreateSynchronizationObjectCb;
  semaphore.args = {5, 1, 6, 2 /* semaphore */, 0, 4, 2, 0, 8};
  MigrateEvent(3, &semaphore);
  EXPECT_THAT(semaphore.args, ElementsAre(5, 1, 2, 4, 2, 8));
  EXPECT_EQ(Arg(semaphore, "Info.Semaphore.MaxCount"), 4u);
  EXPECT_EQ(Arg(semaphore, "Info.Semaphore.InitialCount"), 2u);
}

// Versions 2 and 3: SETPRIORITY's hResource was a kernel handle (dropped); its list is
// Microsoft's HandleList.
TEST(CatalogMigrationTest, Version3SetPriorityDropsTheKernelResource) {
  Event e;
  e.call = CallId::kSetPriorityCb;
  e.args = {5, 1, 3, 1, 1, 1, 11, 7};
  MigrateEvent(3, &e);
  EXPECT_EQ(Arg(e, "hResource"), 0u);
  EXPECT_EQ(Arg(e, "HandleList"), 1u);
  EXPECT_THAT(e.args, ElementsAre(5, 1, 0, 1, 1, 1, 11, 7));
}

}  // namespace
}  // namespace cltrace::format
