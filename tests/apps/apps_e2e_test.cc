// `cltrace-workload apitrace FILE` end to end: each capture of corpus/apps/ is recorded with
// `cltrace record`, checked clean by `cltrace check` and replayed identically by
// `cltrace replay`; a malformed capture is bad input with its line and column (exit 2),
// --strict turns a call the player does not implement into an error, and a binary .trace
// without the apitrace tool says how to install it.
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/command_test.h"

namespace cltrace {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using Result = ::cltrace::testing::CommandResult;

std::string App(const std::string& name) {
  return absl::StrCat(CLTRACE_SOURCE_DIR, "/corpus/apps/", name);
}

class AppsE2eTest : public ::cltrace::testing::CommandTest,
                    public ::testing::WithParamInterface<const char*> {};

TEST_P(AppsE2eTest, RecordsChecksCleanAndReplaysIdentically) {
  const std::string trace = Path("app.cltrace");
  Result rec = Run(absl::StrCat(CLTRACE_BIN, " record -o ", trace, " -- ", CLTRACE_WORKLOAD_BIN,
                                " apitrace ", App(absl::StrCat(GetParam(), ".txt"))));
  ASSERT_EQ(rec.exit, 0) << rec.out << rec.err;
  EXPECT_THAT(rec.out, StartsWith("apitrace: played "));
  EXPECT_THAT(rec.out, Not(HasSubstr("not played:")));
  Result check = Run(absl::StrCat(CLTRACE_BIN, " check ", trace));
  EXPECT_EQ(check.exit, 0) << check.out << check.err;
  EXPECT_THAT(check.out, HasSubstr(" 0 violations"));
  Result replay =
      Run(absl::StrCat(CLTRACE_BIN, " replay --driver ", CLTRACE_REFDRIVER_LIB, " ", trace));
  EXPECT_EQ(replay.exit, 0) << replay.out << replay.err;
  EXPECT_THAT(replay.out, StartsWith("replay: identical ("));
}

INSTANTIATE_TEST_SUITE_P(Apps, AppsE2eTest,
                         ::testing::Values("triangle", "maps_queries", "deferred_threads",
                                           "api_surface"));

// A capture that executes a command list after its final Release: the recording shows the
// execute of a recycle-destroyed handle and `cltrace check` reports R40.
TEST_F(AppsE2eTest, ReleasedListExecutedMakesCheckReportR40) {
  const std::string trace = Path("bug.cltrace");
  Result rec = Run(absl::StrCat(CLTRACE_BIN, " record -o ", trace, " -- ", CLTRACE_WORKLOAD_BIN,
                                " apitrace ", App("bug_released_list_executed.txt")));
  EXPECT_EQ(rec.exit, 1) << rec.out << rec.err;  // the program's violation, as for --bug modes
  EXPECT_THAT(rec.out, HasSubstr("substituted: ID3D11DeviceContext::ExecuteCommandList x 1"));
  Result check = Run(absl::StrCat(CLTRACE_BIN, " check ", trace));
  EXPECT_EQ(check.exit, 1) << check.out << check.err;
  EXPECT_THAT(check.out, HasSubstr("R40 seq="));
  EXPECT_THAT(check.out, HasSubstr(" 1 violations"));
}

class ApitraceCommandTest : public ::cltrace::testing::CommandTest {
 public:
  Result Workload(const std::string& args) {
    return Run(absl::StrCat(CLTRACE_WORKLOAD_BIN, " apitrace ", args));
  }
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = Path(name);
    std::FILE* f = std::fopen(path.c_str(), "wb");
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
    return path;
  }
};

// Initial data reaches the driver as CreateResource's pInitialDataUP, the bytes recorded as the
// call's content (a buffer, and a 2D texture array of 2 slices with 2 mips whose mip 0 rows are
// padded), and a replay hands the recorded bytes to the driver again.
TEST_F(ApitraceCommandTest, InitialDataIsRecordedAsCreateResourceContentAndReplayed) {
  const std::string buffer = "0123456789abcdef";
  // 4x2 RGBA8 at SysMemPitch 20: 16 bytes, 4 bytes the runtime never reads, 16 bytes.
  const std::string mip0a = "AAAABBBBCCCCDDDD____EEEEFFFFGGGGHHHH", mip1a = "iiiijjjj";
  const std::string mip0b = "KKKKLLLLMMMMNNNN____OOOOPPPPQQQQRRRR", mip1b = "sssstttt";
  for (const auto& [name, bytes] :
       {std::pair{"b.bin", buffer}, std::pair{"t0.bin", mip0a}, std::pair{"t1.bin", mip1a},
        std::pair{"t2.bin", mip0b}, std::pair{"t3.bin", mip1b}}) {
    Write(name, bytes);
  }
  auto entry = [&](const char* file, int pitch) {
    return absl::StrCat("{pSysMem = blob(\"", Path(file), "\"), SysMemPitch = ", pitch,
                        ", SysMemSlicePitch = 0}");
  };
  const std::string file = Write(
      "initial.txt",
      absl::StrCat(
          "1 D3D11CreateDevice(pAdapter = NULL, DriverType = D3D_DRIVER_TYPE_HARDWARE, Software = "
          "NULL, Flags = 0x0, pFeatureLevels = NULL, FeatureLevels = 0, SDKVersion = 7, ppDevice = "
          "&0x100, pFeatureLevel = &D3D_FEATURE_LEVEL_11_0, ppImmediateContext = &0x200) = S_OK\n"
          "2 ID3D11Device::CreateBuffer(this = 0x100, pDesc = &{ByteWidth = 16, Usage = "
          "D3D11_USAGE_IMMUTABLE, BindFlags = D3D11_BIND_VERTEX_BUFFER, CPUAccessFlags = 0x0, "
          "MiscFlags = 0x0, StructureByteStride = 0}, pInitialData = &",
          entry("b.bin", 0),
          ", ppBuffer = &0x300) = S_OK\n"
          "3 ID3D11Device::CreateTexture2D(this = 0x100, pDesc = &{Width = 4, Height = 2, "
          "MipLevels = 2, ArraySize = 2, Format = DXGI_FORMAT_R8G8B8A8_UNORM, SampleDesc = "
          "{Count = 1, Quality = 0}, Usage = D3D11_USAGE_IMMUTABLE, BindFlags = "
          "D3D11_BIND_SHADER_RESOURCE, CPUAccessFlags = 0x0, MiscFlags = 0x0}, pInitialData = {",
          entry("t0.bin", 20), ", ", entry("t1.bin", 8), ", ", entry("t2.bin", 20), ", ",
          entry("t3.bin", 8),
          "}, ppTexture2D = &0x400) = S_OK\n"
          "4 ID3D11DeviceContext::Flush(this = 0x200)\n"));
  const std::string trace = Path("initial.cltrace");
  Result rec = Run(absl::StrCat(CLTRACE_BIN, " record -o ", trace, " -- ", CLTRACE_WORKLOAD_BIN,
                                " apitrace ", file));
  ASSERT_EQ(rec.exit, 0) << rec.out << rec.err;
  EXPECT_THAT(rec.out, HasSubstr("apitrace: played 4 of 4 calls on 1 thread\n"));
  EXPECT_THAT(rec.out, Not(HasSubstr("substituted:")));
  Result dump = Run(absl::StrCat(CLTRACE_BIN, " dump --json ", trace));
  ASSERT_EQ(dump.exit, 0) << dump.err;
  std::vector<std::string> creates, updates;
  for (absl::string_view line : absl::StrSplit(dump.out, '\n')) {
    if (absl::StrContains(line, "\"fn\":\"CreateResource\"")) creates.emplace_back(line);
    if (absl::StrContains(line, "\"fn\":\"ResourceUpdateSubresourceUP\""))
      updates.emplace_back(line);
  }
  EXPECT_THAT(updates, ::testing::IsEmpty()) << "initial data is no longer an update";
  ASSERT_EQ(creates.size(), 2u) << dump.out;
  EXPECT_THAT(creates[0],
              HasSubstr(absl::StrCat("\"content\":\"", absl::BytesToHexString(buffer), "\"")));
  EXPECT_THAT(creates[1],
              HasSubstr(absl::StrCat("\"content\":\"",
                                     absl::BytesToHexString(mip0a + mip1a + mip0b + mip1b), "\"")));
  Result check = Run(absl::StrCat(CLTRACE_BIN, " check ", trace));
  EXPECT_EQ(check.exit, 0) << check.out << check.err;
  Result replay =
      Run(absl::StrCat(CLTRACE_BIN, " replay --driver ", CLTRACE_REFDRIVER_LIB, " ", trace));
  EXPECT_EQ(replay.exit, 0) << replay.out << replay.err;
  EXPECT_THAT(replay.out, StartsWith("replay: identical ("));
  EXPECT_THAT(replay.out,
              HasSubstr("content: 2 resources created with their recorded initial data (104 "
                        "bytes)"));
}

TEST_F(ApitraceCommandTest, MalformedLineIsBadInputWithLineAndColumn) {
  const std::string file =
      Write("bad.txt",
            "1 ID3D11DeviceContext::Flush(this = 0x1)\n2 ID3D11DeviceContext::Draw(this = "
            "0x1, VertexCount = 3 StartVertexLocation = 0)\n");
  Result r = Workload(file);
  EXPECT_EQ(r.exit, 2);
  EXPECT_THAT(r.err, HasSubstr("line 2, column "));
}

TEST_F(ApitraceCommandTest, UnimplementedCallsAreListedAndStrictMakesThemAnError) {
  const std::string file = Write(
      "skip.txt",
      "1 D3D11CreateDevice(pAdapter = NULL, DriverType = D3D_DRIVER_TYPE_HARDWARE, Software = "
      "NULL, Flags = 0x0, pFeatureLevels = NULL, FeatureLevels = 0, SDKVersion = 7, ppDevice = "
      "&0x100, pFeatureLevel = &D3D_FEATURE_LEVEL_11_0, ppImmediateContext = &0x200) = S_OK\n"
      "2 ID3D11DeviceContext::DiscardResource(this = 0x200, pResource = NULL)\n"
      "3 ID3D11DeviceContext::DiscardResource(this = 0x200, pResource = NULL)\n");
  Result r = Workload(file);
  EXPECT_EQ(r.exit, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("apitrace: played 1 of 3 calls on 1 thread\n"
                               "not played: ID3D11DeviceContext::DiscardResource x 2 (first at "
                               "line 2): not implemented\n"));
  Result strict = Workload(absl::StrCat("--strict ", file));
  EXPECT_EQ(strict.exit, 2);
  EXPECT_THAT(strict.err, HasSubstr("line 2: ID3D11DeviceContext::DiscardResource: not played"));
}

// ID3DUserDefinedAnnotation markers make no DDI call; the recording shows each on the
// annotation of the next DDI call its thread made, after that call's API name.
TEST_F(ApitraceCommandTest, MarkersBecomeAnnotationsOfTheNextDdiCall) {
  const std::string file = Write(
      "markers.txt",
      "1 D3D11CreateDevice(pAdapter = NULL, DriverType = D3D_DRIVER_TYPE_HARDWARE, Software = "
      "NULL, Flags = 0x0, pFeatureLevels = NULL, FeatureLevels = 0, SDKVersion = 7, ppDevice = "
      "&0x100, pFeatureLevel = &D3D_FEATURE_LEVEL_11_0, ppImmediateContext = &0x200) = S_OK\n"
      "2 ID3D11DeviceContext::QueryInterface(this = 0x200, riid = IID_ID3DUserDefinedAnnotation, "
      "ppvObject = &0x250) = S_OK\n"
      "3 ID3DUserDefinedAnnotation::BeginEvent(this = 0x250, Name = L\"Shadow pass\") = 0\n"
      "4 ID3D11DeviceContext::Draw(this = 0x200, VertexCount = 3, StartVertexLocation = 0)\n"
      "5 ID3DUserDefinedAnnotation::SetMarker(this = 0x250, Name = L\"mid\")\n"
      "6 ID3DUserDefinedAnnotation::EndEvent(this = 0x250) = 0\n"
      "7 ID3D11DeviceContext::Draw(this = 0x200, VertexCount = 6, StartVertexLocation = 0)\n"
      "8 ID3D11DeviceContext::Flush(this = 0x200)\n");
  const std::string trace = Path("markers.cltrace");
  Result rec = Run(absl::StrCat(CLTRACE_BIN, " record -o ", trace, " -- ", CLTRACE_WORKLOAD_BIN,
                                " apitrace ", file));
  ASSERT_EQ(rec.exit, 0) << rec.out << rec.err;
  EXPECT_THAT(rec.out, HasSubstr("apitrace: played 8 of 8 calls on 1 thread\n"));
  Result dump = Run(absl::StrCat(CLTRACE_BIN, " dump ", trace));
  ASSERT_EQ(dump.exit, 0) << dump.err;
  std::vector<std::string> annotated;  // the lines of the DDI calls after a marker
  std::vector<std::string> draws;
  for (absl::string_view line : absl::StrSplit(dump.out, '\n')) {
    if (absl::StrContains(line, "Event") || absl::StrContains(line, "SetMarker")) {
      annotated.emplace_back(line);
    }
    if (absl::StrContains(line, "IC::Draw(")) draws.emplace_back(line);
  }
  ASSERT_EQ(draws.size(), 2u) << dump.out;
  ASSERT_EQ(annotated.size(), 2u) << dump.out;
  // The first Draw (VertexCount=3) carries the BeginEvent, the second both later markers.
  EXPECT_EQ(annotated[0], draws[0]);
  EXPECT_THAT(annotated[0], HasSubstr("VertexCount=3"));
  EXPECT_THAT(annotated[0], HasSubstr("# Draw | BeginEvent: Shadow pass"));
  EXPECT_EQ(annotated[1], draws[1]);
  EXPECT_THAT(annotated[1], HasSubstr("# Draw | SetMarker: mid | EndEvent"));
  Result check = Run(absl::StrCat(CLTRACE_BIN, " check ", trace));
  EXPECT_EQ(check.exit, 0) << check.out << check.err;
}

TEST_F(ApitraceCommandTest, BinaryCaptureNeedsTheApitraceTool) {
  const std::string file = Write("app.trace", std::string("at\0\0\x01\x02", 6));
  // A PATH without the apitrace tool.
  Result r = Run(absl::StrCat("PATH=/nonexistent ", CLTRACE_WORKLOAD_BIN, " apitrace ", file));
  EXPECT_EQ(r.exit, 2);
  EXPECT_THAT(r.err, HasSubstr("apt-get install apitrace"));
}

// With an `apitrace` on PATH (here a stand-in script that prints a dump and writes the blob
// file `--blobs` names into its working directory) a binary capture is converted and played,
// the blob read from the scratch directory the conversion ran in.
TEST_F(ApitraceCommandTest, BinaryCaptureIsConvertedByApitraceDump) {
  const std::string bin = Path("bin");
  ASSERT_EQ(Run(absl::StrCat("mkdir -p ", bin)).exit, 0);
  Write("dump.txt",
        "1 @a D3D11CreateDevice(pAdapter = NULL, DriverType = D3D_DRIVER_TYPE_HARDWARE, Software "
        "= NULL, Flags = 0x0, pFeatureLevels = NULL, FeatureLevels = 0, SDKVersion = 7, ppDevice "
        "= &0x100, pFeatureLevel = &D3D_FEATURE_LEVEL_11_0, ppImmediateContext = &0x200) = S_OK\n"
        "2 @a ID3D11Device::CreateBuffer(this = 0x100, pDesc = &{ByteWidth = 16, Usage = "
        "D3D11_USAGE_DEFAULT, BindFlags = D3D11_BIND_CONSTANT_BUFFER, CPUAccessFlags = 0x0, "
        "MiscFlags = 0x0, StructureByteStride = 0}, pInitialData = NULL, ppBuffer = &0x300) = "
        "S_OK\n"
        "3 @a ID3D11DeviceContext::UpdateSubresource(this = 0x200, pDstResource = 0x300, "
        "DstSubresource = 0, pDstBox = NULL, pSrcData = blob(\"blob_call3.bin\"), SrcRowPitch = "
        "0, SrcDepthPitch = 0)\n");
  Write("bin/apitrace",
        absl::StrCat("#!/bin/sh\n"
                     "[ \"$1 $2 $3 $4\" = \"dump --blobs --thread-ids=yes --color=never\" ] || "
                     "exit 9\n"
                     "printf 0123456789abcdef > blob_call3.bin\n"
                     "cat '",
                     Path("dump.txt"), "'\n"));
  ASSERT_EQ(Run(absl::StrCat("chmod +x ", bin, "/apitrace")).exit, 0);
  const std::string trace = Write("app.trace", std::string("at\0\0\x01\x02", 6));
  Result r = Run(absl::StrCat("PATH=", bin, ":$PATH ", CLTRACE_WORKLOAD_BIN, " apitrace ", trace));
  EXPECT_EQ(r.exit, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("apitrace: played 3 of 3 calls on 1 thread"));
  // A conversion that fails is bad input.
  Write("bin/apitrace", "#!/bin/sh\nexit 1\n");
  Result bad =
      Run(absl::StrCat("PATH=", bin, ":$PATH ", CLTRACE_WORKLOAD_BIN, " apitrace ", trace));
  EXPECT_EQ(bad.exit, 2);
  EXPECT_THAT(bad.err, HasSubstr("`apitrace dump` could not read"));
}

TEST_F(ApitraceCommandTest, MissingFileAndUsage) {
  EXPECT_EQ(Workload(Path("none.txt")).exit, 2);
  EXPECT_EQ(Workload("").exit, 2);
  EXPECT_EQ(Workload("--bogus x").exit, 2);
}

}  // namespace
}  // namespace cltrace
