#include "ddi/call_traits.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "ddi/catalog.h"
#include "gtest/gtest.h"

namespace cltrace::ddi {
namespace {

// The traits are constant expressions (per-call code such as the runtime's call sites and the
// recorder's thunks branches on them at compile time).
static_assert(TraitsOf(CallId::kCreateCommandList).role == CallRole::kCreateCommandList);
static_assert(TraitsOf(CallId::kCreateResource).domain == Domain::kFT);
static_assert(fields::CreateDevice::hDrvDevice >= 0);

TEST(CallTraitsTest, EveryCatalogCallHasARole) {
  for (int i = 1; i < kCallIdCount; ++i) {
    const CallId id = static_cast<CallId>(i);
    EXPECT_NE(TraitsOf(id).role, CallRole::kNone) << GetCall(id)->name;
  }
  EXPECT_EQ(TraitsOf(CallId::kInvalid).role, CallRole::kNone);
  EXPECT_EQ(TraitsOf(static_cast<CallId>(kCallIdCount)).role, CallRole::kNone);
}

TEST(CallTraitsTest, RolesOfKnownCalls) {
  EXPECT_EQ(TraitsOf(CallId::kCreateCommandList).role, CallRole::kCreateCommandList);
  EXPECT_EQ(TraitsOf(CallId::kCreateResource).role, CallRole::kCreate);
  EXPECT_EQ(TraitsOf(CallId::kOpenResource).role, CallRole::kOpen);
  EXPECT_EQ(TraitsOf(CallId::kDestroyResource).role, CallRole::kDestroy);
  EXPECT_EQ(TraitsOf(CallId::kCommandListExecute).role, CallRole::kExecute);
  EXPECT_EQ(TraitsOf(CallId::kCalcPrivateResourceSize).role, CallRole::kSize);
  EXPECT_EQ(TraitsOf(CallId::kPsSetShader).role, CallRole::kSet);
  EXPECT_EQ(TraitsOf(CallId::kDraw).role, CallRole::kOther);
  EXPECT_EQ(TraitsOf(CallId::kStateVsConstBufCb).role, CallRole::kStateRefresh);
  EXPECT_EQ(TraitsOf(CallId::kRenderCb).role, CallRole::kRender);
  EXPECT_EQ(TraitsOf(CallId::kDxgkDdiSubmitCommand).role, CallRole::kKmdSubmit);
  EXPECT_STREQ(CallRoleName(CallRole::kCreateCommandList), "create_command_list");
}

TEST(CallTraitsTest, ContentRolesAndRules) {
  EXPECT_EQ(TraitsOf(CallId::kResourceUpdateSubresourceUP).content, ContentRole::kUploadSource);
  EXPECT_EQ(TraitsOf(CallId::kStagingResourceMap).content, ContentRole::kMap);
  EXPECT_EQ(TraitsOf(CallId::kDynamicIABufferUnmap).content, ContentRole::kUnmap);
  EXPECT_EQ(TraitsOf(CallId::kDraw).content, ContentRole::kNone);
  EXPECT_EQ(TraitsOf(CallId::kCreateResource).content, ContentRole::kInitialData);
  EXPECT_EQ(TraitsOf(CallId::kCalcPrivateResourceSize).content, ContentRole::kNone);
  EXPECT_STREQ(TraitsOf(CallId::kQueryGetData).dc_table_rule, "R65");
  EXPECT_STREQ(TraitsOf(CallId::kRecycleDestroyCommandList).dc_table_rule, "R14");
  EXPECT_STREQ(TraitsOf(CallId::kDraw).dc_table_rule, "R4");
  EXPECT_EQ(TraitsOf(CallId::kPsSetShader).bind_group, CallId::kPsSetShader);
}

// content= follows the call's shape: every DDI of the upload / map / unmap / DP2 typedefs carries
// content of that role, and no other does.
TEST(CallTraitsTest, ContentRoleFollowsTheTypedef) {
  for (int i = 1; i < kCallIdCount; ++i) {
    const CallInfo& ci = *GetCall(static_cast<CallId>(i));
    const absl::string_view t = ci.pfn_typedef;
    ContentRole want = ContentRole::kNone;
    if (t == "PFND3D10DDI_RESOURCEUPDATESUBRESOURCEUP") want = ContentRole::kUploadSource;
    if (t == "PFND3D10DDI_RESOURCEMAP") want = ContentRole::kMap;
    if (t == "PFND3D10DDI_RESOURCEUNMAP") want = ContentRole::kUnmap;
    if (t == "LPD3DHAL_DRAWPRIMITIVES2CB") want = ContentRole::kDrawPrimitives2;
    if (t == "PFND3D11DDI_CREATERESOURCE") want = ContentRole::kInitialData;
    EXPECT_EQ(TraitsOf(static_cast<CallId>(i)).content, want) << ci.name;
  }
}

TEST(CallTraitsTest, AgreeWithTheCatalogTables) {
  for (int i = 1; i < kCallIdCount; ++i) {
    const CallId id = static_cast<CallId>(i);
    const CallInfo& ci = *GetCall(id);
    const CallTraits& t = TraitsOf(id);
    EXPECT_EQ(t.layer, ci.layer) << ci.name;
    EXPECT_EQ(t.domain, ci.domain) << ci.name;
    EXPECT_EQ(t.ret, ci.ret) << ci.name;
    EXPECT_EQ(t.in_ic_table, ci.in_ic_table) << ci.name;
    EXPECT_EQ(t.in_dc_table, ci.in_dc_table) << ci.name;
    EXPECT_EQ(&TraitsOf(ci.name), &t) << ci.name;
    EXPECT_STREQ(NameOf(id), ci.name);
  }
  EXPECT_EQ(TraitsOf("NoSuchDdi").role, CallRole::kNone);
}

TEST(CallTraitsTest, FieldIndicesAreTheCatalogs) {
  auto index = [](const char* call, const char* field) {
    return FieldIndex(*FindCall(call), field);
  };
  EXPECT_EQ(fields::CreateDevice::hDrvDevice, index("CreateDevice", "hDrvDevice"));
  EXPECT_EQ(fields::GetCaps::DataSize, index("GetCaps", "DataSize"));
  EXPECT_EQ(fields::CreateResource::MipLevels, index("CreateResource", "MipLevels"));
  EXPECT_EQ(fields::CalcDeferredContextHandleSize::pICObject,
            index("CalcDeferredContextHandleSize", "pICObject"));
}

TEST(CallTraitsTest, HandleTraits) {
  auto type = [](absl::string_view name) -> uint16_t {
    auto types = HandleTypes();
    for (size_t i = 0; i < types.size(); ++i)
      if (name == types[i].name) return static_cast<uint16_t>(i);
    ADD_FAILURE() << "no handle type " << name;
    return 0;
  };
  EXPECT_EQ(HandleTraitsOf(type("D3D10DDI_HRESOURCE")).handle_class, HandleClass::kDriver);
  EXPECT_EQ(HandleTraitsOf(type("D3D10DDI_HRESOURCE")).object_type, 0);
  EXPECT_EQ(HandleTraitsOf(type("D3D11DDI_HCOMMANDLIST")).object_type, 11);
  EXPECT_EQ(HandleTraitsOf(type("D3D10DDI_HRTRESOURCE")).handle_class, HandleClass::kRuntime);
  EXPECT_EQ(HandleTraitsOf(type("D3D10DDI_HRTRESOURCE")).object_type, -1);
  EXPECT_EQ(HandleTraitsOf(type("D3DKMT_HCONTEXT")).handle_class, HandleClass::kKernel);
  EXPECT_EQ(HandleTraitsOf(type("D3D10DDI_HADAPTER")).handle_class, HandleClass::kAdapter);
  EXPECT_EQ(HandleTraitsOf(type("DXGI_DDI_HRESOURCE")).created_as, type("D3D10DDI_HRESOURCE"));
  EXPECT_EQ(HandleTraitsOf(type("D3D10DDI_HSHADER")).created_as, type("D3D10DDI_HSHADER"));
  EXPECT_EQ(HandleTraitsOf(9999).handle_class, HandleClass::kOther);
}

// Runs the catalog generator on the committed catalog plus `extra` (appended) and returns the
// generated call_traits_data.inc, or the generator's message after "FAILED:".
std::string Generate(const std::string& extra, const std::string& dir_name) {
  const char* build = std::getenv("CLTRACE_BUILD_DIR");
  if (build == nullptr) return "FAILED: CLTRACE_BUILD_DIR is not set";
  const std::string dir = ::testing::TempDir() + dir_name;
  std::ifstream in("ddi/ddi_catalog.txt");
  std::stringstream catalog;
  catalog << in.rdbuf() << "\n" << extra;
  if (std::system(("mkdir -p " + dir + "/ddi").c_str()) != 0) return "FAILED: mkdir";
  std::ofstream(dir + "/ddi_catalog.txt") << catalog.str();
  const std::string cmd = std::string(build) + "/tools/catalog_gen " + dir + "/ddi_catalog.txt " +
                          dir + " ddi 2>" + dir + "/err.txt";
  if (std::system(cmd.c_str()) != 0) {
    std::ifstream err(dir + "/err.txt");
    std::stringstream e;
    e << err.rdbuf();
    return "FAILED: " + e.str();
  }
  std::ifstream out(dir + "/ddi/call_traits_data.inc");
  std::stringstream s;
  s << out.rdbuf();
  return s.str();
}

// A new DDI needs one catalog line: its traits (and field indices) follow from it alone.
TEST(CallTraitsTest, ANewCatalogLineAloneYieldsTraits) {
  const std::string out = Generate(
      "table CLTRACE_TEST_FUNCS layer=device\n"
      "fn CreateWidget domain=FT tables=IC role=create\n"
      "  D3D10DDI_HDEVICE hDevice\n"
      "  D3D10DDI_HRESOURCE hWidget\n"
      "  D3D10DDI_HRTRESOURCE hRTWidget\n",
      "/new_line");
  EXPECT_NE(out.find("{CallRole::kCreate, ContentRole::kNone, Layer::kDevice, Domain::kFT, "
                     "ReturnKind::kVoid, true, false, \"R4\", CallId::kCreateWidget, "
                     "\"CreateWidget\"},"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("struct CreateWidget {\n  static constexpr int16_t hDevice = 0;\n"
                     "  static constexpr int16_t hWidget = 1;\n"),
            std::string::npos)
      << out;
}

TEST(CallTraitsTest, AFnLineWithoutARoleFailsTheBuild) {
  const std::string out = Generate(
      "table CLTRACE_TEST_FUNCS layer=device\nfn Widget domain=FT tables=IC\n", "/no_role");
  EXPECT_EQ(out.rfind("FAILED: ddi_catalog.txt:", 0), 0u) << out;
  EXPECT_NE(out.find("fn needs role="), std::string::npos) << out;
  const std::string typo =
      Generate("table CLTRACE_TEST_FUNCS layer=device\nfn Widget domain=FT tables=IC role=creat\n",
               "/bad_role");
  EXPECT_NE(typo.find("unknown role 'creat'"), std::string::npos) << typo;
}

}  // namespace
}  // namespace cltrace::ddi
