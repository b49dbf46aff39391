#include "format/jsonl.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "ddi/catalog.h"
#include "format/internal/jsonl_test_util.h"
#include "format/internal/trace_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cltrace::format {
namespace {

using jsonl_testing::ErrorCb;
using jsonl_testing::ExpectError;
using jsonl_testing::Export;
using jsonl_testing::Flush;
using jsonl_testing::MustParse;
using jsonl_testing::Pos;
using jsonl_testing::Positions;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// Shared helpers: format/internal/jsonl_test_util.h.

// ---- Values ---------------------------------------------------------------------------------

TEST(JsonlValueTest, EnumByNameAndByInteger) {
  JsonlTrace t = MustParse(
      R"({"seq":1,"tid":1,"fn":"CalcDeferredContextHandleSize","args":{"hDevice":"d","HandleType":"D3D11DDI_HT_COMMANDLIST"},"ret":16}
{"seq":3,"tid":1,"fn":"CalcDeferredContextHandleSize","args":{"hDevice":"d","HandleType":11},"ret":16}
{"seq":5,"tid":1,"fn":"CalcDeferredContextHandleSize","args":{"hDevice":"d","HandleType":77}}
)");
  ASSERT_EQ(t.events.size(), 3u);
  EXPECT_EQ(t.events[0].args[1], 11u);
  EXPECT_EQ(t.events[1].args[1], 11u);
  EXPECT_EQ(t.events[0].ret, 16);
  EXPECT_EQ(
      Export(t),
      R"({"seq":1,"tid":1,"fn":"CalcDeferredContextHandleSize","args":{"hDevice":"d","HandleType":"D3D11DDI_HT_COMMANDLIST"},"ret":16,"end":2}
{"seq":3,"tid":1,"fn":"CalcDeferredContextHandleSize","args":{"hDevice":"d","HandleType":"D3D11DDI_HT_COMMANDLIST"},"ret":16,"end":4}
{"seq":5,"tid":1,"fn":"CalcDeferredContextHandleSize","args":{"hDevice":"d","HandleType":77},"ret":0,"end":6}
)");
}

TEST(JsonlValueTest, FlagsByNamesAndByInteger) {
  JsonlTrace t = MustParse(
      R"({"seq":1,"tid":1,"fn":"CalcPrivateDeferredContextSize","args":{"hDevice":"d","Flags":"D3D11DDI_CREATEDEVICE_FLAG_SINGLETHREADED|D3D10DDI_CREATEDEVICE_FLAG_DISABLE_EXTRA_THREAD_CREATION"}}
{"seq":3,"tid":1,"fn":"CalcPrivateDeferredContextSize","args":{"hDevice":"d","Flags":17}}
{"seq":5,"tid":1,"fn":"CalcPrivateDeferredContextSize","args":{"hDevice":"d","Flags":"0x100"}}
)");
  ASSERT_EQ(t.events.size(), 3u);
  EXPECT_EQ(t.events[0].args[2], 0x11u);
  EXPECT_EQ(t.events[1].args[2], 0x11u);
  EXPECT_EQ(t.events[2].args[2], 0x100u);
  std::vector<std::string> lines = absl::StrSplit(Export(t), '\n');
  EXPECT_THAT(
      lines[0],
      HasSubstr(
          R"("Flags":"D3D10DDI_CREATEDEVICE_FLAG_DISABLE_EXTRA_THREAD_CREATION|D3D11DDI_CREATEDEVICE_FLAG_SINGLETHREADED")"));
  auto flags = [](const std::string& line) {
    size_t at = line.find("\"Flags\"");
    return line.substr(at, line.find('}', at) - at);
  };
  EXPECT_EQ(flags(lines[0]), flags(lines[1]));
  EXPECT_THAT(lines[2], HasSubstr(R"("Flags":256)"));  // unnamed bit: an integer
}

TEST(JsonlValueTest, HresultByNameAndByInteger) {
  // 0x8007000E written as a name, unsigned, signed and as a hex string.
  JsonlTrace t = MustParse(
      R"({"seq":1,"tid":1,"fn":"RecycleCreateCommandList","args":{"hDevice":"d","hDeferredContext":"dc","hCommandList":"c","hRTCommandList":"r"},"ret":"E_OUTOFMEMORY"}
{"seq":3,"tid":1,"fn":"RecycleCreateCommandList","args":{"hDevice":"d","hDeferredContext":"dc","hCommandList":"c","hRTCommandList":"r"},"ret":2147942414}
{"seq":5,"tid":1,"fn":"RecycleCreateCommandList","args":{"hDevice":"d","hDeferredContext":"dc","hCommandList":"c","hRTCommandList":"r"},"ret":-2147024882}
{"seq":7,"tid":1,"fn":"RecycleCreateCommandList","args":{"hDevice":"d","hDeferredContext":"dc","hCommandList":"c","hRTCommandList":"r"},"ret":"0x8007000E"}
{"seq":9,"tid":1,"fn":"SetErrorCb","args":{"hRuntimeDevice":"rt","hResult":2289436784}}
{"seq":11,"tid":1,"fn":"SetErrorCb","args":{"hRuntimeDevice":"rt","hResult":2147946497}}
)");
  ASSERT_EQ(t.events.size(), 6u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(t.events[i].ret, static_cast<int32_t>(0x8007000E)) << i;
  EXPECT_EQ(t.events[4].args[1], static_cast<uint64_t>(int64_t{static_cast<int32_t>(0x88760870)}));
  std::vector<std::string> lines = absl::StrSplit(Export(t), '\n');
  for (int i = 0; i < 4; ++i) EXPECT_THAT(lines[i], HasSubstr(R"("ret":"E_OUTOFMEMORY")"));
  EXPECT_THAT(lines[4], HasSubstr(R"("hResult":"D3DDDIERR_DEVICEREMOVED")"));
  EXPECT_THAT(lines[5], HasSubstr(R"("hResult":2147946497)"));  // 0x80010001 has no name
}

TEST(JsonlValueTest, ArraysOfStructuresAndScalars) {
  JsonlTrace t = MustParse(
      R"({"seq":1,"tid":1,"fn":"CheckDeferredContextHandleSizes","args":{"hDevice":"d","pHSizes":0,"pHSizesOut":2}}
{"seq":3,"tid":1,"fn":"CheckDeferredContextHandleSizes","args":{"hDevice":"d","pHSizes":2,"pHSizesOut":2,"pHandleSize":[{"HandleType":"D3D10DDI_HT_RESOURCE","DriverPrivateSize":24},{"HandleType":11,"DriverPrivateSize":"18446744073709551615"}]}}
{"seq":5,"tid":1,"fn":"GetSupportedVersions","args":{"hAdapter":"a","puEntries":2,"pSupportedDDIInterfaceVersions":[1,"0x100000000000001"]}}
{"seq":7,"tid":1,"fn":"CheckDeferredContextHandleSizes","args":{"hDevice":"d","pHandleSize":[]}}
)");
  ASSERT_EQ(t.events.size(), 4u);
  // fixed: hDevice, pHSizes, pHSizesOut, pHandleSize; then the elements.
  EXPECT_THAT(t.events[0].args, ::testing::ElementsAre(1u, 0u, 2u, 0u));
  EXPECT_THAT(t.events[1].args, ::testing::ElementsAre(1u, 2u, 2u, 3u, 0u, 24u, 11u, ~uint64_t{0}));
  EXPECT_THAT(t.events[2].args, ::testing::ElementsAre(2u, 2u, 0u, 3u, 1u, 0x100000000000001u));
  EXPECT_THAT(t.events[3].args, ::testing::ElementsAre(1u, 0u, 0u, 1u));
  for (const Event& e : t.events) EXPECT_TRUE(CheckEventLayout(e).ok()) << CheckEventLayout(e);
  EXPECT_EQ(
      Export(t),
      R"({"seq":1,"tid":1,"fn":"CheckDeferredContextHandleSizes","args":{"hDevice":"d","pHSizesOut":2},"end":2}
{"seq":3,"tid":1,"fn":"CheckDeferredContextHandleSizes","args":{"hDevice":"d","pHSizes":2,"pHSizesOut":2,"pHandleSize":[{"DriverPrivateSize":24},{"HandleType":"D3D11DDI_HT_COMMANDLIST","DriverPrivateSize":"18446744073709551615"}]},"end":4}
{"seq":5,"tid":1,"fn":"GetSupportedVersions","args":{"hAdapter":"a","puEntries":2,"pSupportedDDIInterfaceVersions":[1,"72057594037927937"]},"ret":"S_OK","end":6}
{"seq":7,"tid":1,"fn":"CheckDeferredContextHandleSizes","args":{"hDevice":"d","pHandleSize":[]},"end":8}
)");
  EXPECT_EQ(ArgsToText(t.events[1], t.handles, t.strings),
            "hDevice=d, pHSizes=2, pHSizesOut=2, pHandleSize=[{DriverPrivateSize=24}, "
            "{HandleType=D3D11DDI_HT_COMMANDLIST, DriverPrivateSize=18446744073709551615}]");
}

// Arguments are matched to the catalog's fields in one pass that expects the catalog's order;
// any other order reads the same, and so does a line longer than the parser's in-place buffer.
TEST(JsonlValueTest, ArgumentOrderAndLineLengthDoNotMatter) {
  std::vector<std::string> entries;
  for (int i = 0; i < 900; ++i) entries.push_back(absl::StrCat(1000000 + i));
  const std::string list = absl::StrCat("[", absl::StrJoin(entries, ","), "]");
  const std::string in_order = absl::StrCat(
      R"({"seq":1,"tid":1,"fn":"GetSupportedVersions","args":{"hAdapter":"a","puEntries":900,)",
      R"("pSupportedDDIInterfaceVersions":)", list, "}}\n");
  const std::string reversed = absl::StrCat(
      R"({"args":{"pSupportedDDIInterfaceVersions":)", list,
      R"(,"puEntries":900,"hAdapter":"a"},"fn":"GetSupportedVersions","tid":1,"seq":1})", "\n");
  ASSERT_GT(in_order.size(), 4096u);  // beyond ScratchDocument's own buffer
  JsonlTrace a = MustParse(in_order);
  JsonlTrace b = MustParse(reversed);
  ASSERT_EQ(a.events.size(), 1u);
  ASSERT_EQ(b.events.size(), 1u);
  ASSERT_EQ(a.events[0].args.size(), 4u + 900u);
  EXPECT_EQ(a.events[0].args[1], 900u);
  EXPECT_EQ(a.events[0].args.back(), 1000899u);
  EXPECT_EQ(a.events[0].args, b.events[0].args);
  EXPECT_EQ(Export(a), Export(b));
  // An unknown key among known ones in any position is still named.
  ExpectError(
      R"({"seq":1,"tid":1,"fn":"GetSupportedVersions","args":{"puEntries":1,"hAdapterX":"a","hAdapter":"a"}})",
      "line 1", "unknown argument \"hAdapterX\"");
}

TEST(JsonlValueTest, NullPointers) {
  JsonlTrace t = MustParse(
      R"({"seq":1,"tid":1,"fn":"CreateCommandList","args":{"hDevice":"dc1","pCreateCommandList":null,"hCommandList":"lcl","hRTCommandList":"cl1"}}
{"seq":3,"tid":1,"fn":"CreateCommandList","args":{"hDevice":"ic","hDeferredContext":"dc1","hCommandList":"cl1","hRTCommandList":"rt1"}}
{"seq":5,"tid":1,"fn":"CreateCommandList","args":{"hDevice":"ic","pCreateCommandList":true,"hDeferredContext":"dc1","hCommandList":"cl2","hRTCommandList":"rt2"}}
{"seq":7,"tid":1,"fn":"CheckDeferredContextHandleSizes","args":{"hDevice":"ic","pHandleSize":null}}
{"seq":9,"tid":1,"fn":"ResourceMap","args":{"hDevice":"ic","hResource":"res","pMappedSubResource":null}}
)");
  ASSERT_EQ(t.events.size(), 5u);
  EXPECT_THAT(t.events[0].args, ::testing::ElementsAre(1u, 0u, 0u, 2u, 3u));
  EXPECT_EQ(t.events[1].args[1], 1u);  // absent, but a member (hDeferredContext) is given
  EXPECT_EQ(t.events[2].args[1], 1u);
  EXPECT_EQ(t.events[3].args[3], 0u);  // NULL array
  // Export names every present pointer and omits NULL ones (absent reads as NULL).
  std::vector<std::string> lines = absl::StrSplit(Export(t), '\n');
  EXPECT_EQ(
      lines[0],
      R"({"seq":1,"tid":1,"fn":"CreateCommandList","args":{"hDevice":"dc1","hCommandList":"lcl","hRTCommandList":"cl1"},"end":2})");
  EXPECT_EQ(
      lines[1],
      R"({"seq":3,"tid":1,"fn":"CreateCommandList","args":{"hDevice":"ic","pCreateCommandList":true,"hDeferredContext":"dc1","hCommandList":"cl1","hRTCommandList":"rt1"},"end":4})");
  EXPECT_EQ(
      lines[4],
      R"({"seq":9,"tid":1,"fn":"ResourceMap","args":{"hDevice":"ic","hResource":"res"},"end":10})");
  EXPECT_EQ(Export(MustParse(Export(t))), Export(t));
  EXPECT_EQ(ArgsToText(t.events[0], t.handles, t.strings),
            "hDevice=dc1, pCreateCommandList=NULL, hCommandList=lcl, hRTCommandList=cl1");
}

// An argument-structure pointer left out of a line is NULL (what a hand-writer means by
// leaving it out), unless one of its members is given; export writes every present pointer,
// so an exported line reads back as the same call.
TEST(JsonlValueTest, AbsentStructurePointerIsNullUnlessAMemberIsGiven) {
  ASSERT_NE(FindCall("CalcPrivateDeferredContextSize"), nullptr);
  JsonlTrace t = MustParse(
      R"({"seq":1,"tid":1,"fn":"CalcPrivateDeferredContextSize","args":{"hDevice":"ic"},"ret":8}
{"seq":3,"tid":1,"fn":"CalcPrivateDeferredContextSize","args":{"hDevice":"ic","pCalcPrivateDeferredContextSize":true},"ret":8}
)");
  ASSERT_EQ(t.events.size(), 2u);
  const int p =
      FieldIndex(*FindCall("CalcPrivateDeferredContextSize"), "pCalcPrivateDeferredContextSize");
  ASSERT_GE(p, 0);
  EXPECT_EQ(t.events[0].args[p], 0u);
  EXPECT_EQ(t.events[1].args[p], 1u);
  std::vector<std::string> lines = absl::StrSplit(Export(t), '\n');
  EXPECT_THAT(lines[0], ::testing::Not(HasSubstr("pCalcPrivateDeferredContextSize")));
  EXPECT_THAT(lines[1], HasSubstr(R"("pCalcPrivateDeferredContextSize":true)"));
  JsonlTrace again = MustParse(Export(t));
  ASSERT_EQ(again.events.size(), 2u);
  EXPECT_EQ(again.events[0].args, t.events[0].args);
  EXPECT_EQ(again.events[1].args, t.events[1].args);
}

// Traces recorded before the fix above hold pInfo = 0 beside the outputs read through it:
// export treats the pointer as present (its members have values), so they survive a round trip.
TEST(JsonlValueTest, OutputPointerWithValuesIsPresentInOlderTraces) {
  const testing::CreateDeviceInfoFields create_device = testing::FindCreateDeviceInfo();
  ASSERT_GE(create_device.present, 0);
  ASSERT_GE(create_device.size, 0);
  const int present = create_device.present, size = create_device.size;
  Event e = create_device.BlankEvent();
  TokenTable handles, strings;
  e.args[0] = handles.Intern("adapter");
  e.args[1] = 1;  // pCreateDevice
  e.args[size] = 4096;
  const std::string line = EventToJsonl(e, handles, strings);
  EXPECT_THAT(line, HasSubstr(R"("pInfo":true,"pInfo.DmaBufferSize":4096)"));
  JsonlTrace t = MustParse(line);
  ASSERT_EQ(t.events.size(), 1u);
  EXPECT_EQ(t.events[0].args[present], 1u);
  EXPECT_EQ(t.events[0].args[size], 4096u);
}

// pICObject holds the raw value of the handle it names; JSONL also takes the handle's token.
TEST(JsonlValueTest, IcObjectTakesTheHandleToken) {
  JsonlTrace t = MustParse(
      R"({"seq":1,"tid":1,"fn":"CalcDeferredContextHandleSize","args":{"hDevice":"ic","pICObject":"0xa001"},"ret":32}
{"seq":3,"tid":1,"fn":"CalcDeferredContextHandleSize","args":{"hDevice":"ic","pICObject":"ic"},"ret":32}
)");
  ASSERT_EQ(t.events.size(), 2u);
  const int p = FieldIndex(*FindCall("CalcDeferredContextHandleSize"), "pICObject");
  ASSERT_GE(p, 0);
  EXPECT_EQ(t.events[0].args[p], 0xa001u);
  EXPECT_EQ(t.events[1].args[p], HandleTokenValue("ic"));
  EXPECT_EQ(HandleTokenValue("0xa001"), 0xa001u);
  EXPECT_EQ(HandleTokenValue("ic") >> 48, 0xc17au);  // never a recorded (canonical) address
  std::vector<std::string> lines = absl::StrSplit(Export(t), '\n');
  EXPECT_THAT(lines[0], HasSubstr(R"("pICObject":"0xa001")"));
  EXPECT_THAT(lines[1], HasSubstr(R"("pICObject":"ic")"));
  EXPECT_EQ(ArgsToText(t.events[1], t.handles, t.strings), "hDevice=ic, pICObject=ic");
  EXPECT_EQ(Export(MustParse(Export(t))), Export(t));
  ExpectError(
      R"({"seq":1,"tid":1,"fn":"CalcDeferredContextHandleSize","args":{"hDevice":"ic","pICObject":"res9"}})",
      "line 1: ", "\"pICObject\" \"res9\" names no handle of an earlier argument");
}

// The catalog types the formats Microsoft declares DXGI_FORMAT (IaSetIndexBuffer's Format, an
// input element's Format) as DXGI_FORMAT: named by that type in JSONL and text alike, read back
// by name or by number, and a UINT field is never named after its name.
TEST(JsonlValueTest, FormatsAreNamedByTheirCatalogTypeOnly) {
  const CallInfo* ib = FindCall("IaSetIndexBuffer");
  ASSERT_NE(ib, nullptr);
  const int format = FieldIndex(*ib, "Format");
  ASSERT_GE(format, 0);
  EXPECT_EQ(Fields(*ib)[format].kind, FieldKind::kEnum);
  JsonlTrace t = MustParse(
      R"({"seq":1,"tid":1,"fn":"IaSetIndexBuffer","args":{"hDevice":"d","hBuffer":"b","Format":57,"Offset":4}}
{"seq":3,"tid":1,"fn":"IaSetIndexBuffer","args":{"hDevice":"d","hBuffer":"b","Format":"DXGI_FORMAT_R32_UINT"}}
{"seq":5,"tid":1,"fn":"CreateElementLayout","args":{"hDevice":"d","pVertexElements":[{"InputSlot":1,"Format":"DXGI_FORMAT_R32G32B32_FLOAT","InputRegister":2}],"NumElements":1,"hElementLayout":"l","hRTElementLayout":"rl"}}
)");
  ASSERT_EQ(t.events.size(), 3u);
  EXPECT_EQ(t.events[0].args[format], 57u);  // DXGI_FORMAT_R16_UINT
  EXPECT_EQ(t.events[1].args[format], 42u);  // DXGI_FORMAT_R32_UINT
  std::vector<std::string> lines = absl::StrSplit(Export(t), '\n');
  EXPECT_THAT(lines[0], HasSubstr(R"("Format":"DXGI_FORMAT_R16_UINT")"));
  EXPECT_THAT(lines[1], HasSubstr(R"("Format":"DXGI_FORMAT_R32_UINT")"));
  EXPECT_THAT(lines[2], HasSubstr(R"("Format":"DXGI_FORMAT_R32G32B32_FLOAT")"));
  EXPECT_EQ(ArgsToText(t.events[0], t.handles, t.strings),
            "hDevice=d, hBuffer=b, Format=DXGI_FORMAT_R16_UINT, Offset=4");
  EXPECT_EQ(Export(MustParse(Export(t))), Export(t));
  // Every Format the catalog declares is typed there (the text names a value by type alone).
  for (const CallInfo& c : Calls()) {
    for (const FieldInfo& f : Fields(c)) {
      if (absl::string_view(f.name) != "Format") continue;
      EXPECT_TRUE(f.kind == FieldKind::kEnum || f.kind == FieldKind::kArray)
          << c.name << "." << f.name << " is not typed by the catalog";
    }
  }
}

TEST(JsonlErrorTest, EmptyInputIsNoTrace) {
  ExpectError("", "", "empty file: no call (a JSONL trace holds at least one call)");
  ExpectError("\n\n", "", "no call in 2 blank lines (a JSONL trace holds at least one call)");
}

TEST(JsonlErrorTest, UnknownNamesSuggestTheClosest) {
  ExpectError(R"({"seq":1,"tid":1,"fn":"Flsh","args":{"hDevice":"d"}})",
              "line 1: ", "unknown function \"Flsh\" (did you mean \"Flush\"?)");
  ExpectError(R"({"seq":1,"tid":1,"fn":"Flush","args":{"hdevise":"d"}})",
              "line 1: ", "unknown argument \"hdevise\" (did you mean \"hDevice\"?) in Flush args");
  // Nothing close: no guess.
  ExpectError(R"({"seq":1,"tid":1,"fn":"Flush","args":{"hDevice":"d","Bogus":1}})",
              "line 1: ", "unknown argument \"Bogus\" in Flush args");
}

TEST(JsonlValueTest, HandleTokensAreOpaqueAndNullSpellingsAreNull) {
  JsonlTrace t = MustParse(
      R"({"seq":1,"tid":1,"fn":"CommandListExecute","args":{"hDevice":"0x1a2b00","hCommandList":"cl1"}}
{"seq":3,"tid":1,"fn":"CommandListExecute","args":{"hDevice":"0x1a2b00","hCommandList":"0x0"}}
{"seq":5,"tid":1,"fn":"CommandListExecute","args":{"hDevice":"é \"q\"","hCommandList":""}}
)");
  ASSERT_EQ(t.events.size(), 3u);
  EXPECT_EQ(t.events[0].args[0], t.events[1].args[0]);
  EXPECT_NE(t.events[0].args[1], 0u);
  EXPECT_EQ(t.events[1].args[1], 0u);
  EXPECT_EQ(t.events[2].args[1], 0u);
  EXPECT_EQ(t.handles.Token(t.events[2].args[0]), "é \"q\"");
  std::vector<std::string> lines = absl::StrSplit(Export(t), '\n');
  EXPECT_THAT(lines[1], HasSubstr(R"("hCommandList":null)"));
  EXPECT_THAT(lines[2], HasSubstr(R"("hDevice":"é \"q\"")"));
}

TEST(JsonlValueTest, PointersAndBigIntegers) {
  JsonlTrace t = MustParse(
      R"({"seq":1,"tid":1,"fn":"CalcDeferredContextHandleSize","args":{"hDevice":"d","pICObject":"0xFFFF800012345678"},"ret":"9007199254740993"}
)");
  ASSERT_EQ(t.events.size(), 1u);
  EXPECT_EQ(t.events[0].args[2], 0xFFFF800012345678u);
  EXPECT_EQ(t.events[0].ret, 9007199254740993);
  EXPECT_EQ(
      Export(t),
      R"({"seq":1,"tid":1,"fn":"CalcDeferredContextHandleSize","args":{"hDevice":"d","pICObject":"0xffff800012345678"},"ret":"9007199254740993","end":2}
)");
}

TEST(JsonlValueTest, BoolsAcceptTrueAndIntegers) {
  JsonlTrace t = MustParse(
      R"({"seq":1,"tid":1,"fn":"ResourceIsStagingBusy","args":{"hDevice":"d","hResource":"r"},"ret":true}
{"seq":3,"tid":1,"fn":"ResourceIsStagingBusy","args":{"hDevice":"d","hResource":"r"},"ret":-1}
)");
  ASSERT_EQ(t.events.size(), 2u);
  EXPECT_EQ(t.events[0].ret, 1);
  EXPECT_EQ(t.events[1].ret, -1);
  EXPECT_THAT(Export(t), HasSubstr(R"("ret":-1)"));
}

// Every float bit pattern class round-trips through the export text and the line parser.
TEST(JsonlValueTest, FloatsRoundTripExactly) {
  std::vector<uint32_t> patterns = {0x00000000, 0x80000000,          0x3f800000,
                                    0xbf800000, 0x3dcccccd /*0.1f*/, 0x00000001 /*min denormal*/,
                                    0x007fffff, 0x00800000,          0x7f7fffff /*FLT_MAX*/,
                                    0xff7fffff, 0x7f800000,          0xff800000,
                                    0x7fc00000, 0x7fc00001,          0xffc00000,
                                    0x4b800001, 0x3eaaaaab};
  std::mt19937 rng(12345);
  for (int i = 0; i < 50000; ++i) patterns.push_back(static_cast<uint32_t>(rng()));
  for (uint32_t bits : patterns) {
    std::string text = FloatToJson(bits);
    auto back = FloatFromJson(text);
    ASSERT_TRUE(back.ok()) << text << ": " << back.status();
    ASSERT_EQ(*back, bits) << std::hex << bits << " -> " << text;
  }
  EXPECT_EQ(FloatToJson(0x3dcccccd), "0.1");
  EXPECT_EQ(FloatToJson(0x80000000), "-0.0");
  EXPECT_EQ(FloatToJson(0x7fc00000), "\"NaN\"");
  EXPECT_EQ(FloatToJson(0x7fc00001), "\"0x7fc00001\"");
  EXPECT_EQ(FloatToJson(0xff800000), "\"-Infinity\"");
  // Values between FLT_MAX and the overflow point round to FLT_MAX; beyond is an error.
  EXPECT_EQ(*FloatFromJson("3.4028235e38"), 0x7f7fffffu);
  EXPECT_FALSE(FloatFromJson("3.5e38").ok());
  EXPECT_FALSE(FloatFromJson("\"nan\"").ok());
}

// A call with a float field, if the catalog has one, goes through args the same way.
TEST(JsonlValueTest, FloatFieldInArgs) {
  for (size_t id = 1; id < Calls().size(); ++id) {
    const CallInfo& call = Calls()[id];
    auto fields = Fields(call);
    for (size_t i = 0; i < fields.size(); ++i) {
      if (fields[i].kind != FieldKind::kF32) continue;
      Event e;
      e.call = IdOf(call);
      e.seq = 1;
      e.end = 2;
      TokenTable handles, strings;
      uint64_t token = handles.Intern("h");
      e.args.assign(fields.size(), 0);
      for (size_t k = 0; k < fields.size(); ++k) {
        if (fields[k].kind == FieldKind::kHandle) e.args[k] = token;
        if (fields[k].kind == FieldKind::kPresent) e.args[k] = 1;
      }
      for (uint32_t bits : {0x3dcccccdu, 0x80000000u, 0x7fc00001u, 0x00000001u}) {
        e.args[i] = bits;
        std::string line = EventToJsonl(e, handles, strings);
        auto t = ParseJsonl(line);
        ASSERT_TRUE(t.ok()) << line << ": " << t.status();
        ASSERT_EQ(t->events.size(), 1u);
        EXPECT_EQ(t->events[0].args[i], bits) << line;
        EXPECT_EQ(EventToJsonl(t->events[0], t->handles, t->strings), line);
      }
      return;
    }
  }
  GTEST_SKIP() << "the catalog has no call with a float argument yet";
}

TEST(JsonlValueTest, EmbeddedArraysAreNeverNull) {
  ASSERT_NE(FindCall("CreateSampler"), nullptr);
  JsonlTrace t = MustParse(
      R"({"seq":1,"tid":1,"fn":"CreateSampler","args":{"hDevice":"d","BorderColor":[0,0,0.5,1],"MaxLOD":3.5,"hSampler":"s","hRTSampler":"rs"}}
{"seq":3,"tid":1,"fn":"CreateSampler","args":{"hDevice":"d","pSamplerDesc":true,"hSampler":"s2","hRTSampler":"rs2"}}
{"seq":5,"tid":1,"fn":"CreateSampler","args":{"hDevice":"d","pSamplerDesc":null,"hSampler":"s3","hRTSampler":"rs3"}}
)");
  ASSERT_EQ(t.events.size(), 3u);
  const CallInfo& call = *FindCall("CreateSampler");
  int border = FieldIndex(call, "BorderColor");
  ASSERT_GE(border, 0);
  EXPECT_EQ(t.events[0].args[border], 5u);  // 1 + 4 elements
  EXPECT_EQ(t.events[1].args[border], 1u);  // absent: empty, not NULL
  EXPECT_EQ(t.events[2].args[border], 0u);  // inside a NULL structure
  for (const Event& e : t.events) EXPECT_TRUE(CheckEventLayout(e).ok()) << CheckEventLayout(e);
  std::vector<std::string> lines = absl::StrSplit(Export(t), '\n');
  EXPECT_THAT(lines[0], HasSubstr(R"("BorderColor":[0,0,0.5,1],"MaxLOD":3.5,)"));
  EXPECT_THAT(lines[1], ::testing::Not(HasSubstr("BorderColor")));
  EXPECT_EQ(Export(MustParse(Export(t))), Export(t));
  ExpectError(
      R"({"seq":1,"tid":1,"fn":"CreateSampler","args":{"hDevice":"d","BorderColor":null,"hSampler":"s","hRTSampler":"rs"}})",
      "line 1: ", "\"BorderColor\" must be an array (embedded, never null), not null");
}

TEST(JsonlValueTest, NarrowFieldsHaveTheirCTypesRange) {
  ASSERT_NE(FindCall("CreateBlendState"), nullptr);
  JsonlTrace t = MustParse(
      R"({"seq":1,"tid":1,"fn":"CreateBlendState","args":{"hDevice":"d","RenderTarget":[{"BlendEnable":1,"SrcBlend":"D3D10_DDI_BLEND_ONE","RenderTargetWriteMask":15}],"hBlendState":"b","hRTBlendState":"rb"}})");
  ASSERT_EQ(t.events.size(), 1u);
  EXPECT_THAT(
      Export(t),
      HasSubstr(
          R"("RenderTarget":[{"BlendEnable":1,"SrcBlend":"D3D10_DDI_BLEND_ONE","RenderTargetWriteMask":15}])"));
  ExpectError(
      R"({"seq":1,"tid":1,"fn":"CreateBlendState","args":{"hDevice":"d","RenderTarget":[{},{"RenderTargetWriteMask":256}],"hBlendState":"b","hRTBlendState":"rb"}})",
      "line 1: ", "RenderTarget[1]: \"RenderTargetWriteMask\" = 256 is out of range [0, 255]");
}

TEST(JsonlValueTest, MembersOfByValueStructuresUseDottedNames) {
  const CallInfo* call = FindCall("CreateDepthStencilState");
  ASSERT_NE(call, nullptr);
  ASSERT_GE(FieldIndex(*call, "FrontFace.StencilFailOp"), 0);
  JsonlTrace t = MustParse(
      R"({"seq":1,"tid":1,"fn":"CreateDepthStencilState","args":{"hDevice":"d","FrontFace.StencilFailOp":"D3D10_DDI_STENCIL_OP_INCR","hDepthStencilState":"s","hRTDepthStencilState":"rs"}})");
  ASSERT_EQ(t.events.size(), 1u);
  EXPECT_EQ(t.events[0].args[FieldIndex(*call, "FrontFace.StencilFailOp")], 7u);
  EXPECT_THAT(Export(t), HasSubstr(R"("FrontFace.StencilFailOp":"D3D10_DDI_STENCIL_OP_INCR")"));
}

TEST(JsonlValueTest, NamedDwordReturnCodes) {
  ASSERT_NE(FindCall("CanCreateD3DBuffer"), nullptr);
  JsonlTrace t = MustParse(
      R"({"seq":1,"tid":1,"fn":"CanCreateD3DBuffer","args":{"dwLinearSize":4096},"ret":"DDHAL_DRIVER_HANDLED"}
{"seq":3,"tid":1,"fn":"CanCreateD3DBuffer","args":{},"ret":7}
)");
  ASSERT_EQ(t.events.size(), 2u);
  EXPECT_EQ(t.events[0].ret, 1);
  std::vector<std::string> lines = absl::StrSplit(Export(t), '\n');
  EXPECT_THAT(lines[0], HasSubstr(R"("ret":"DDHAL_DRIVER_HANDLED")"));
  EXPECT_THAT(lines[1], HasSubstr(R"("ret":7)"));
  ExpectError(R"({"seq":1,"tid":1,"fn":"CanCreateD3DBuffer","args":{},"ret":-1})",
              "line 1: ", "\"ret\" = -1 is out of range [0, 4294967295]");
}

TEST(JsonlValueTest, JsonQuoteEscapes) {
  EXPECT_EQ(JsonQuote("a\"b\\c\n\x01"), R"("a\"b\\c\n\u0001")");
  EXPECT_EQ(JsonQuote("é€😀"), "\"é€😀\"");
  // Not UTF-8: escaped byte by byte, so the line stays valid JSON.
  EXPECT_EQ(JsonQuote("\xff\xc3"), R"("\u00ff\u00c3")");
  EXPECT_EQ(JsonQuote("\xed\xa0\x80"), R"("\u00ed\u00a0\u0080")");  // a surrogate
}

TEST(JsonlValueTest, CheckEventLayoutFindsMismatches) {
  Event e;
  e.call = FindCall("CheckDeferredContextHandleSizes")
               ? IdOf(*FindCall("CheckDeferredContextHandleSizes"))
               : CallId::kInvalid;
  e.args = {1, 0, 2, 3, 0, 24};  // announces 2 elements of 2 fields, holds 1
  absl::Status st = CheckEventLayout(e);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(st.message()), HasSubstr("announces 2 elements"));
  e.args = {1, 0, 2, 0, 7};
  EXPECT_THAT(std::string(CheckEventLayout(e).message()), HasSubstr("expected 4"));
  e.args = {1, 0, 2, ~uint64_t{0}};
  EXPECT_FALSE(CheckEventLayout(e).ok());
  e.call = CallId::kInvalid;
  EXPECT_FALSE(CheckEventLayout(e).ok());
}

// ---- End inference --------------------------------------------------------------------------

TEST(JsonlEndTest, DenseSeqsAreShiftedToMakeRoom) {
  JsonlTrace t = MustParse(Flush(1, 1) + Flush(2, 1) + Flush(3, 2));
  EXPECT_THAT(Positions(t), ::testing::ElementsAre(Pos{1, 2, 0}, Pos{3, 4, 0}, Pos{5, 6, 0}));
}

TEST(JsonlEndTest, SparseSeqsAreKept) {
  JsonlTrace t = MustParse(Flush(10, 1) + Flush(20, 1) + Flush(30, 2));
  EXPECT_THAT(Positions(t), ::testing::ElementsAre(Pos{10, 11, 0}, Pos{20, 21, 0}, Pos{30, 31, 0}));
}

TEST(JsonlEndTest, ShiftIsAbsorbedByALaterRoomyGap) {
  JsonlTrace t =
      MustParse(Flush(10, 1) + Flush(20, 1) + Flush(21, 1) + Flush(22, 1) + Flush(40, 1));
  EXPECT_THAT(Positions(t), ::testing::ElementsAre(Pos{10, 11, 0}, Pos{20, 21, 0}, Pos{22, 23, 0},
                                                   Pos{24, 25, 0}, Pos{40, 41, 0}));
}

TEST(JsonlEndTest, NestedCallbackReturnsBeforeItsCall) {
  // CreateCommandList with SetErrorCb inside, then the next call of the thread.
  JsonlTrace t = MustParse(Flush(10, 1) + ErrorCb(11, 1, 10) + Flush(20, 1));
  EXPECT_THAT(Positions(t),
              ::testing::ElementsAre(Pos{10, 13, 0}, Pos{11, 12, 10}, Pos{20, 21, 0}));
}

TEST(JsonlEndTest, NestedChainInDenseSeqs) {
  JsonlTrace t = MustParse(Flush(1, 1) + ErrorCb(2, 1, 1) + ErrorCb(3, 1, 1) + Flush(4, 1));
  // 1 enters, 2 enters and returns, 3 enters and returns, 1 returns, 4.
  EXPECT_THAT(Positions(t),
              ::testing::ElementsAre(Pos{1, 6, 0}, Pos{2, 3, 1}, Pos{4, 5, 1}, Pos{7, 8, 0}));
}

TEST(JsonlEndTest, DeeperNestingUnwindsInnermostFirst) {
  // DDI call 10 > callback 11 > state-refresh DDI call 12 > callback 13.
  JsonlTrace t = MustParse(Flush(10, 1) + ErrorCb(11, 1, 10) + Flush(12, 1, R"(,"parent":11)") +
                           ErrorCb(13, 1, 12) + Flush(30, 1));
  EXPECT_THAT(Positions(t), ::testing::ElementsAre(Pos{10, 17, 0}, Pos{11, 16, 10}, Pos{12, 15, 11},
                                                   Pos{13, 14, 12}, Pos{30, 31, 0}));
}

TEST(JsonlEndTest, OtherThreadsInterleave) {
  // Thread 1's call 10 makes a callback at 12 after thread 2 entered 11: 10 returns after
  // 12's callback; 11 (a leaf) returns right after it was entered, before 12.
  JsonlTrace t =
      MustParse(Flush(10, 1) + Flush(11, 2) + ErrorCb(12, 1, 10) + Flush(20, 2) + Flush(30, 1));
  EXPECT_THAT(Positions(t), ::testing::ElementsAre(Pos{10, 15, 0}, Pos{11, 12, 0}, Pos{13, 14, 10},
                                                   Pos{20, 21, 0}, Pos{30, 31, 0}));
}

TEST(JsonlEndTest, GivenEndsAreKeptAndInferredOnesFitAround) {
  JsonlTrace t = MustParse(Flush(10, 1, R"(,"end":50)") + ErrorCb(20, 1, 10) +
                           Flush(30, 2, R"(,"end":40)") + ErrorCb(45, 1, 10) + Flush(60, 1));
  EXPECT_THAT(Positions(t), ::testing::ElementsAre(Pos{10, 50, 0}, Pos{20, 21, 10}, Pos{30, 40, 0},
                                                   Pos{45, 46, 10}, Pos{60, 61, 0}));
}

TEST(JsonlEndTest, InferredEndAfterAGivenNestedEnd) {
  JsonlTrace t = MustParse(Flush(10, 1) + ErrorCb(11, 1, 10, R"(,"end":12)") + Flush(13, 2));
  EXPECT_THAT(Positions(t),
              ::testing::ElementsAre(Pos{10, 13, 0}, Pos{11, 12, 10}, Pos{14, 15, 0}));
}

TEST(JsonlEndTest, NeverReturnedCalls) {
  // The process died inside the callback 2 of call 1 (both still in flight at the end).
  JsonlTrace t = MustParse(Flush(1, 1) + Flush(2, 2, R"(,"end":null)") + ErrorCb(3, 1, 1) +
                           ErrorCb(4, 2, 2, R"(,"end":null)"));
  EXPECT_THAT(Positions(t),
              ::testing::ElementsAre(Pos{1, 5, 0}, Pos{2, 0, 0}, Pos{3, 4, 1}, Pos{6, 0, 2}));
  EXPECT_THAT(Export(t), HasSubstr(R"("fn":"Flush","args":{"hDevice":"dev"},"end":null})"));
}

TEST(JsonlEndTest, CallAboveANeverReturnedOneNeverReturnedEither) {
  JsonlTrace t = MustParse(Flush(1, 1) + ErrorCb(2, 1, 1, R"(,"end":null)"));
  EXPECT_THAT(Positions(t), ::testing::ElementsAre(Pos{1, 0, 0}, Pos{2, 0, 1}));
}

TEST(JsonlEndTest, StreamingDecoderEmitsAsSoonAsPositionsAreFinal) {
  JsonlDecoder d;
  Event e;
  ASSERT_TRUE(d.AddLine(Flush(1, 1, R"(,"end":2)")).ok());
  EXPECT_FALSE(d.Next(&e));  // 1's gap is open until the next position is known
  ASSERT_TRUE(d.AddLine(Flush(3, 1, R"(,"end":4)")).ok());
  ASSERT_TRUE(d.Next(&e));
  EXPECT_EQ(e.seq, 1u);
  EXPECT_EQ(e.end, 2u);
  EXPECT_FALSE(d.Next(&e));
  ASSERT_TRUE(d.AddLine(Flush(5, 1)).ok());
  ASSERT_TRUE(d.Next(&e));
  EXPECT_EQ(e.seq, 3u);
  ASSERT_TRUE(d.Finish().ok());
  ASSERT_TRUE(d.Next(&e));
  EXPECT_EQ(e.seq, 5u);
  EXPECT_EQ(e.end, 6u);
  EXPECT_FALSE(d.Next(&e));
}

TEST(JsonlEndTest, FinishBeforeErrorDeliversTheCallsAboveABadLine) {
  JsonlDecoder d;
  Event e;
  ASSERT_TRUE(d.AddLine(Flush(1, 1)).ok());
  ASSERT_TRUE(d.AddLine(ErrorCb(2, 1, 1)).ok());
  EXPECT_FALSE(d.Next(&e));  // both ends still open
  EXPECT_FALSE(d.AddLine(R"({"seq":3,"tid":1,"fn":"Nope","args":{}})").ok());
  EXPECT_TRUE(d.FinishBeforeError());
  std::vector<Pos> got;
  while (d.Next(&e)) got.push_back({e.seq, e.end, e.parent});
  EXPECT_THAT(got, ::testing::ElementsAre(Pos{1, 4, 0}, Pos{2, 3, 1}));
  EXPECT_FALSE(d.Finish().ok());  // the error stays
}

TEST(JsonlEndTest, FinishBeforeErrorRefusesAfterAConsistencyError) {
  // The bad line was half applied (its thread's calls were closed): no partial result.
  JsonlDecoder d;
  ASSERT_TRUE(d.AddLine(Flush(1, 1, R"(,"end":10)")).ok());
  EXPECT_FALSE(d.AddLine(Flush(2, 1)).ok());
  EXPECT_FALSE(d.FinishBeforeError());
}

TEST(JsonlReaderTest, ReadsAFileAndStopsAtTheBadLine) {
  std::string path = absl::StrCat(::testing::TempDir(), "/jsonl_reader_test.jsonl");
  {
    std::ofstream out(path);
    out << Flush(1, 1) << Flush(2, 2) << "{\"seq\":3\n" << Flush(4, 1);
  }
  auto r = JsonlReader::Open(path);
  ASSERT_TRUE(r.ok()) << r.status();
  Event e;
  std::vector<uint64_t> seqs;
  while ((*r)->Next(&e)) seqs.push_back(e.seq);
  EXPECT_THAT(seqs, ::testing::ElementsAre(1u, 3u));
  EXPECT_THAT(std::string((*r)->status().message()), StartsWith("line 3: column 9: malformed"));
  EXPECT_EQ(JsonlReader::Open("/nonexistent/x.jsonl").status().code(), absl::StatusCode::kNotFound);
  std::remove(path.c_str());
}

// Random properly nested multi-thread traces: positions after inference keep the order of
// everything written, use each position once, and nest as the lines say.
TEST(JsonlEndTest, RandomTracesResolveConsistently) {
  std::mt19937 rng(7);
  for (int round = 0; round < 300; ++round) {
    // Simulate: per thread a stack; each step either enters a call (nested if the stack is
    // non-empty and a coin says so) or returns the innermost call.
    struct Call {
      uint64_t seq, end = 0, parent;
      uint32_t tid;
    };
    std::vector<Call> calls;
    std::map<uint32_t, std::vector<size_t>> stacks;
    uint64_t pos = 0;
    int threads = 1 + static_cast<int>(rng() % 3);
    for (int step = 0; step < 60; ++step) {
      uint32_t tid = 1 + rng() % threads;
      auto& st = stacks[tid];
      pos += 1 + (rng() % 3 == 0 ? rng() % 4 : 0);
      if (!st.empty() && rng() % 2 == 0) {
        calls[st.back()].end = pos;
        st.pop_back();
      } else {
        uint64_t parent = st.empty() ? 0 : calls[st.back()].seq;
        if (parent != 0 && rng() % 3 == 0) {  // not nested: the innermost returns first
          while (!st.empty()) {
            calls[st.back()].end = pos;
            st.pop_back();
            pos += 1;
          }
          parent = 0;
        }
        calls.push_back({pos, 0, parent, tid});
        st.push_back(calls.size() - 1);
      }
    }
    for (auto& [tid, st] : stacks) {
      while (!st.empty()) {
        pos += 1;
        calls[st.back()].end = pos;
        st.pop_back();
      }
    }
    // Write with about half of the ends left out; every leaf/nesting stays inferable only
    // when its end is the earliest possible, so compare relative order where given.
    std::string text;
    std::vector<bool> given;
    for (const Call& c : calls) {
      bool keep = rng() % 2 == 0;
      given.push_back(keep);
      text += absl::StrCat(R"({"seq":)", c.seq, R"(,"tid":)", c.tid,
                           R"(,"fn":"Flush","args":{"hDevice":"d"})",
                           c.parent ? absl::StrCat(R"(,"parent":)", c.parent) : "",
                           keep ? absl::StrCat(R"(,"end":)", c.end) : "", "}\n");
    }
    auto t = ParseJsonl(text);
    ASSERT_TRUE(t.ok()) << t.status() << "\n" << text;
    ASSERT_EQ(t->events.size(), calls.size());
    std::map<uint64_t, size_t> index_of_new_seq;
    std::set<uint64_t> used;
    for (size_t i = 0; i < calls.size(); ++i) {
      const Event& e = t->events[i];
      ASSERT_NE(e.end, 0u);
      EXPECT_GT(e.end, e.seq);
      EXPECT_TRUE(used.insert(e.seq).second);
      EXPECT_TRUE(used.insert(e.end).second);
      index_of_new_seq[e.seq] = i;
      if (i > 0) {
        EXPECT_GT(e.seq, t->events[i - 1].seq);
      }
      if (calls[i].parent != 0) {
        ASSERT_TRUE(index_of_new_seq.count(e.parent)) << text;
        const Event& p = t->events[index_of_new_seq[e.parent]];
        EXPECT_LT(e.end, p.end);
      }
    }
    // Given ends keep their order relative to every seq.
    for (size_t i = 0; i < calls.size(); ++i) {
      if (!given[i]) continue;
      for (size_t j = 0; j < calls.size(); ++j) {
        EXPECT_EQ(calls[i].end < calls[j].seq, t->events[i].end < t->events[j].seq)
            << i << " " << j << "\n"
            << text;
      }
    }
    // The export re-imports unchanged and exports byte for byte.
    std::string exported = Export(*t);
    auto again = ParseJsonl(exported);
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(again->events, t->events);
    EXPECT_EQ(Export(*again), exported);
  }
}

// ---- Round trips ----------------------------------------------------------------------------

constexpr absl::string_view kHandWritten =
    R"({"seq":1,"tid":7,"fn":"CalcPrivateCommandListSize","args":{"hDevice":"ic","hDeferredContext":"dc1"},"ret":64}
{"seq":2,"tid":7,"fn":"CreateCommandList","args":{"hDevice":"ic","hDeferredContext":"dc1","hCommandList":"cl1","hRTCommandList":"rtcl1"}}
{"seq":3,"tid":7,"fn":"SetErrorCb","args":{"hRuntimeDevice":"rtcore","hResult":"E_OUTOFMEMORY"},"parent":2}

{ "seq": 10, "tid": 9, "fn": "CommandListExecute", "args": { "hDevice": "ic", "hCommandList": "cl1" } }
{"seq":11,"tid":7,"fn":"RecycleDestroyCommandList","args":{"hDevice":"ic","hCommandList":"cl1"}}
{"seq":12,"tid":7,"fn":"RecycleCommandList","args":{"hDevice":"dc1","hCommandList":"cl1"}}
{"seq":13,"tid":7,"fn":"RecycleCreateCommandList","args":{"hDevice":"ic","hDeferredContext":"dc1","hCommandList":"cl1","hRTCommandList":"rtcl2"},"ret":"S_OK"}
)";

TEST(JsonlRoundTripTest, ImportExportImportEqualsImport) {
  JsonlTrace first = MustParse(kHandWritten);
  ASSERT_EQ(first.events.size(), 7u);
  std::string exported = Export(first);
  JsonlTrace second = MustParse(exported);
  EXPECT_EQ(second.events, first.events);
  ASSERT_EQ(second.handles.size(), first.handles.size());
  for (uint64_t id = 0; id < first.handles.size(); ++id)
    EXPECT_EQ(second.handles.Token(id), first.handles.Token(id));
}

TEST(JsonlRoundTripTest, ExportOfImportedExportIsByteIdentical) {
  std::string exported = Export(MustParse(kHandWritten));
  EXPECT_EQ(Export(MustParse(exported)), exported);
  EXPECT_EQ(
      exported,
      R"({"seq":1,"tid":7,"fn":"CalcPrivateCommandListSize","args":{"hDevice":"ic","pCreateCommandList":true,"hDeferredContext":"dc1"},"ret":64,"end":2}
{"seq":3,"tid":7,"fn":"CreateCommandList","args":{"hDevice":"ic","pCreateCommandList":true,"hDeferredContext":"dc1","hCommandList":"cl1","hRTCommandList":"rtcl1"},"end":6}
{"seq":4,"tid":7,"fn":"SetErrorCb","args":{"hRuntimeDevice":"rtcore","hResult":"E_OUTOFMEMORY"},"parent":3,"end":5}
{"seq":10,"tid":9,"fn":"CommandListExecute","args":{"hDevice":"ic","hCommandList":"cl1"},"end":11}
{"seq":12,"tid":7,"fn":"RecycleDestroyCommandList","args":{"hDevice":"ic","hCommandList":"cl1"},"end":13}
{"seq":14,"tid":7,"fn":"RecycleCommandList","args":{"hDevice":"dc1","hCommandList":"cl1"},"end":15}
{"seq":16,"tid":7,"fn":"RecycleCreateCommandList","args":{"hDevice":"ic","pCreateCommandList":true,"hDeferredContext":"dc1","hCommandList":"cl1","hRTCommandList":"rtcl2"},"ret":"S_OK","end":17}
)");
}

TEST(JsonlRoundTripTest, CrlfAndMissingFinalNewline) {
  std::string text = absl::StrCat(absl::StrReplaceAll(std::string(kHandWritten), {{"\n", "\r\n"}}));
  text.resize(text.size() - 2);
  JsonlTrace t = MustParse(text);
  EXPECT_EQ(Export(t), Export(MustParse(kHandWritten)));
}

}  // namespace
}  // namespace cltrace::format
