// The apitrace player on the reference driver: the captures of corpus/apps/ play without a
// skipped call or a violation, and the DDIs each API call became match the reviewed golden lists
// corpus/apps/NAME.ddis (regenerate with CLTRACE_UPDATE_GOLDEN=1); identity remapping,
// reference counting, map types, blob files, threads and bad input on small captures.
#include "corpus/apitrace/player.h"

#include <cstdio>
#include <fstream>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "corpus/apitrace/dump_parser.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/runtime.h"
#include "runtime/transcript.h"
#include "tests/testing/golden.h"

namespace cltrace::apitrace {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Collects, per played API call, the DDI functions the runtime called for it ("IC.Draw"), and
// the threads the calls were played on.
class DdiList : public runtime::DdiObserver {
 public:
  void OnLine(int depth, absl::string_view line) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (depth != 1 || absl::StartsWith(line, "<-") || absl::StartsWith(line, "cb ")) return;
    absl::string_view fn = line.substr(0, line.find('('));
    absl::StrAppend(&text_, "    ", fn, "\n");
  }
  void OnCall(const Call& call) {
    std::lock_guard<std::mutex> lock(mu_);
    absl::StrAppend(&text_, call.no ? absl::StrCat(*call.no) : absl::StrCat("line ", call.line),
                    " ", call.name, "\n");
    threads_.insert(std::this_thread::get_id());
    call_threads_.insert(call.thread.value_or(0));
  }
  std::string text() {
    std::lock_guard<std::mutex> lock(mu_);
    return text_;
  }
  size_t os_threads() const { return threads_.size(); }

 private:
  std::mutex mu_;
  std::string text_;
  std::set<std::thread::id> threads_;
  std::set<uint64_t> call_threads_;
};

struct Played {
  absl::StatusOr<PlayReport> report;
  std::string ddis;
  size_t os_threads = 0;
  std::vector<std::string> violations;
};

Played PlayText(const std::string& text, bool strict = false, const std::string& blob_dir = ".") {
  runtime::ClearProcessViolations();
  runtime::ClearProcessDriverViolations();
  Played p;
  absl::StatusOr<std::vector<Call>> calls = ParseDump(text);
  if (!calls.ok()) {
    p.report = calls.status();
    return p;
  }
  DdiList list;
  PlayOptions options;
  options.strict = strict;
  options.blob_dir = blob_dir;
  options.runtime.observer = &list;
  options.on_call = [&list](const Call& c) { list.OnCall(c); };
  p.report = Play(*calls, options);
  p.ddis = list.text();
  p.os_threads = list.os_threads();
  p.violations = runtime::ProcessViolations();
  std::vector<std::string> driver = runtime::ProcessDriverViolations();
  p.violations.insert(p.violations.end(), driver.begin(), driver.end());
  return p;
}

std::string AppPath(const std::string& name) {
  return absl::StrCat(CLTRACE_SOURCE_DIR, "/corpus/apps/", name);
}

class AppCaptureTest : public ::testing::TestWithParam<const char*> {};

TEST_P(AppCaptureTest, PlaysCleanAndBecomesTheGoldenDdis) {
  const std::string name = GetParam();
  Played p = PlayText(ReadFile(AppPath(name + ".txt")));
  ASSERT_TRUE(p.report.ok()) << p.report.status();
  EXPECT_EQ(p.report->played, p.report->calls);
  EXPECT_THAT(p.report->skipped, IsEmpty());
  EXPECT_THAT(p.violations, IsEmpty());
  EXPECT_TRUE(testing::MatchesGolden(AppPath(name + ".ddis"), p.ddis));
}

INSTANTIATE_TEST_SUITE_P(Apps, AppCaptureTest,
                         ::testing::Values("triangle", "maps_queries", "deferred_threads",
                                           "api_surface"));

TEST(ApitracePlayerTest, MapTypesBecomeTheDdisTheRuntimeChooses) {
  Played p = PlayText(ReadFile(AppPath("maps_queries.txt")));
  ASSERT_TRUE(p.report.ok()) << p.report.status();
  EXPECT_THAT(p.ddis, HasSubstr("15 ID3D11DeviceContext::Map\n    IC.DynamicIABufferMapDiscard\n"));
  EXPECT_THAT(p.ddis,
              HasSubstr("18 ID3D11DeviceContext::Map\n    IC.DynamicConstantBufferMapDiscard\n"));
  EXPECT_THAT(p.ddis,
              HasSubstr("27 ID3D11DeviceContext::Map\n    IC.DynamicIABufferMapNoOverwrite\n"));
  EXPECT_THAT(p.ddis, HasSubstr("39 ID3D11DeviceContext::Map\n    IC.StagingResourceMap\n"));
}

TEST(ApitracePlayerTest, CaptureThreadsPlayOnThreadsOfTheirOwn) {
  Played p = PlayText(ReadFile(AppPath("deferred_threads.txt")));
  ASSERT_TRUE(p.report.ok()) << p.report.status();
  EXPECT_EQ(p.report->threads, 3);
  EXPECT_EQ(p.os_threads, 3u);
  // The second frame's FinishCommandList reuses the list the first frame released.
  EXPECT_THAT(p.ddis, HasSubstr("RecycleCreateCommandList"));
}

constexpr char kDevice[] =
    "D3D11CreateDevice(pAdapter = NULL, DriverType = D3D_DRIVER_TYPE_HARDWARE, Software = NULL, "
    "Flags = 0x0, pFeatureLevels = NULL, FeatureLevels = 0, SDKVersion = 7, ppDevice = &0x100, "
    "pFeatureLevel = &D3D_FEATURE_LEVEL_11_0, ppImmediateContext = &0x200) = S_OK\n";
constexpr char kBuffer[] =
    "ID3D11Device::CreateBuffer(this = 0x100, pDesc = &{ByteWidth = 64, Usage = "
    "D3D11_USAGE_DEFAULT, BindFlags = D3D11_BIND_SHADER_RESOURCE, CPUAccessFlags = 0x0, "
    "MiscFlags = 0x0, StructureByteStride = 0}, pInitialData = NULL, ppBuffer = &0x300) = S_OK\n";
constexpr char kView[] =
    "ID3D11Device::CreateShaderResourceView(this = 0x100, pResource = 0x300, pDesc = NULL, "
    "ppSRView = &0x400) = S_OK\n";

// A long capture read from its file as it is played: the player holds one call's line and a
// table of about the live objects, not the dump nor every object the capture ever made.
TEST(ApitracePlayerTest, LongCapturePlaysFromItsFileInBoundedMemory) {
  const std::string path = absl::StrCat(::testing::TempDir(), "/apitrace_long.txt");
  constexpr int kRounds = 10000;
  {
    std::ofstream out(path, std::ios::binary);
    out << kDevice;
    for (int i = 0; i < kRounds; ++i) {
      const std::string key = absl::StrCat("0x", absl::Hex(0x10000 + 16 * (i % 7)));
      out << "ID3D11Device::CreateBuffer(this = 0x100, pDesc = &{ByteWidth = " << 64 + 16 * (i % 5)
          << ", Usage = D3D11_USAGE_DEFAULT, BindFlags = D3D11_BIND_VERTEX_BUFFER, "
             "CPUAccessFlags = 0x0, MiscFlags = 0x0, StructureByteStride = 0}, pInitialData = "
             "NULL, ppBuffer = &"
          << key << ") = S_OK\n"
          << "ID3D11DeviceContext::IASetVertexBuffers(this = 0x200, StartSlot = 0, NumBuffers = "
             "1, ppVertexBuffers = &"
          << key << ", pStrides = &16, pOffsets = &0)\n"
          << "ID3D11DeviceContext::Draw(this = 0x200, VertexCount = 3, StartVertexLocation = 0)\n"
          << "ID3D11Buffer::Release(this = " << key << ") = 1\n";
    }
  }
  runtime::ClearProcessViolations();
  absl::StatusOr<std::unique_ptr<DumpFileSource>> source = DumpFileSource::Open(path);
  ASSERT_TRUE(source.ok()) << source.status();
  PlayOptions options;
  absl::StatusOr<PlayReport> report = Play(source->get(), options);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->calls, 1u + 4 * kRounds);
  EXPECT_EQ(report->played, report->calls);
  EXPECT_THAT(runtime::ProcessViolations(), IsEmpty());
  // Live at once: the device, its context and one or two buffers; released ones are compacted
  // away once the table doubled (at least 64 entries).
  EXPECT_LE(report->max_objects, 64u);
  // The longest line, not the dump's bytes.
  EXPECT_LE(report->max_buffered, 300u);
  EXPECT_GT(report->max_buffered, 100u);
  std::remove(path.c_str());
}

// Class instances reach the driver through Set*ShaderWithIfaces; a counter the driver does not
// admit (CheckCounterInfo) is refused after that check, as D3D11 refuses it, without a query.
TEST(ApitracePlayerTest, ClassInstancesAndCountersBecomeTheirDdis) {
  Played p = PlayText(ReadFile(AppPath("api_surface.txt")));
  ASSERT_TRUE(p.report.ok()) << p.report.status();
  EXPECT_THAT(p.ddis, HasSubstr("ID3D11Device::CreateCounter\n    IC.CheckCounterInfo\n1"));
  EXPECT_THAT(p.ddis, HasSubstr("ID3D11Device::CheckCounter\n    IC.CheckCounterInfo\n1"));
  EXPECT_THAT(p.ddis,
              HasSubstr("ID3D11Device::CreateClassLinkage\n51 ID3D11Device::CreatePixelShader\n"));
  EXPECT_THAT(p.ddis,
              HasSubstr("ID3D11DeviceContext::PSSetShader\n    IC.PsSetShaderWithIfaces\n"));
  // A class instance is not a shader resource: naming one elsewhere is bad input.
  Played bad = PlayText(absl::StrCat(
      kDevice, "ID3D11Device::CreateClassLinkage(this = 0x100, ppLinkage = &0x450) = S_OK\n",
      "ID3D11ClassLinkage::GetClassInstance(this = 0x450, pClassInstanceName = \"m\", "
      "InstanceIndex = 0, ppInstance = &0x451) = S_OK\n",
      "ID3D11DeviceContext::PSSetShaderResources(this = 0x200, StartSlot = 0, NumViews = 1, "
      "ppShaderResourceViews = &0x451)\n"));
  ASSERT_FALSE(bad.report.ok());
  EXPECT_THAT(bad.report.status().message(), HasSubstr("is a class instance, not a view"));
}

TEST(ApitracePlayerTest, ReleaseOfABoundViewDefersItsDestruction) {
  const std::string text = absl::StrCat(
      kDevice, kBuffer, kView,
      "ID3D11DeviceContext::PSSetShaderResources(this = 0x200, StartSlot = 0, NumViews = 1, "
      "ppShaderResourceViews = &0x400)\n",
      "ID3D11ShaderResourceView::Release(this = 0x400) = 0\n",
      "ID3D11Buffer::Release(this = 0x300) = 0\n",
      "ID3D11DeviceContext::ClearState(this = 0x200)\n");
  Played p = PlayText(text);
  ASSERT_TRUE(p.report.ok()) << p.report.status();
  // Nothing is destroyed at the Release calls: the context still binds the view.
  EXPECT_THAT(p.ddis, HasSubstr("line 5 ID3D11ShaderResourceView::Release\nline 6 "
                                "ID3D11Buffer::Release\nline 7 ID3D11DeviceContext::ClearState\n"));
  const size_t clear = p.ddis.find("ClearState\n");
  EXPECT_NE(p.ddis.find("IC.DestroyShaderResourceView", clear), std::string::npos) << p.ddis;
  EXPECT_NE(p.ddis.find("IC.DestroyResource", clear), std::string::npos) << p.ddis;
  EXPECT_THAT(p.violations, IsEmpty());
}

TEST(ApitracePlayerTest, AnObjectUsedAfterItsFinalReleaseIsBadInput) {
  const std::string text =
      absl::StrCat(kDevice, kBuffer, kView, "ID3D11ShaderResourceView::Release(this = 0x400) = 0\n",
                   "ID3D11DeviceContext::PSSetShaderResources(this = 0x200, "
                   "StartSlot = 0, NumViews = 1, ppShaderResourceViews = "
                   "&0x400)\n");
  Played p = PlayText(text);
  ASSERT_FALSE(p.report.ok());
  EXPECT_EQ(p.report.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(p.report.status().message(),
              HasSubstr("line 5: ID3D11DeviceContext::PSSetShaderResources: 0x400 is no live "
                        "object (never created, or released)"));
}

TEST(ApitracePlayerTest, AddRefKeepsAnObjectAliveAndPointersAreReused) {
  // The buffer gets a second reference, so its first Release destroys nothing; after the final
  // one the capture's allocator hands the same address to a new buffer.
  const std::string text =
      absl::StrCat(kDevice, kBuffer, "ID3D11Buffer::AddRef(this = 0x300) = 2\n",
                   "ID3D11Buffer::Release(this = 0x300) = 1\n",
                   "ID3D11Buffer::Release(this = 0x300) = 0\n", kBuffer);
  Played p = PlayText(text);
  ASSERT_TRUE(p.report.ok()) << p.report.status();
  EXPECT_THAT(p.ddis, HasSubstr("line 4 ID3D11Buffer::Release\nline 5 ID3D11Buffer::Release\n"
                                "    IC.DestroyResource\nline 6 ID3D11Device::CreateBuffer\n"));
}

TEST(ApitracePlayerTest, AnIdenticalStateDescriptionReturnsTheSameObjectWithoutADdi) {
  const std::string sampler =
      "ID3D11Device::CreateSamplerState(this = 0x100, pSamplerDesc = &{Filter = "
      "D3D11_FILTER_MIN_MAG_MIP_LINEAR, AddressU = D3D11_TEXTURE_ADDRESS_CLAMP, AddressV = "
      "D3D11_TEXTURE_ADDRESS_CLAMP, AddressW = D3D11_TEXTURE_ADDRESS_CLAMP, MipLODBias = 0, "
      "MaxAnisotropy = 1, ComparisonFunc = D3D11_COMPARISON_NEVER, BorderColor = {0, 0, 0, 0}, "
      "MinLOD = 0, MaxLOD = 3.40282e+38}, ppSamplerState = &0x700) = S_OK\n";
  const std::string text =
      absl::StrCat(kDevice, sampler, sampler, "ID3D11SamplerState::Release(this = 0x700) = 1\n",
                   "ID3D11SamplerState::Release(this = 0x700) = 0\n");
  Played p = PlayText(text);
  ASSERT_TRUE(p.report.ok()) << p.report.status();
  EXPECT_THAT(p.ddis, HasSubstr("line 3 ID3D11Device::CreateSamplerState\nline 4 "
                                "ID3D11SamplerState::Release\nline 5 ID3D11SamplerState::Release\n"
                                "    IC.DestroySampler\n"));
}

TEST(ApitracePlayerTest, UnimplementedCallsAreListedOrWithStrictAnError) {
  const std::string text = absl::StrCat(
      kDevice,
      "ID3D11DeviceContext::QueryInterface(this = 0x200, riid = IID_ID3D11DeviceContext1, "
      "ppvObject = &0x250) = S_OK\n",
      "ID3D11DeviceContext1::DiscardView(this = 0x250, pResourceView = 0x0)\n",
      "ID3D11DeviceContext::DiscardResource(this = 0x200, pResource = 0x0)\n",
      "ID3D11DeviceContext1::ClearView(this = 0x250, pView = 0x0, Color = {0, 0, 0, 0}, pRect = "
      "NULL, NumRects = 0)\n");
  Played p = PlayText(text);
  ASSERT_TRUE(p.report.ok()) << p.report.status();
  ASSERT_EQ(p.report->skipped.size(), 3u);
  EXPECT_EQ(p.report->skipped[0].name, "ID3D11DeviceContext1::DiscardView");
  EXPECT_EQ(p.report->skipped[0].first_line, 3);
  EXPECT_EQ(p.report->skipped[1].name, "ID3D11DeviceContext::DiscardResource");
  EXPECT_EQ(p.report->skipped[1].count, 1u);
  EXPECT_EQ(p.report->played, 2u);

  Played strict = PlayText(text, /*strict=*/true);
  ASSERT_FALSE(strict.report.ok());
  EXPECT_THAT(strict.report.status().message(),
              HasSubstr("line 3: ID3D11DeviceContext1::DiscardView: not played"));
}

TEST(ApitracePlayerTest, MemcpyOutsideEveryMappingIsBadInput) {
  const std::string text = absl::StrCat(kDevice, "memcpy(dest = 0x7000, src = blob(4), n = 4)\n");
  Played p = PlayText(text);
  ASSERT_FALSE(p.report.ok());
  EXPECT_THAT(p.report.status().message(), HasSubstr("line 2: memcpy: dest is in no mapped range"));
}

TEST(ApitracePlayerTest, MemcpyPastTheMappingIsBadInput) {
  const std::string text = absl::StrCat(
      kDevice,
      "ID3D11Device::CreateBuffer(this = 0x100, pDesc = &{ByteWidth = 64, Usage = "
      "D3D11_USAGE_DYNAMIC, BindFlags = D3D11_BIND_VERTEX_BUFFER, CPUAccessFlags = "
      "D3D11_CPU_ACCESS_WRITE, MiscFlags = 0x0, StructureByteStride = 0}, pInitialData = NULL, "
      "ppBuffer = &0x300) = S_OK\n",
      "ID3D11DeviceContext::Map(this = 0x200, pResource = 0x300, Subresource = 0, MapType = "
      "D3D11_MAP_WRITE_DISCARD, MapFlags = 0x0, pMappedResource = &{pData = 0x9000, RowPitch = "
      "64, DepthPitch = 64}) = S_OK\n",
      "memcpy(dest = 0x9010, src = blob(64), n = 64)\n");
  Played p = PlayText(text);
  ASSERT_FALSE(p.report.ok());
  EXPECT_THAT(p.report.status().message(),
              HasSubstr("line 4: memcpy: copies 64 bytes at offset 16 of a 64-byte mapping"));
}

TEST(ApitracePlayerTest, SubresourcesAndBoxesOutsideTheResourceAreBadInput) {
  // The driver would read past the bytes the program handed it: refused, as D3D11 drops them.
  for (const std::string& bad : std::vector<std::string>{
           "ID3D11DeviceContext::UpdateSubresource(this = 0x200, pDstResource = 0x300, "
           "DstSubresource = 0, pDstBox = &{left = 0, top = 0, front = 0, right = 4000, bottom = "
           "1, back = 1}, pSrcData = blob(4), SrcRowPitch = 0, SrcDepthPitch = 0)\n",
           "ID3D11DeviceContext::UpdateSubresource(this = 0x200, pDstResource = 0x300, "
           "DstSubresource = 5, pDstBox = NULL, pSrcData = blob(4), SrcRowPitch = 0, "
           "SrcDepthPitch = 0)\n",
           "ID3D11DeviceContext::Map(this = 0x200, pResource = 0x300, Subresource = 99, MapType = "
           "D3D11_MAP_READ, MapFlags = 0x0, pMappedResource = &{pData = 0x9000, RowPitch = 0, "
           "DepthPitch = 0}) = S_OK\n"}) {
    Played p = PlayText(absl::StrCat(kDevice, kBuffer, bad));
    ASSERT_FALSE(p.report.ok()) << bad;
    EXPECT_THAT(p.report.status().message(), HasSubstr("line 3: ")) << bad;
    EXPECT_THAT(p.report.status().message(), HasSubstr("subresource")) << bad;
  }
}

constexpr char kDynamicTexture[] =
    "ID3D11Device::CreateTexture2D(this = 0x100, pDesc = &{Width = 64, Height = 64, MipLevels = "
    "1, ArraySize = 1, Format = DXGI_FORMAT_R8G8B8A8_UNORM, SampleDesc = {Count = 1, Quality = "
    "0}, Usage = D3D11_USAGE_DYNAMIC, BindFlags = D3D11_BIND_SHADER_RESOURCE, CPUAccessFlags = "
    "D3D11_CPU_ACCESS_WRITE, MiscFlags = 0x0}, pInitialData = NULL, ppTexture2D = &0x300) = "
    "S_OK\n";

TEST(ApitracePlayerTest, MappedTextureBytesOfAnotherDriversPitchAreRepitched) {
  // The capture's driver padded each 256-byte row to 1024 bytes: its memcpy is 64 KiB, four
  // times what the model driver maps; the rows land in the model's layout.
  const std::string text = absl::StrCat(
      kDevice, kDynamicTexture,
      "ID3D11DeviceContext::Map(this = 0x200, pResource = 0x300, Subresource = 0, MapType = "
      "D3D11_MAP_WRITE_DISCARD, MapFlags = 0x0, pMappedResource = &{pData = 0x9000000, RowPitch "
      "= 1024, DepthPitch = 65536}) = S_OK\n",
      "memcpy(dest = 0x9000000, src = blob(65536), n = 65536)\n",
      "ID3D11DeviceContext::Unmap(this = 0x200, pResource = 0x300, Subresource = 0)\n",
      "memcpy(dest = 0x9000000, src = blob(4), n = 4)\n");
  Played p = PlayText(text);
  ASSERT_FALSE(p.report.ok());  // the last memcpy: after the Unmap
  EXPECT_THAT(p.report.status().message(), HasSubstr("line 6: memcpy: dest is in no mapped range"));
  EXPECT_THAT(p.ddis,
              HasSubstr("line 5 ID3D11DeviceContext::Unmap\n    IC.DynamicResourceUnmap\n"));
}

TEST(ApitracePlayerTest, AMapThatFailedInTheCaptureEndsAtOnce) {
  const std::string text = absl::StrCat(
      kDevice, kDynamicTexture,
      "ID3D11DeviceContext::Map(this = 0x200, pResource = 0x300, Subresource = 0, MapType = "
      "D3D11_MAP_WRITE_DISCARD, MapFlags = D3D11_MAP_FLAG_DO_NOT_WAIT, pMappedResource = "
      "&{pData = NULL, RowPitch = 0, DepthPitch = 0}) = DXGI_ERROR_WAS_STILL_DRAWING\n");
  Played p = PlayText(text);
  ASSERT_TRUE(p.report.ok()) << p.report.status();
  ASSERT_EQ(p.report->substitutes.size(), 1u);
  EXPECT_THAT(p.report->substitutes[0].reason, HasSubstr("DXGI_ERROR_WAS_STILL_DRAWING"));
  EXPECT_THAT(p.ddis, HasSubstr("    IC.DynamicResourceMapDiscard\n    IC.DynamicResourceUnmap\n"));
}

TEST(ApitracePlayerTest, BlobFilesOfDumpBlobsAreRead) {
  char tmpl[] = "/tmp/cltrace_player_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  {
    std::ofstream out(dir + "/blob_call4.bin", std::ios::binary);
    out << "0123456789abcdef";
  }
  const std::string text = absl::StrCat(
      kDevice,
      "ID3D11Device::CreateBuffer(this = 0x100, pDesc = &{ByteWidth = 16, Usage = "
      "D3D11_USAGE_DEFAULT, BindFlags = D3D11_BIND_CONSTANT_BUFFER, CPUAccessFlags = 0x0, "
      "MiscFlags = 0x0, StructureByteStride = 0}, pInitialData = NULL, ppBuffer = &0x300) = "
      "S_OK\n",
      "ID3D11DeviceContext::UpdateSubresource(this = 0x200, pDstResource = 0x300, "
      "DstSubresource = 0, pDstBox = NULL, pSrcData = blob(\"blob_call4.bin\"), SrcRowPitch = 0, "
      "SrcDepthPitch = 0)\n",
      "ID3D11DeviceContext::UpdateSubresource(this = 0x200, pDstResource = 0x300, "
      "DstSubresource = 0, pDstBox = NULL, pSrcData = blob(\"missing.bin\"), SrcRowPitch = 0, "
      "SrcDepthPitch = 0)\n");
  Played p = PlayText(text, false, dir);
  ASSERT_FALSE(p.report.ok());
  EXPECT_THAT(p.report.status().message(),
              HasSubstr(absl::StrCat("line 4: ID3D11DeviceContext::UpdateSubresource: cannot "
                                     "read blob file ",
                                     dir, "/missing.bin")));
  EXPECT_THAT(p.ddis, HasSubstr("line 3 ID3D11DeviceContext::UpdateSubresource\n"
                                "    IC.DefaultConstantBufferUpdateSubresourceUP\n"));
  (void)!std::system(absl::StrCat("rm -rf ", dir).c_str());
}

TEST(ApitracePlayerTest, ArgumentsOfTheWrongKindAreBadInput) {
  for (const std::string& bad : std::vector<std::string>{
           "ID3D11DeviceContext::Draw(this = 0x200, VertexCount = \"three\", "
           "StartVertexLocation = 0)\n",
           "ID3D11DeviceContext::Draw(this = 0x200, StartVertexLocation = 0)\n",
           "ID3D11DeviceContext::IASetPrimitiveTopology(this = 0x200, Topology = NO_SUCH)\n",
           "ID3D11DeviceContext::Draw(this = 0x100, VertexCount = 3, StartVertexLocation = 0)\n",
           "ID3D11DeviceContext::Flush(this = 0x999)\n",
           "ID3D11DeviceContext::Draw(0x200, 3, 0)\n"}) {
    Played p = PlayText(absl::StrCat(kDevice, bad));
    ASSERT_FALSE(p.report.ok()) << bad;
    EXPECT_EQ(p.report.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(p.report.status().message(), HasSubstr("line 2: ")) << bad;
  }
}

constexpr int kEditRounds = 1000;

// Edited captures (numbers replaced by extreme values, calls dropped, duplicated or swapped) are
// played or refused as bad input, never a crash: the player validates what it hands the
// runtime model. A fixed seed keeps the run deterministic.
TEST_P(AppCaptureTest, EditedCapturesArePlayedOrRefusedNeverACrash) {
  std::vector<std::string> lines;
  {
    std::stringstream in(ReadFile(AppPath(absl::StrCat(GetParam(), ".txt"))));
    for (std::string line; std::getline(in, line);) {
      if (!line.empty() && line[0] != '/') lines.push_back(line);
    }
  }
  ASSERT_GT(lines.size(), 20u);
  std::mt19937 rng(18);
  const char* const kNumbers[] = {"0",     "1",  "7",          "4294967295", "2147483648",
                                  "65536", "-1", "0x7fffffff", "1e+30",      "nan"};
  int refused = 0;
  for (int round = 0; round < kEditRounds; ++round) {
    std::vector<std::string> edited = lines;
    for (int k = 0; k < 3; ++k) {
      const size_t i = rng() % edited.size();
      switch (rng() % 4) {
        case 0: {  // a number argument becomes an extreme value
          std::string& l = edited[i];
          size_t at = l.find(" = ", l.find('(') + 1 + rng() % 40);
          if (at != std::string::npos && at + 3 < l.size() &&
              (std::isdigit(static_cast<unsigned char>(l[at + 3])) != 0)) {
            size_t end = l.find_first_of(",)}", at + 3);
            l.replace(at + 3, end - at - 3, kNumbers[rng() % std::size(kNumbers)]);
          }
          break;
        }
        case 1:
          edited.erase(edited.begin() + static_cast<std::ptrdiff_t>(i));
          break;
        case 2:
          edited.insert(edited.begin() + static_cast<std::ptrdiff_t>(i), edited[i]);
          break;
        default:
          std::swap(edited[i], edited[rng() % edited.size()]);
      }
    }
    std::string text;
    for (const std::string& l : edited) absl::StrAppend(&text, l, "\n");
    Played p = PlayText(text);
    if (!p.report.ok()) {
      ++refused;
      EXPECT_EQ(p.report.status().code(), absl::StatusCode::kInvalidArgument) << p.report.status();
    }
  }
  EXPECT_GT(refused, 0);
}

}  // namespace
}  // namespace cltrace::apitrace
