// Content on replay (FORMAT.md §3.8): the bytes the application handed the driver reach the
// replay driver. Observed directly through testing/probe_driver.cc (which logs the bytes of
// every upload and of every mapping at Unmap) and through the reference driver's submitted
// commands (which carry a hash of the bytes it was given); plus the re-pitching of a mapping
// whose replay pitches differ from the recorded ones, and every way content can be bad input.
#include <dlfcn.h>

#include <cstring>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/functional/function_ref.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "ddi/catalog.h"
#include "format/event.h"
#include "format/jsonl.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "replayer/internal/call_meta.h"
#include "replayer/internal/content.h"
#include "replayer/replay.h"
#include "replayer/testing/outcome_testing.h"

namespace cltrace::replay {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// The probe driver's out-of-band interface. The replayer dlopens the same library, so the
// test's handle reaches the same instance.
class Probe {
 public:
  Probe() {
    lib_ = dlopen(CLTRACE_PROBE_DRIVER_LIB, RTLD_NOW | RTLD_LOCAL);
    EXPECT_NE(lib_, nullptr) << dlerror();
    if (lib_ == nullptr) return;
    configure_ =
        reinterpret_cast<void (*)(uint32_t, uint32_t)>(dlsym(lib_, "CltraceProbeConfigure"));
    log_ = reinterpret_cast<const char* (*)()>(dlsym(lib_, "CltraceProbeLog"));
    reset_ = reinterpret_cast<void (*)()>(dlsym(lib_, "CltraceProbeReset"));
  }
  void Reset() { reset_(); }
  void Configure(uint32_t row_pad, uint32_t buffer_limit) { configure_(row_pad, buffer_limit); }
  std::string Log() { return log_(); }

 private:
  void* lib_ = nullptr;
  void (*configure_)(uint32_t, uint32_t) = nullptr;
  const char* (*log_)() = nullptr;
  void (*reset_)() = nullptr;
};

std::string Hex(const std::vector<uint8_t>& bytes) {
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

// n bytes counting up from `first`.
std::vector<uint8_t> Ramp(size_t n, uint8_t first) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(first + i);
  return v;
}

// Bring-up for the probe driver (its CalcPrivate* answers) and a 16-byte buffer 0xa001.
constexpr char kProbeDevice[] =
    R"({"seq":10,"tid":1,"fn":"CalcPrivateDeviceSize","args":{"hAdapter":"adapter","Interface":720906,"Version":131072},"ret":64}
{"seq":20,"tid":1,"fn":"CreateDevice","args":{"hAdapter":"adapter","hRTDevice":"rtdev","Interface":720906,"Version":131072,"pKTCallbacks":"0x2000","p11DeviceFuncs":"0x3000","hDrvDevice":"ic","DXGIBaseDDI.pDXGIDDIBaseFunctions":"0x4000","hRTCoreLayer":"rtcore.ic","p11UMCallbacks":"0x5000"},"ret":"S_OK"}
{"seq":30,"tid":1,"fn":"CalcPrivateResourceSize","args":{"hDevice":"ic","ResourceDimension":"D3D10DDIRESOURCE_BUFFER","pMipInfoList":[{"TexelWidth":16,"TexelHeight":1,"TexelDepth":1,"PhysicalWidth":16,"PhysicalHeight":1,"PhysicalDepth":1}],"MipLevels":1,"ArraySize":1,"SampleDesc.Count":1},"ret":8}
{"seq":40,"tid":1,"fn":"CreateResource","args":{"hDevice":"ic","ResourceDimension":"D3D10DDIRESOURCE_BUFFER","pMipInfoList":[{"TexelWidth":16,"TexelHeight":1,"TexelDepth":1,"PhysicalWidth":16,"PhysicalHeight":1,"PhysicalDepth":1}],"MipLevels":1,"ArraySize":1,"SampleDesc.Count":1,"hResource":"0xa001","hRTResource":"rt1"}}
)";

// A 3 × 2 R8G8B8A8_UNORM texture 0xa002 (rows of 12 bytes).
constexpr char kProbeTexture[] =
    R"({"seq":42,"tid":1,"fn":"CalcPrivateResourceSize","args":{"hDevice":"ic","ResourceDimension":"D3D10DDIRESOURCE_TEXTURE2D","Format":28,"pMipInfoList":[{"TexelWidth":3,"TexelHeight":2,"TexelDepth":1,"PhysicalWidth":3,"PhysicalHeight":2,"PhysicalDepth":1}],"MipLevels":1,"ArraySize":1,"SampleDesc.Count":1},"ret":8}
{"seq":44,"tid":1,"fn":"CreateResource","args":{"hDevice":"ic","ResourceDimension":"D3D10DDIRESOURCE_TEXTURE2D","Format":28,"pMipInfoList":[{"TexelWidth":3,"TexelHeight":2,"TexelDepth":1,"PhysicalWidth":3,"PhysicalHeight":2,"PhysicalDepth":1}],"MipLevels":1,"ArraySize":1,"SampleDesc.Count":1,"hResource":"0xa002","hRTResource":"rt2"}}
)";

// `line` (a JSONL object, with or without its newline) with a "content" key added.
std::string WithContent(absl::string_view line, const std::vector<uint8_t>& content) {
  line = absl::StripSuffix(line, "\n");
  line.remove_suffix(1);  // the closing brace
  return absl::StrCat(line, ",\"content\":\"", Hex(content), "\"}\n");
}

std::string Upload(uint64_t seq, const std::string& resource, const std::string& box_and_pitches,
                   const std::vector<uint8_t>* content) {
  const std::string line = absl::StrCat(
      R"({"seq":)", seq,
      R"(,"tid":1,"fn":"ResourceUpdateSubresourceUP","args":{"hDevice":"ic","hDstResource":")",
      resource, R"(","DstSubresource":0,"pSysMemUP":"0x8000",)", box_and_pitches, "}}");
  return content == nullptr ? line + "\n" : WithContent(line, *content);
}

std::string Map(uint64_t seq, const std::string& fn, const std::string& context,
                const std::string& resource, const std::string& rest, uint32_t tid = 1) {
  return absl::StrCat(R"({"seq":)", seq, R"(,"tid":)", tid, R"(,"fn":")", fn,
                      R"(","args":{"hDevice":")", context, R"(","hResource":")", resource,
                      R"(","Subresource":0,)", rest, "}}\n");
}

std::string Unmap(uint64_t seq, const std::string& fn, const std::string& context,
                  const std::string& resource, const std::vector<uint8_t>* content,
                  uint32_t tid = 1) {
  const std::string line = absl::StrCat(R"({"seq":)", seq, R"(,"tid":)", tid, R"(,"fn":")", fn,
                                        R"(","args":{"hDevice":")", context, R"(","hResource":")",
                                        resource, R"(","Subresource":0}})");
  return content == nullptr ? line + "\n" : WithContent(line, *content);
}

constexpr char kDiscard16[] =
    R"("DDIMap":"D3D10_DDI_MAP_WRITE_DISCARD","Flags":0,"pData":"0x9000","RowPitch":16,"DepthPitch":16)";

struct Replayed {
  ReplayResult result;
  std::string report;
  int exit = -1;
  std::string log;  // the probe driver's log of the replay
};

class ContentReplayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    probe_.Configure(/*row_pad=*/0, /*buffer_limit=*/0);
    probe_.Reset();
  }

  Replayed Run(const std::string& jsonl, ReplayOptions options) {
    Replayed o;
    absl::StatusOr<format::JsonlTrace> trace = format::ParseJsonl(jsonl);
    EXPECT_TRUE(trace.ok()) << trace.status();
    if (!trace.ok()) return o;
    if (options.driver_path.empty()) options.driver_path = CLTRACE_PROBE_DRIVER_LIB;
    absl::StatusOr<ReplayResult> r =
        Replay(options, trace->events, trace->handles, trace->strings, trace->contents);
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok()) return o;
    o.result = *r;
    o.report = FormatReport(*r, trace->events, trace->handles, trace->strings, options);
    o.log = probe_.Log();
    probe_.Reset();
    std::ostringstream out, err;
    o.exit = RunReplay(options, trace->events, trace->handles, trace->strings, trace->contents, out,
                       err);
    EXPECT_EQ(out.str(), o.report) << "RunReplay and Replay+FormatReport disagree";
    EXPECT_EQ(probe_.Log(), o.log) << "the driver saw other bytes on the second replay";
    return o;
  }
  // Replays `trace` single-threaded and on the recorded threads, each with a fresh probe:
  // identical to the recording, the probe logged `log`, and `more` holds of the outcome.
  void ForBothThreadModes(const std::string& trace, const std::string& log,
                          absl::FunctionRef<void(const Replayed&)> more) {
    for (ThreadMode mode : {ThreadMode::kSingle, ThreadMode::kRecorded}) {
      probe_.Reset();
      Replayed o = Run(trace, mode);
      EXPECT_EQ(o.exit, kExitIdentical) << o.report;
      EXPECT_EQ(o.log, log);
      more(o);
    }
  }
  // tests/replay/small_cl.jsonl with `block` inserted before the line of seq `before`.
  static std::string SmallClWith(uint64_t before, const std::string& block) {
    std::ifstream in(CLTRACE_SOURCE_DIR "/tests/replay/small_cl.jsonl");
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string at = absl::StrCat("{\"seq\":", before, ",");
    std::string out;
    for (absl::string_view line : absl::StrSplit(ss.str(), '\n', absl::SkipEmpty())) {
      if (absl::StartsWith(line, at)) absl::StrAppend(&out, block);
      absl::StrAppend(&out, line, "\n");
    }
    return out;
  }
  // The reference driver hashes the first bytes it is given into the command it submits: the
  // submitted-command digest (--digest) of `trace_of(content)` replayed with `options` (one
  // submission each) is the same for zero content as for none (`zeros_note`), differs for two
  // different ramps, and repeats for the same content.
  void ExpectDigestFollowsContent(
      const std::function<std::string(const std::vector<uint8_t>*)>& trace_of,
      ReplayOptions options, const char* zeros_note) {
    options.driver_path = CLTRACE_REFDRIVER_LIB;
    options.digest = true;
    const std::vector<uint8_t> zeros(256, 0), a = Ramp(256, 1), b = Ramp(256, 2);
    auto digest = [&](const std::vector<uint8_t>* content) {
      Replayed o = Run(trace_of(content), options);
      EXPECT_EQ(o.result.kernel.submissions, 1u) << o.report;
      return o.result.kernel.digest;
    };
    const uint64_t none = digest(nullptr);
    EXPECT_EQ(digest(&zeros), none) << zeros_note;
    EXPECT_NE(digest(&a), none);
    EXPECT_NE(digest(&b), digest(&a));
    EXPECT_EQ(digest(&a), digest(&a));
    EXPECT_EQ(digest(&b), digest(&b));
  }
  Replayed Run(const std::string& jsonl, ThreadMode mode = ThreadMode::kSingle) {
    ReplayOptions options;
    options.threads = mode;
    return Run(jsonl, options);
  }
  Probe probe_;
};

// ---- Uploads ---------------------------------------------------------------------------------

TEST_F(ContentReplayTest, UploadSourceIsTheContent) {
  const std::vector<uint8_t> bytes = Ramp(16, 0x10);
  const std::string trace =
      absl::StrCat(kProbeDevice, Upload(50, "0xa001", R"("pDstBox":null)", &bytes));
  ForBothThreadModes(
      trace, absl::StrCat("upload 1 sub 0: ", Hex(bytes), "\n"), [](const Replayed& o) {
        EXPECT_EQ(o.result.content.uploads, 1u);
        EXPECT_EQ(o.result.content.bytes, 16u);
        EXPECT_THAT(o.report, HasSubstr("\ncontent: 1 UpdateSubresourceUP sources and 0 "
                                        "mapped subresources handed to the driver (16 "
                                        "bytes)\n"));
      });
}

TEST_F(ContentReplayTest, UploadWithoutContentIsTheZeroRegion) {
  Replayed o = Run(absl::StrCat(kProbeDevice, Upload(50, "0xa001", R"("pDstBox":null)", nullptr)));
  EXPECT_EQ(o.exit, kExitIdentical) << o.report;
  EXPECT_EQ(o.log, absl::StrCat("upload 1 sub 0: ", std::string(32, '0'), "\n"));
  EXPECT_THAT(o.report, Not(HasSubstr("content:")));
}

TEST_F(ContentReplayTest, UploadOfABoxAndOfPitchedRows) {
  const std::vector<uint8_t> four = {0xde, 0xad, 0xbe, 0xef};
  // Two rows of 12 bytes at RowPitch 20: 32 bytes, the 8 between the rows are not texels.
  std::vector<uint8_t> rows = Ramp(32, 0x40);
  const std::string trace = absl::StrCat(
      kProbeDevice, kProbeTexture,
      Upload(50, "0xa001", R"("left":4,"top":0,"front":0,"right":8,"bottom":1,"back":1)", &four),
      Upload(60, "0xa002", R"("pDstBox":null,"RowPitch":20,"DepthPitch":40)", &rows));
  Replayed o = Run(trace);
  EXPECT_EQ(o.exit, kExitIdentical) << o.report;
  const std::vector<uint8_t> row0(rows.begin(), rows.begin() + 12);
  const std::vector<uint8_t> row1(rows.begin() + 20, rows.begin() + 32);
  EXPECT_EQ(o.log,
            absl::StrCat("upload 1 sub 0: deadbeef\nupload 2 sub 0: ", Hex(row0), Hex(row1), "\n"));
}

// The reference driver puts a hash of the first bytes it is given into its update command:
// the submitted-command digest (--digest) shows which bytes reached it, with either kernel.
TEST_F(ContentReplayTest, ReferenceDriverDigestFollowsTheUploadedBytes) {
  // An update of buffer 0xa001 (256 bytes) right before the recorded Flush at seq 710.
  auto with_update = [](const std::vector<uint8_t>* content) {
    const std::string update = absl::StrCat(
        R"({"seq":705,"tid":1,"fn":"ResourceUpdateSubresourceUP","args":{"hDevice":"ic","hDstResource":"0xa001","DstSubresource":0,"pDstBox":null,"pSysMemUP":"0x8000","RowPitch":0,"DepthPitch":0}})");
    return SmallClWith(710, content == nullptr ? update + "\n" : WithContent(update, *content));
  };
  for (KernelMode kernel : {KernelMode::kRecorded, KernelMode::kModel}) {
    ReplayOptions options;
    options.threads = ThreadMode::kSingle;
    options.kernel = kernel;
    options.keep_going = true;  // the update makes the recorded command length differ
    ExpectDigestFollowsContent(with_update, options, "no content is the zero region");
  }
}

// ---- Initial data (content=initial) ------------------------------------------------------------

// A CreateResource of 0xa0b1 (a 24-byte buffer) or 0xa0b2 (a 4x2 R8G8B8A8_UNORM 2D texture array
// of 2 slices with 2 mips: 4x2 and 2x1) at `seq`, with pInitialDataUP entries `entries` (JSON
// objects) and `content` (none when null).
std::string CreateWithInitialData(uint64_t seq, bool texture, const std::string& entries,
                                  const std::vector<uint8_t>* content) {
  const std::string desc =
      texture
          ? R"("ResourceDimension":"D3D10DDIRESOURCE_TEXTURE2D","Format":28,"pMipInfoList":[{"TexelWidth":4,"TexelHeight":2,"TexelDepth":1,"PhysicalWidth":4,"PhysicalHeight":2,"PhysicalDepth":1},{"TexelWidth":2,"TexelHeight":1,"TexelDepth":1,"PhysicalWidth":2,"PhysicalHeight":1,"PhysicalDepth":1}],"MipLevels":2,"ArraySize":2,"SampleDesc.Count":1)"
          : R"("ResourceDimension":"D3D10DDIRESOURCE_BUFFER","pMipInfoList":[{"TexelWidth":24,"TexelHeight":1,"TexelDepth":1,"PhysicalWidth":24,"PhysicalHeight":1,"PhysicalDepth":1}],"MipLevels":1,"ArraySize":1,"SampleDesc.Count":1)";
  const std::string handle = texture ? "0xa0b2" : "0xa0b1";
  const std::string calc = absl::StrCat(
      R"({"seq":)", seq - 2, R"(,"tid":1,"fn":"CalcPrivateResourceSize","args":{"hDevice":"ic",)",
      desc, R"(},"ret":8})", "\n");
  const std::string create = absl::StrCat(
      R"({"seq":)", seq, R"(,"tid":1,"fn":"CreateResource","args":{"hDevice":"ic",)", desc,
      entries.empty() ? "" : absl::StrCat(R"(,"pInitialDataUP":[)", entries, "]"),
      R"(,"hResource":")", handle, R"(","hRTResource":"rt)", handle, R"("}})");
  return calc + (content == nullptr ? create + "\n" : WithContent(create, *content));
}

std::string Entry(uint64_t address, uint32_t pitch) {
  return absl::StrCat(R"({"pSysMem":")", absl::StrFormat("0x%x", address), R"(","SysMemPitch":)",
                      pitch, R"(,"SysMemSlicePitch":0})");
}

// The texture's four subresources (mip + 2 x slice): mip 0 rows of 16 bytes at SysMemPitch 20
// (slice 0) and 16 (slice 1), mip 1 one row of 8 bytes.
std::string TextureEntries() {
  return absl::StrCat(Entry(0x8000, 20), ",", Entry(0x9000, 8), ",", Entry(0xa000, 16), ",",
                      Entry(0xb000, 8));
}

TEST_F(ContentReplayTest, InitialDataReachesTheDriverAtCreate) {
  const std::vector<uint8_t> buffer = Ramp(24, 0x30);
  // 36 (rows 16 + gap 4 + 16) + 8 + 32 + 8 bytes, subresource after subresource.
  const std::vector<uint8_t> texture = Ramp(36 + 8 + 32 + 8, 0x80);
  const std::string trace =
      absl::StrCat(kProbeDevice, CreateWithInitialData(52, false, Entry(0x7000, 0), &buffer),
                   CreateWithInitialData(56, true, TextureEntries(), &texture));
  auto hex = [&](size_t from, size_t n) {
    return Hex(std::vector<uint8_t>(texture.begin() + from, texture.begin() + from + n));
  };
  const std::string log =
      absl::StrCat("initial 2 sub 0: ", Hex(buffer), "\n",              //
                   "initial 3 sub 0: ", hex(0, 16), hex(20, 16), "\n",  // the gap left out
                   "initial 3 sub 1: ", hex(36, 8), "\n",               //
                   "initial 3 sub 2: ", hex(44, 32), "\n", "initial 3 sub 3: ", hex(76, 8), "\n");
  ForBothThreadModes(trace, log, [](const Replayed& o) {
    EXPECT_EQ(o.result.content.initial_data, 2u);
    EXPECT_EQ(o.result.content.initial_data_bytes, 24u + 84);
    EXPECT_THAT(o.report, HasSubstr("\ncontent: 2 resources created with their recorded initial "
                                    "data (108 bytes)\n"));
  });
}

// A trace without the content (older recorders, a capture that could not size it) still
// replays: the driver reads zeros at every pSysMem.
TEST_F(ContentReplayTest, InitialDataWithoutContentIsTheZeroRegion) {
  Replayed o =
      Run(absl::StrCat(kProbeDevice, CreateWithInitialData(54, true, TextureEntries(), nullptr)));
  EXPECT_EQ(o.exit, kExitIdentical) << o.report;
  EXPECT_EQ(o.log, absl::StrCat("initial 2 sub 0: ", std::string(64, '0'), "\n",
                                "initial 2 sub 1: ", std::string(16, '0'), "\n",
                                "initial 2 sub 2: ", std::string(64, '0'), "\n",
                                "initial 2 sub 3: ", std::string(16, '0'), "\n"));
  EXPECT_EQ(o.result.content.initial_data, 0u);
  EXPECT_THAT(o.report, Not(HasSubstr("content:")));
}

// ---- Maps ------------------------------------------------------------------------------------

TEST_F(ContentReplayTest, ImmediateContextUnmapWritesTheContentIntoTheMapping) {
  const std::vector<uint8_t> bytes = Ramp(16, 0xa0);
  Replayed o = Run(absl::StrCat(kProbeDevice, Map(60, "ResourceMap", "ic", "0xa001", kDiscard16),
                                Unmap(70, "ResourceUnmap", "ic", "0xa001", &bytes)));
  EXPECT_EQ(o.exit, kExitIdentical) << o.report;
  EXPECT_EQ(o.log, absl::StrCat("unmap 1 sub 0: ", Hex(bytes), "\n"));
  EXPECT_EQ(o.result.content.unmaps, 1u);
  EXPECT_THAT(o.report, HasSubstr("\ncontent: 0 UpdateSubresourceUP sources and 1 mapped "
                                  "subresources handed to the driver (16 bytes)\n"));
}

TEST_F(ContentReplayTest, UnmapWithoutContentLeavesTheMappingAlone) {
  Replayed o = Run(absl::StrCat(kProbeDevice, Map(60, "ResourceMap", "ic", "0xa001", kDiscard16),
                                Unmap(70, "ResourceUnmap", "ic", "0xa001", nullptr)));
  EXPECT_EQ(o.exit, kExitIdentical) << o.report;
  EXPECT_EQ(o.log, absl::StrCat("unmap 1 sub 0: ", std::string(32, 'e'), "\n"));
}

// A deferred context opens the buffer context-locally and maps it with a discard on its own
// replay thread (in recorded mode).
TEST_F(ContentReplayTest, DeferredContextDiscardWritesTheContentIntoTheMapping) {
  const std::vector<uint8_t> bytes = Ramp(16, 0x70);
  const std::string trace = absl::StrCat(
      kProbeDevice,
      R"({"seq":100,"tid":2,"fn":"CalcPrivateDeferredContextSize","args":{"pCalcPrivateDeferredContextSize":true,"hDevice":"ic"},"ret":64}
{"seq":110,"tid":2,"fn":"CreateDeferredContext","args":{"hDevice":"ic","p11ContextFuncs":"0x6000","hDrvContext":"dc1","hRTCoreLayer":"rtcore.dc1","p11UMCallbacks":"0x7000"}}
{"seq":120,"tid":2,"fn":"CalcDeferredContextHandleSize","args":{"hDevice":"ic","pICObject":"0xa001"},"ret":8}
{"seq":130,"tid":2,"fn":"CreateResource","args":{"hDevice":"dc1","pCreateResource":null,"hResource":"dc1.r","hRTResource":"0xa001"}}
)",
      Map(140, "DynamicResourceMapDiscard", "dc1", "dc1.r", kDiscard16, 2),
      Unmap(150, "DynamicResourceUnmap", "dc1", "dc1.r", &bytes, 2));
  ForBothThreadModes(trace, absl::StrCat("unmap 1 sub 0: ", Hex(bytes), "\n"),
                     [](const Replayed& o) { EXPECT_EQ(o.result.content.unmaps, 1u); });
}

// The reference driver's deferred-context discard hands out a fresh alias whose bytes it
// hashes into an update command at Unmap: the digest follows the content.
TEST_F(ContentReplayTest, ReferenceDriverDigestFollowsTheMappedBytes) {
  // A discard of dc1.src (the 256-byte buffer 0xa001 opened on dc1) in the second recording.
  auto with_map = [](const std::vector<uint8_t>* content) {
    return SmallClWith(
        460,
        absl::StrCat(
            Map(455, "DynamicResourceMapDiscard", "dc1", "dc1.src",
                R"("DDIMap":"D3D10_DDI_MAP_WRITE_DISCARD","Flags":0,"pData":"0x9000","RowPitch":256,"DepthPitch":256)",
                2),
            Unmap(457, "DynamicResourceUnmap", "dc1", "dc1.src", content, 2)));
  };
  for (ThreadMode mode : {ThreadMode::kSingle, ThreadMode::kRecorded}) {
    ReplayOptions options;
    options.threads = mode;
    options.kernel = KernelMode::kModel;
    options.keep_going = true;  // the alias allocation is a callback the recording lacks
    ExpectDigestFollowsContent(with_map, options, "the alias starts zeroed");
  }
}

// The recording's Map answered RowPitch 64; the probe pads a 12-byte row to 16. The Map's
// pitches are a divergence, and the content still lands row by row.
TEST_F(ContentReplayTest, UnmapRepitchesFromTheRecordedToTheReplayPitches) {
  const std::vector<uint8_t> recorded = Ramp(64 + 12, 0x20);
  const std::string trace = absl::StrCat(
      kProbeDevice, kProbeTexture,
      Map(60, "ResourceMap", "ic", "0xa002",
          R"("DDIMap":"D3D10_DDI_MAP_WRITE_DISCARD","Flags":0,"pData":"0x9000","RowPitch":64,"DepthPitch":128)"),
      Unmap(70, "ResourceUnmap", "ic", "0xa002", &recorded));
  probe_.Configure(/*row_pad=*/4, /*buffer_limit=*/0);
  ReplayOptions options;
  options.threads = ThreadMode::kSingle;
  options.keep_going = true;
  Replayed o = Run(trace, options);
  EXPECT_EQ(o.exit, kExitDivergent);
  EXPECT_THAT(o.report, StartsWith("replay: divergence at seq 60 (fn ResourceMap, tid 1): "));
  EXPECT_THAT(o.report, HasSubstr("RowPitch"));
  const std::vector<uint8_t> row0(recorded.begin(), recorded.begin() + 12);
  const std::vector<uint8_t> row1(recorded.begin() + 64, recorded.end());
  EXPECT_EQ(o.log, absl::StrCat("unmap 2 sub 0: ", Hex(row0), Hex(row1), "\n"));
  EXPECT_EQ(o.result.content.bytes, 24u);
  EXPECT_TRUE(o.result.content.notes.empty());
}

TEST_F(ContentReplayTest, DriverThatMapsLessGetsWhatFitsAndTheReportSaysSo) {
  const std::vector<uint8_t> bytes = Ramp(16, 0x30);
  probe_.Configure(/*row_pad=*/0, /*buffer_limit=*/8);
  ReplayOptions options;
  options.threads = ThreadMode::kSingle;
  options.keep_going = true;
  Replayed o = Run(absl::StrCat(kProbeDevice, Map(60, "ResourceMap", "ic", "0xa001", kDiscard16),
                                Unmap(70, "ResourceUnmap", "ic", "0xa001", &bytes)),
                   options);
  EXPECT_EQ(o.exit, kExitDivergent);  // the Map's pitches
  EXPECT_EQ(o.log, absl::StrCat("unmap 1 sub 0: ", Hex(Ramp(8, 0x30)), "\n"));
  EXPECT_THAT(o.report,
              HasSubstr("\ncontent: seq 70: wrote 8 of 16 bytes: the replay driver's Map (seq "
                        "60: RowPitch 8, DepthPitch 8) mapped less than the recorded one "
                        "(RowPitch 16, DepthPitch 16)\n"));
}

TEST_F(ContentReplayTest, MapThatGaveNoMemoryGetsNothingWritten) {
  const std::vector<uint8_t> bytes = Ramp(16, 0x30);
  Replayed o = Run(absl::StrCat(
      kProbeDevice,
      Map(60, "ResourceMap", "ic", "0xa001",
          R"("DDIMap":"D3D10_DDI_MAP_WRITE_DISCARD","Flags":0,"pMappedSubResource":null)"),
      Unmap(70, "ResourceUnmap", "ic", "0xa001", &bytes)));
  EXPECT_EQ(o.exit, kExitIdentical) << o.report;
  EXPECT_EQ(o.log, "");
  EXPECT_THAT(o.report,
              HasSubstr("\ncontent: seq 70: 16 bytes not written: the replay driver's Map (seq "
                        "60) returned no memory (pData NULL)\n"));
}

// ---- ContentChecker's shape table --------------------------------------------------------------

// A context-local open (no argument structure) takes the shape of the IC resource in its HRT
// slot. With n resources already known, inserting the opened handle grows the table at some n:
// the shape must be read before that insertion, not from a slot the growth freed (under
// AddressSanitizer a heap-use-after-free; without it, a garbage shape that rejected valid
// content as "RowPitch 256 is smaller than a row").
TEST(ContentCheckerTest, OpenedResourceKeepsItsShapeWhileTheTableGrows) {
  const internal::CallMeta& create = internal::CallMetaFor(format::CallId::kCreateResource);
  const internal::CallMeta& upload =
      internal::CallMetaFor(format::CallId::kResourceUpdateSubresourceUP);
  ASSERT_GE(create.rt_field, 0);
  ASSERT_TRUE(upload.content_fields_ok);
  auto field = [](format::CallId call, const char* name) {
    const int i = format::FieldIndex(*format::GetCall(call), name);
    EXPECT_GE(i, 0) << name;
    return i;
  };
  auto args_of = [](format::CallId call) {
    return absl::InlinedVector<uint64_t, 8>(format::Fields(*format::GetCall(call)).size(), 0);
  };
  constexpr uint64_t kWidth = 48;
  format::TokenTable contents;
  const uint64_t content = contents.Intern(std::string(kWidth, 'c'));
  format::TokenTable handles;
  for (uint64_t n = 1; n <= 100; ++n) {
    SCOPED_TRACE(absl::StrCat(n, " resources before the open"));
    internal::ContentChecker checker(contents, handles);
    internal::UnmapContent unmap;
    bool has_unmap = false;
    uint64_t seq = 0;
    for (uint64_t id = 1; id <= n; ++id) {
      format::Event e;
      e.seq = ++seq;
      e.call = format::CallId::kCreateResource;
      e.args = args_of(e.call);
      e.args[field(e.call, "pCreateResource")] = 1;
      e.args[field(e.call, "ResourceDimension")] = 1;  // D3D10DDIRESOURCE_BUFFER
      e.args[field(e.call, "MipLevels")] = 1;
      e.args[field(e.call, "ArraySize")] = 1;
      // pMipInfoList: one entry (Texel and Physical Width, Height, Depth) after the fixed fields.
      e.args[field(e.call, "pMipInfoList")] = 1 + 1;
      const uint64_t width = id == 1 ? kWidth : 4096 + id;
      for (uint64_t v : {width, uint64_t{1}, uint64_t{1}, width, uint64_t{1}, uint64_t{1}})
        e.args.push_back(v);
      e.args[create.create_field] = id;
      ASSERT_EQ(checker.Check(e, create, internal::Role::kIssue, &unmap, &has_unmap), "");
    }
    const uint64_t local = n + 1;  // opens resource 1
    format::Event open;
    open.seq = ++seq;
    open.call = format::CallId::kCreateResource;
    open.args = args_of(open.call);
    open.args[create.create_field] = local;
    open.args[create.rt_field] = 1;
    ASSERT_EQ(checker.Check(open, create, internal::Role::kIssue, &unmap, &has_unmap), "");
    // The whole opened buffer, no box: exactly resource 1's width.
    format::Event up;
    up.seq = ++seq;
    up.call = format::CallId::kResourceUpdateSubresourceUP;
    up.args = args_of(up.call);
    up.args[upload.resource_field] = local;
    up.content = static_cast<uint32_t>(content);
    EXPECT_EQ(checker.Check(up, upload, internal::Role::kIssue, &unmap, &has_unmap), "");
  }
}

// ---- CopyMapped ------------------------------------------------------------------------------

format::RegionLayout Layout(uint64_t row_bytes, uint32_t rows, uint32_t slices, uint64_t row_pitch,
                            uint64_t depth_pitch) {
  format::RegionLayout l;
  l.row_bytes = row_bytes;
  l.rows = rows;
  l.slices = slices;
  l.row_pitch = row_pitch;
  l.depth_pitch = depth_pitch;
  return l;
}

TEST(CopyMappedTest, EqualPitchesCopyTheWholeRegion) {
  const std::vector<uint8_t> src = Ramp(2 * 16 + 12, 1);
  std::vector<uint8_t> dst(src.size() + 4, 0xee);
  const format::RegionLayout l = Layout(12, 3, 1, 16, 48);
  internal::MappedCopy c = internal::CopyMapped(l, src.data(), l, dst.data());
  EXPECT_TRUE(c.complete);
  EXPECT_EQ(c.bytes, 36u);
  EXPECT_TRUE(std::equal(src.begin(), src.end(), dst.begin()));
  EXPECT_EQ(dst[src.size()], 0xee);
}

TEST(CopyMappedTest, OtherPitchesCopyRowByRowAndSliceBySlice) {
  // 2 slices of 2 rows of 4 bytes: recorded at RowPitch 8 / DepthPitch 20, replay at 5 / 12.
  const format::RegionLayout src_l = Layout(4, 2, 2, 8, 20);
  const format::RegionLayout dst_l = Layout(4, 2, 2, 5, 12);
  const std::vector<uint8_t> src = Ramp(src_l.Bytes(), 0x10);
  std::vector<uint8_t> dst(dst_l.Bytes() + 3, 0xee);
  internal::MappedCopy c = internal::CopyMapped(src_l, src.data(), dst_l, dst.data());
  EXPECT_TRUE(c.complete);
  EXPECT_EQ(c.bytes, 16u);
  for (uint32_t z = 0; z < 2; ++z) {
    for (uint32_t y = 0; y < 2; ++y) {
      for (uint32_t x = 0; x < 4; ++x) {
        EXPECT_EQ(dst[z * 12 + y * 5 + x], src[z * 20 + y * 8 + x]) << z << " " << y << " " << x;
      }
      if (y == 0) {
        EXPECT_EQ(dst[z * 12 + 4], 0xee);  // the gap after a row is left alone
      }
    }
  }
  EXPECT_EQ(dst[dst_l.Bytes()], 0xee);
}

TEST(CopyMappedTest, SmallerMappingGetsOnlyWhatFits) {
  const format::RegionLayout src_l = Layout(16, 1, 1, 0, 0);
  const format::RegionLayout dst_l = Layout(8, 1, 1, 8, 8);
  const std::vector<uint8_t> src = Ramp(16, 0);
  std::vector<uint8_t> dst(9, 0xee);
  internal::MappedCopy c = internal::CopyMapped(src_l, src.data(), dst_l, dst.data());
  EXPECT_FALSE(c.complete);
  EXPECT_EQ(c.bytes, 8u);
  EXPECT_EQ(dst, (std::vector<uint8_t>{0, 1, 2, 3, 4, 5, 6, 7, 0xee}));
}

// ---- Bad input -------------------------------------------------------------------------------

class ContentBadInputTest : public ContentReplayTest {
 protected:
  // The trace is bad input (exit 2) at `seq` with `message`; the driver saw nothing.
  void ExpectBadInput(const std::string& jsonl, uint64_t seq, const std::string& message) {
    probe_.Reset();
    Replayed o = Run(jsonl);
    EXPECT_EQ(o.exit, kExitBadInput) << o.report;
    EXPECT_EQ(o.result.bad_seq, seq) << o.report;
    EXPECT_EQ(o.result.bad_message, message);
    EXPECT_THAT(o.report, StartsWith(absl::StrCat("replay: bad input at seq ", seq, " ")));
    EXPECT_EQ(o.log, "");
  }
};

TEST_F(ContentBadInputTest, ContentOnACallThatTakesNoBytes) {
  const std::vector<uint8_t> bytes = {1, 2, 3};
  ExpectBadInput(
      absl::StrCat(
          kProbeDevice,
          WithContent(R"({"seq":50,"tid":1,"fn":"Draw","args":{"hDevice":"ic","VertexCount":3}})",
                      bytes)),
      50,
      "Draw carries content (id 1), but it takes no bytes from the application (only the "
      "UpdateSubresourceUP and Unmap families and CreateResource do, FORMAT.md §3.8)");
}

TEST_F(ContentBadInputTest, ContentOnAMap) {
  const std::vector<uint8_t> bytes = Ramp(16, 0);
  ExpectBadInput(
      absl::StrCat(kProbeDevice,
                   WithContent(Map(60, "ResourceMap", "ic", "0xa001", kDiscard16), bytes)),
      60,
      "ResourceMap carries content (id 1), but a Map's bytes belong to its Unmap (what the "
      "application wrote is only known when it unmaps, FORMAT.md §3.8)");
}

TEST_F(ContentBadInputTest, ContentIdTheTraceDoesNotDefine) {
  const std::vector<uint8_t> bytes = Ramp(16, 0);
  absl::StatusOr<format::JsonlTrace> trace = format::ParseJsonl(
      absl::StrCat(kProbeDevice, Upload(50, "0xa001", R"("pDstBox":null)", &bytes)));
  ASSERT_TRUE(trace.ok()) << trace.status();
  ASSERT_EQ(trace->events.back().content, 1u);
  ReplayOptions options;
  options.driver_path = CLTRACE_PROBE_DRIVER_LIB;
  std::vector<format::Event> events = trace->events;
  events.back().content = 7;
  absl::StatusOr<ReplayResult> r =
      Replay(options, events, trace->handles, trace->strings, trace->contents);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->outcome, Outcome::kBadInput);
  EXPECT_EQ(r->bad_seq, 50u);
  EXPECT_EQ(r->bad_message, "content id 7 is not defined by the trace (it defines 1)");
  // A caller that passes no content table: every content id is undefined.
  std::ostringstream out, err;
  EXPECT_EQ(RunReplay(options, trace->events, trace->handles, trace->strings, out, err),
            kExitBadInput);
  EXPECT_THAT(out.str(), HasSubstr("bad input at seq 50 (fn ResourceUpdateSubresourceUP, tid "
                                   "1): content id 1 is not defined by the trace (it defines "
                                   "0)"));
}

// A content-bearing call whose content the recorded arguments cannot take: an upload (seq 50)
// or the Unmap (seq 70) of a recorded Map (seq 60).
struct BadContentCase {
  enum class Via { kUpload, kUnmap } via;
  const char* name;
  const char* texture;  // kProbeTexture when the call is about it (0xa002)
  const char* resource;
  const char* args;  // the upload's box and pitches, or the recorded Map's arguments
  size_t bytes;
  const char* message;
};

std::string CaseName(const ::testing::TestParamInfo<BadContentCase>& info) {
  return info.param.name;
}

class BadContentTest : public ContentBadInputTest,
                       public ::testing::WithParamInterface<BadContentCase> {};

TEST_P(BadContentTest, IsBadInputAtTheContentCall) {
  const BadContentCase& c = GetParam();
  const std::vector<uint8_t> bytes = Ramp(c.bytes, 0);
  if (c.via == BadContentCase::Via::kUpload) {
    ExpectBadInput(absl::StrCat(kProbeDevice, c.texture, Upload(50, c.resource, c.args, &bytes)),
                   50, c.message);
  } else {
    ExpectBadInput(
        absl::StrCat(kProbeDevice, c.texture, Map(60, "ResourceMap", "ic", c.resource, c.args),
                     Unmap(70, "ResourceUnmap", "ic", c.resource, &bytes)),
        70, c.message);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Upload, BadContentTest,
    ::testing::Values(
        BadContentCase{
            BadContentCase::Via::kUpload, "ContentOfTheWrongSize", "", "0xa001",
            R"("pDstBox":null)", 15,
            "content is 15 bytes, but DstSubresource 0 with no box (the whole "
            "subresource), RowPitch 0 and DepthPitch 0 describes 16 bytes of source data"},
        // Two 12-byte rows at RowPitch 20 need 32 bytes; 24 (the rows without the gap) is short.
        BadContentCase{BadContentCase::Via::kUpload, "RowsLongerThanTheContent", kProbeTexture,
                       "0xa002", R"("pDstBox":null,"RowPitch":20,"DepthPitch":40)", 24,
                       "content is 24 bytes, but DstSubresource 0 with no box (the whole "
                       "subresource), RowPitch 20 and DepthPitch 40 describes 32 bytes of source "
                       "data"},
        BadContentCase{BadContentCase::Via::kUpload, "BoxTheResourceCannotTake", "", "0xa001",
                       R"("left":8,"top":0,"front":0,"right":20,"bottom":1,"back":1)", 12,
                       "content of an UpdateSubresourceUP the resource cannot take: box [8, 20) is "
                       "empty or outside the 16-byte buffer"}),
    CaseName);

TEST_F(ContentBadInputTest, InitialDataOfTheWrongSize) {
  const std::vector<uint8_t> bytes = Ramp(36 + 8 + 32 + 8 - 1, 0);
  ExpectBadInput(
      absl::StrCat(kProbeDevice, CreateWithInitialData(54, true, TextureEntries(), &bytes)), 54,
      "content is 83 bytes, but the 4 pInitialDataUP entries with their SysMemPitch and "
      "SysMemSlicePitch describe 84 bytes of initial data");
}

TEST_F(ContentBadInputTest, InitialDataWithPitchesTheResourceCannotTake) {
  const std::vector<uint8_t> bytes = Ramp(64, 0);
  const std::string entries = absl::StrCat(Entry(0x8000, 12), ",", Entry(0x9000, 8), ",",
                                           Entry(0xa000, 16), ",", Entry(0xb000, 8));
  ExpectBadInput(absl::StrCat(kProbeDevice, CreateWithInitialData(54, true, entries, &bytes)), 54,
                 "content of initial data the resource cannot take: initial data of subresource 0: "
                 "RowPitch 12 is smaller than a row of the region (16 bytes)");
}

TEST_F(ContentBadInputTest, ContentOnACreateWithoutInitialData) {
  const std::vector<uint8_t> bytes = Ramp(24, 0);
  ExpectBadInput(absl::StrCat(kProbeDevice, CreateWithInitialData(52, false, "", &bytes)), 52,
                 "content (24 bytes) on a CreateResource without pInitialDataUP: there is no "
                 "initial data to hold it");
}

TEST_F(ContentBadInputTest, UploadToAResourceWithoutARecordedShape) {
  const std::vector<uint8_t> bytes = Ramp(16, 0);
  ExpectBadInput(
      absl::StrCat(
          kProbeDevice,
          R"({"seq":45,"tid":1,"fn":"CalcPrivateOpenedResourceSize","args":{"hDevice":"ic","NumAllocations":0,"hKMResource":"0x7"},"ret":8}
{"seq":46,"tid":1,"fn":"OpenResource","args":{"hDevice":"ic","NumAllocations":0,"hKMResource":"0x7","hResource":"0xa003","hRTResource":"rt3"}}
)",
          Upload(50, "0xa003", R"("pDstBox":null)", &bytes)),
      50,
      "content for hDstResource 0xa003, whose shape no recorded CreateResource gives: the "
      "size of its 16 bytes cannot be checked");
}

TEST_F(ContentBadInputTest, UnmapContentWithoutAMap) {
  const std::vector<uint8_t> bytes = Ramp(16, 0);
  ExpectBadInput(absl::StrCat(kProbeDevice, Unmap(70, "ResourceUnmap", "ic", "0xa001", &bytes)), 70,
                 "content for an Unmap of 0xa001 subresource 0 that no earlier Map on ic "
                 "mapped: there are no pitches to lay out its 16 bytes by");
}

TEST_F(ContentBadInputTest, UnmapContentAfterAnUnmapEndedTheMap) {
  const std::vector<uint8_t> bytes = Ramp(16, 0);
  ExpectBadInput(absl::StrCat(kProbeDevice, Map(60, "ResourceMap", "ic", "0xa001", kDiscard16),
                              Unmap(70, "ResourceUnmap", "ic", "0xa001", &bytes),
                              Unmap(80, "ResourceUnmap", "ic", "0xa001", &bytes)),
                 80,
                 "content for an Unmap of 0xa001 subresource 0 that no earlier Map on ic "
                 "mapped: there are no pitches to lay out its 16 bytes by");
}

INSTANTIATE_TEST_SUITE_P(
    Unmap, BadContentTest,
    ::testing::Values(
        BadContentCase{
            BadContentCase::Via::kUnmap, "OfAReadMap", "", "0xa001",
            R"("DDIMap":"D3D10_DDI_MAP_READ","Flags":0,"pData":"0x9000","RowPitch":16,"DepthPitch":16)",
            16,
            "content for the Unmap of a D3D10_DDI_MAP_READ map (seq 60): the application writes "
            "nothing through a read map"},
        // The recorded Map laid the 3 × 2 texture out at RowPitch 64: 76 bytes, not 24.
        BadContentCase{
            BadContentCase::Via::kUnmap, "OfTheWrongSize", kProbeTexture, "0xa002",
            R"("DDIMap":"D3D10_DDI_MAP_WRITE","Flags":0,"pData":"0x9000","RowPitch":64,"DepthPitch":128)",
            24,
            "content is 24 bytes, but subresource 0 with the recorded Map's pitches (seq 60: "
            "RowPitch 64, DepthPitch 128) is 76 bytes"},
        BadContentCase{
            BadContentCase::Via::kUnmap, "WhoseRecordedPitchesCannotHoldTheSubresource",
            kProbeTexture, "0xa002",
            R"("DDIMap":"D3D10_DDI_MAP_WRITE","Flags":0,"pData":"0x9000","RowPitch":4,"DepthPitch":8)",
            16,
            "content of subresource 0 as the recorded Map (seq 60) laid it out: RowPitch 4 is "
            "smaller than a row of the region (12 bytes)"}),
    CaseName);

// Content-bearing calls damaged at random (any argument to a handle id or an extreme value, the
// content id to another or an undefined one): every replay ends in one of the three reports and
// none crashes or hands the driver more than it can take. The seed is fixed.
TEST_F(ContentReplayTest, DamagedContentCallsNeverCrashTheReplayer) {
  const std::vector<uint8_t> sixteen = Ramp(16, 1), rows = Ramp(32, 2), mapped = Ramp(24, 3);
  const std::string base = absl::StrCat(
      kProbeDevice, kProbeTexture, Upload(50, "0xa001", R"("pDstBox":null)", &sixteen),
      Upload(60, "0xa002", R"("pDstBox":null,"RowPitch":20,"DepthPitch":40)", &rows),
      Map(70, "ResourceMap", "ic", "0xa002",
          R"("DDIMap":"D3D10_DDI_MAP_WRITE_DISCARD","Flags":0,"pData":"0x9000","RowPitch":12,"DepthPitch":24)"),
      Unmap(80, "ResourceUnmap", "ic", "0xa002", &mapped),
      Map(90, "ResourceMap", "ic", "0xa001", kDiscard16),
      Unmap(100, "ResourceUnmap", "ic", "0xa001", &sixteen));
  absl::StatusOr<format::JsonlTrace> trace = format::ParseJsonl(base);
  ASSERT_TRUE(trace.ok()) << trace.status();
  std::vector<size_t> targets;  // the uploads, maps and unmaps
  for (size_t i = 0; i < trace->events.size(); ++i) {
    if (trace->events[i].seq >= 50) targets.push_back(i);
  }
  std::mt19937_64 rng(20261124);
  int outcomes[3] = {0, 0, 0};
  for (int n = 0; n < 200; ++n) {
    std::vector<format::Event> events = trace->events;
    format::Event& e = events[targets[rng() % targets.size()]];
    switch (rng() % 3) {
      case 0:
        e.args[rng() % e.args.size()] = rng() % trace->handles.size();
        break;
      case 1: {
        const uint64_t values[] = {0, 1, 2, 0x7fffffff, 0xffffffffu, rng() & 0xff};
        e.args[rng() % e.args.size()] = values[rng() % 6];
        break;
      }
      default:
        e.content = static_cast<uint32_t>(rng() % (trace->contents.size() + 2));
        break;
    }
    ReplayOptions options;
    options.driver_path = CLTRACE_PROBE_DRIVER_LIB;
    options.threads = ThreadMode::kSingle;
    options.keep_going = true;
    absl::StatusOr<ReplayResult> r =
        Replay(options, events, trace->handles, trace->strings, trace->contents);
    ASSERT_TRUE(r.ok()) << r.status();
    const std::string report =
        testing::CountedReport(*r, events, trace->handles, trace->strings, options, outcomes);
  }
  EXPECT_GT(outcomes[static_cast<int>(Outcome::kIdentical)], 0);
  EXPECT_GT(outcomes[static_cast<int>(Outcome::kBadInput)], 0);
}

}  // namespace
}  // namespace cltrace::replay
