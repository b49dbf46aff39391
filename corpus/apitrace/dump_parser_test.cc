#include "corpus/apitrace/dump_parser.h"

#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cltrace::apitrace {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Kind = Value::Kind;

// What `apitrace dump --thread-ids=yes` prints for a D3D11 program (the shape of
// lib/trace/trace_dump.cpp's output; addresses from a capture).
constexpr char kDump[] =
    "1 @1a2c D3D11CreateDevice(pAdapter = NULL, DriverType = D3D_DRIVER_TYPE_HARDWARE, "
    "Software = NULL, Flags = D3D11_CREATE_DEVICE_DEBUG | D3D11_CREATE_DEVICE_BGRA_SUPPORT, "
    "pFeatureLevels = {D3D_FEATURE_LEVEL_11_0, D3D_FEATURE_LEVEL_10_1}, FeatureLevels = 2, "
    "SDKVersion = 7, ppDevice = &0x5a3b10, pFeatureLevel = &D3D_FEATURE_LEVEL_11_0, "
    "ppImmediateContext = &0x5a4c20) = S_OK\n"
    "2 @1a2c ID3D11Device::CreateBuffer(this = 0x5a3b10, pDesc = &{ByteWidth = 1024, "
    "Usage = D3D11_USAGE_DYNAMIC, BindFlags = D3D11_BIND_VERTEX_BUFFER, "
    "CPUAccessFlags = D3D11_CPU_ACCESS_WRITE, MiscFlags = 0x0, StructureByteStride = 0}, "
    "pInitialData = NULL, ppBuffer = &0x5b0010) = S_OK\n"
    "3 @1a2c ID3D11DeviceContext::Map(this = 0x5a4c20, pResource = 0x5b0010, Subresource = 0, "
    "MapType = D3D11_MAP_WRITE_DISCARD, MapFlags = 0x0, pMappedResource = &{pData = 0x7f001000, "
    "RowPitch = 1024, DepthPitch = 1024}) = S_OK\n"
    "4 @1a2c memcpy(dest = 0x7f001000, src = blob(64), n = 64) // fake\n"
    "5 @1a2c ID3D11DeviceContext::Unmap(this = 0x5a4c20, pResource = 0x5b0010, Subresource = 0)\n"
    "6 @1a2c ID3D11DeviceContext::ClearRenderTargetView(this = 0x5a4c20, "
    "pRenderTargetView = 0x5c0000, ColorRGBA = {0, 0.5, 1, -1.5e-05})\n"
    "7 @2b00 ID3DUserDefinedAnnotation::BeginEvent(this = 0x5a4d00, Name = L\"Frame 1\") = 0\n"
    "8 @1a2c IDXGISwapChain::Present(this = 0x5d0000, SyncInterval = 1, Flags = 0x0) = S_OK\n"
    "\n";

TEST(ApitraceDumpTest, ReadsAD3D11CaptureWithNumbersAndThreads) {
  absl::StatusOr<std::vector<Call>> calls = ParseDump(kDump);
  ASSERT_TRUE(calls.ok()) << calls.status();
  ASSERT_EQ(calls->size(), 8u);
  const Call& create = (*calls)[0];
  EXPECT_EQ(create.no, 1u);
  EXPECT_EQ(create.thread, 0x1a2cu);
  EXPECT_EQ(create.name, "D3D11CreateDevice");
  EXPECT_EQ(create.Interface(), "");
  EXPECT_EQ(create.Method(), "D3D11CreateDevice");
  EXPECT_EQ(create.Arg("pAdapter")->kind, Kind::kNull);
  EXPECT_EQ(create.Arg("DriverType")->text, "D3D_DRIVER_TYPE_HARDWARE");
  EXPECT_THAT(create.Arg("Flags")->names,
              ElementsAre("D3D11_CREATE_DEVICE_DEBUG", "D3D11_CREATE_DEVICE_BGRA_SUPPORT"));
  ASSERT_EQ(create.Arg("pFeatureLevels")->kind, Kind::kArray);
  EXPECT_EQ(create.Arg("pFeatureLevels")->members.size(), 2u);
  const Value* device = create.Arg("ppDevice");
  ASSERT_EQ(device->kind, Kind::kReference);
  EXPECT_EQ(device->members[0].value.AsUint(), 0x5a3b10u);
  EXPECT_EQ(create.ret->text, "S_OK");

  const Call& buffer = (*calls)[1];
  EXPECT_EQ(buffer.Interface(), "ID3D11Device");
  EXPECT_EQ(buffer.Method(), "CreateBuffer");
  const Value& desc = buffer.Arg("pDesc")->members[0].value;
  ASSERT_EQ(desc.kind, Kind::kStruct);
  EXPECT_EQ(desc.Field("ByteWidth")->AsUint(), 1024u);
  EXPECT_EQ(desc.Field("MiscFlags")->AsUint(), 0u);
  EXPECT_EQ(desc.Field("Usage")->text, "D3D11_USAGE_DYNAMIC");

  const Call& memcpy_call = (*calls)[3];
  EXPECT_TRUE(memcpy_call.fake);
  EXPECT_EQ(memcpy_call.Arg("src")->kind, Kind::kBlob);
  EXPECT_EQ(memcpy_call.Arg("src")->u, 64u);
  EXPECT_FALSE((*calls)[4].ret.has_value());

  const Value* color = (*calls)[5].Arg("ColorRGBA");
  ASSERT_EQ(color->members.size(), 4u);
  EXPECT_EQ(color->members[1].value.kind, Kind::kFloat);
  EXPECT_DOUBLE_EQ(color->members[1].value.d, 0.5);
  EXPECT_DOUBLE_EQ(color->members[3].value.d, -1.5e-05);
  EXPECT_EQ(color->members[0].value.kind, Kind::kInt);

  const Value* name = (*calls)[6].Arg("Name");
  EXPECT_TRUE(name->wide);
  EXPECT_EQ(name->text, "Frame 1");
  EXPECT_EQ((*calls)[6].thread, 0x2b00u);
}

TEST(ApitraceDumpTest, OptionalPartsMayBeLeftOut) {
  // --call-nos=no --arg-names=no, no thread ids, an incomplete call, a '?' and CRLF endings.
  absl::StatusOr<std::vector<Call>> calls = ParseDump(
      "ID3D11DeviceContext::Draw(0x5a4c20, 3, 0)\r\n"
      "ID3D11DeviceContext::Flush(this = 0x5a4c20) // incomplete\n"
      "ID3D11Device::CreateTexture2D(this = 0x1, pDesc = ?, pInitialData = NULL, "
      "ppTexture2D = &NULL) = E_OUTOFMEMORY");
  ASSERT_TRUE(calls.ok()) << calls.status();
  ASSERT_EQ(calls->size(), 3u);
  EXPECT_FALSE((*calls)[0].no.has_value());
  EXPECT_FALSE((*calls)[0].thread.has_value());
  ASSERT_EQ((*calls)[0].args.size(), 3u);
  EXPECT_EQ((*calls)[0].args[1].name, "");
  EXPECT_EQ((*calls)[0].args[1].value.AsUint(), 3u);
  EXPECT_TRUE((*calls)[1].incomplete);
  EXPECT_EQ((*calls)[2].Arg("pDesc")->kind, Kind::kUnknown);
  EXPECT_EQ((*calls)[2].ret->text, "E_OUTOFMEMORY");
  EXPECT_EQ((*calls)[2].line, 3);
}

TEST(ApitraceDumpTest, MultilineStringsBacktracesAndCommentsAreNotCalls) {
  absl::StatusOr<std::vector<Call>> calls = ParseDump(
      "// captured by apitrace\n"
      "10 ID3D11Device::SetPrivateData(this = 0x1, guid = WKPDID_D3DDebugObjectName, "
      "DataSize = 9, pData = \"two\nlines\\\\\\\"\\101\") = S_OK\n"
      "Backtrace:\n"
      "app.exe+0x1234\n"
      "d3d11.dll+0x42\n"
      "\n"
      "11 ID3D11DeviceContext::Draw(this = 0x2, VertexCount = -1, StartVertexLocation = 0)\n");
  ASSERT_TRUE(calls.ok()) << calls.status();
  ASSERT_EQ(calls->size(), 2u);
  EXPECT_EQ((*calls)[0].Arg("pData")->text, "two\nlines\\\"A");
  EXPECT_EQ((*calls)[0].Arg("guid")->kind, Kind::kName);
  EXPECT_EQ((*calls)[1].no, 11u);
  EXPECT_EQ((*calls)[1].line, 8);
  EXPECT_TRUE((*calls)[1].Arg("VertexCount")->negative);
  EXPECT_EQ((*calls)[1].Arg("VertexCount")->i, -1);
}

TEST(ApitraceDumpTest, SpecialNumbersAndBitmaskRemainders) {
  absl::StatusOr<std::vector<Call>> calls = ParseDump(
      "f(a = inf, b = -nan, c = 1e+20, d = D3D11_BIND_VERTEX_BUFFER | 0x80000000, e = {}, "
      "g = 18446744073709551615, h = true)\n");
  ASSERT_TRUE(calls.ok()) << calls.status();
  const Call& c = (*calls)[0];
  EXPECT_EQ(c.Arg("a")->kind, Kind::kFloat);
  EXPECT_EQ(c.Arg("b")->kind, Kind::kFloat);
  EXPECT_DOUBLE_EQ(c.Arg("c")->d, 1e20);
  EXPECT_THAT(c.Arg("d")->names, ElementsAre("D3D11_BIND_VERTEX_BUFFER"));
  EXPECT_EQ(c.Arg("d")->u, 0x80000000u);
  EXPECT_EQ(c.Arg("e")->kind, Kind::kArray);
  EXPECT_TRUE(c.Arg("e")->members.empty());
  EXPECT_EQ(c.Arg("g")->AsUint(), UINT64_MAX);
  EXPECT_EQ(c.Arg("h")->AsUint(), 1u);
}

TEST(ApitraceDumpTest, BlobFileNamesOfDumpBlobs) {
  // `apitrace dump --blobs` writes each blob to a file and prints its name.
  absl::StatusOr<std::vector<Call>> calls =
      ParseDump("4 memcpy(dest = 0x7f001000, src = blob(\"blob_call4.bin\"), n = 64)\n");
  ASSERT_TRUE(calls.ok()) << calls.status();
  const Value* src = (*calls)[0].Arg("src");
  EXPECT_EQ(src->kind, Kind::kBlob);
  EXPECT_EQ(src->text, "blob_call4.bin");
  absl::StatusOr<std::vector<Call>> bad = ParseDump("4 memcpy(src = blob(\"\"))\n");
  EXPECT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("line 1, column "));
}

TEST(ApitraceDumpTest, BadInputNamesLineAndColumn) {
  struct Case {
    const char* text;
    const char* message;
  } cases[] = {
      {"1 f(a = 1\n", "line 1, column 10: expected ', ' or ')'"},
      {"f(a = 1)\ng(b = \"open)\n", "line 2, column 7: unterminated string"},
      {"f(a = 1) junk\n", "line 1, column 9: unexpected text after the call"},
      {"f(a = $)\n", "line 1, column 7: unexpected character '$'"},
      {"f(a = 99999999999999999999)\n", "line 1, column 7: integer out of range"},
      {"(a = 1)\n", "line 1, column 1: expected a function name"},
      {"f(a = 0x)\n", "line 1, column 9: expected up to 16 hexadecimal digits"},
      {"f(a = {x = 1, 2})\n", "line 1, column 15: expected 'member = value'"},
      {"f(a = blob(3)\n", "line 1, column 14: expected ', ' or ')'"},
      {"@zz f()\n", "line 1, column 2: expected a hexadecimal thread id"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::vector<Call>> calls = ParseDump(c.text);
    ASSERT_FALSE(calls.ok()) << c.text;
    EXPECT_THAT(std::string(calls.status().message()), HasSubstr(c.message)) << c.text;
  }
}

TEST(ApitraceDumpTest, HostileNestingStopsAtTheDepthLimit) {
  std::string deep = "f(a = " + std::string(100000, '{') + ")\n";
  absl::StatusOr<std::vector<Call>> calls = ParseDump(deep);
  ASSERT_FALSE(calls.ok());
  EXPECT_THAT(std::string(calls.status().message()), HasSubstr("values nested too deep"));
  std::string refs = "f(a = " + std::string(100000, '&') + "1)\n";
  EXPECT_FALSE(ParseDump(refs).ok());
}

TEST(ApitraceDumpTest, ParserStreamsCallsAndKeepsTheFirstError) {
  DumpParser parser("a()\nb()\nc(\nd()\n");
  Call call;
  std::vector<std::string> names;
  while (parser.Next(&call)) names.push_back(call.name);
  EXPECT_THAT(names, ElementsAre("a", "b"));
  EXPECT_THAT(std::string(parser.status().message()), HasSubstr("line 3"));
  EXPECT_FALSE(parser.Next(&call));
}

// DumpStream reads the same calls (and the same first error) as ParseDump, line by line.
std::vector<std::string> Summaries(const std::vector<Call>& calls) {
  std::vector<std::string> out;
  for (const Call& c : calls) {
    std::string args;
    for (const Value::Member& m : c.args) {
      absl::StrAppend(&args, m.name, "=", static_cast<int>(m.value.kind), ":", m.value.text, ":",
                      m.value.u, ",");
    }
    out.push_back(absl::StrCat(c.line, " ", c.no.value_or(0), " ", c.thread.value_or(0), " ",
                               c.name, "(", args, ")", c.fake, c.incomplete));
  }
  return out;
}

absl::StatusOr<std::vector<Call>> StreamAll(const std::string& text, size_t* max_buffered) {
  std::istringstream in(text);
  DumpStream stream(&in);
  std::vector<Call> calls;
  Call call;
  while (stream.Next(&call)) calls.push_back(call);
  *max_buffered = stream.max_buffered();
  if (!stream.status().ok()) return stream.status();
  return calls;
}

TEST(ApitraceDumpTest, StreamReadsWhatParseDumpReads) {
  const std::string texts[] = {
      kDump,
      "// captured by apitrace\n\n"
      "10 ID3D11Device::SetPrivateData(this = 0x1, guid = WKPDID_D3DDebugObjectName, "
      "DataSize = 9, pData = \"two\nlines\\\\\\\"\\101\n\") = S_OK\n"
      "Backtrace:\n"
      "app.exe+0x1234 \"quoted\n"
      "\n"
      "   \n"
      "11 ID3D11DeviceContext::Draw(this = 0x2, VertexCount = -1, StartVertexLocation = 0)",
      "a()\r\nb(s = \"x\r\ny\")\r\n",
      "a()\nb()\nc(\nd()\n",
      "f(a = 1)\ng(b = \"open)\nh()\n",
      "f(a = 1) junk\n",
      "\n\n@zz f()\n",
  };
  for (const std::string& text : texts) {
    absl::StatusOr<std::vector<Call>> all = ParseDump(text);
    size_t buffered = 0;
    absl::StatusOr<std::vector<Call>> streamed = StreamAll(text, &buffered);
    ASSERT_EQ(all.ok(), streamed.ok()) << text;
    if (all.ok()) {
      EXPECT_EQ(Summaries(*all), Summaries(*streamed)) << text;
    } else {
      EXPECT_EQ(all.status(), streamed.status()) << text;
    }
  }
}

TEST(ApitraceDumpTest, StreamHoldsOneCallAtATime) {
  std::string text;
  for (int i = 1; i <= 10000; ++i) {
    absl::StrAppend(&text, i, " @7a0 ID3D11DeviceContext::Draw(this = 0xc00, VertexCount = ", i,
                    ", StartVertexLocation = 0)\n// comment\n\n");
  }
  size_t buffered = 0;
  absl::StatusOr<std::vector<Call>> calls = StreamAll(text, &buffered);
  ASSERT_TRUE(calls.ok()) << calls.status();
  ASSERT_EQ(calls->size(), 10000u);
  EXPECT_EQ(calls->back().line, 3 * 9999 + 1);
  // The longest line (with its newline), not the 900 KB of the whole text.
  EXPECT_EQ(buffered, std::string("10000 @7a0 ID3D11DeviceContext::Draw(this = 0xc00, "
                                  "VertexCount = 10000, StartVertexLocation = 0)\n")
                          .size());
}

}  // namespace
}  // namespace cltrace::apitrace
