#include "format/catalog.h"

#include <set>
#include <string>

#include "format/ddi_abi.h"
#include "gtest/gtest.h"

namespace cltrace::format {
namespace {

TEST(CatalogTest, IdsAndNamesAgree) {
  ASSERT_GT(Calls().size(), 1u);
  std::set<std::string> names;
  for (size_t i = 1; i < Calls().size(); ++i) {
    const CallInfo& c = Calls()[i];
    EXPECT_TRUE(names.insert(c.name).second) << "duplicate " << c.name;
    EXPECT_EQ(FindCall(c.name), &c);
    EXPECT_EQ(static_cast<size_t>(IdOf(c)), i);
  }
  EXPECT_EQ(FindCall("NoSuchDdi"), nullptr);
  EXPECT_EQ(GetCall(0u), nullptr);
  EXPECT_EQ(GetCall(static_cast<uint32_t>(Calls().size())), nullptr);
}

TEST(CatalogTest, CreateCommandListFieldsUseDocumentedNames) {
  const CallInfo* c = FindCall("CreateCommandList");
  ASSERT_NE(c, nullptr);
  std::vector<std::string> names;
  for (const FieldInfo& f : Fields(*c)) names.push_back(f.name);
  EXPECT_EQ(names, (std::vector<std::string>{"hDevice", "pCreateCommandList", "hDeferredContext",
                                             "hCommandList", "hRTCommandList"}));
  EXPECT_EQ(Fields(*c)[1].kind, FieldKind::kPresent);
  EXPECT_TRUE(c->in_ic_table);
  EXPECT_TRUE(c->in_dc_table);
  EXPECT_EQ(c->domain, Domain::kFT);
}

TEST(CatalogTest, InoutAndOutputArray) {
  const CallInfo* c = FindCall("CheckDeferredContextHandleSizes");
  ASSERT_NE(c, nullptr);
  auto f = Fields(*c);
  ASSERT_EQ(f.size(), 4u);
  EXPECT_STREQ(f[1].name, "pHSizes");
  EXPECT_EQ(f[1].dir, FieldDir::kIn);
  EXPECT_STREQ(f[2].name, "pHSizesOut");
  EXPECT_EQ(f[2].dir, FieldDir::kOut);
  EXPECT_EQ(f[3].kind, FieldKind::kArray);
  auto elems = ElementFields(f[3]);
  ASSERT_EQ(elems.size(), 2u);
  EXPECT_STREQ(elems[0].name, "HandleType");
  EXPECT_EQ(elems[0].kind, FieldKind::kEnum);
  EXPECT_STREQ(elems[1].name, "DriverPrivateSize");
}

TEST(CatalogTest, EnumAndFlagNames) {
  const EnumInfo* ht = FindEnum("D3D11DDI_HANDLETYPE");
  ASSERT_NE(ht, nullptr);
  EXPECT_EQ(NameOfValue(*ht, 11), "D3D11DDI_HT_COMMANDLIST");
  EXPECT_EQ(ValueOfName(*ht, "D3D11DDI_HT_COMMANDLIST"), 11u);
  EXPECT_EQ(NameOfValue(*ht, 999), std::nullopt);
  const EnumInfo* caps = FindEnum("D3D11DDI_THREADING_CAPS_FLAGS");
  ASSERT_NE(caps, nullptr);
  EXPECT_EQ(NameOfValue(*caps, 0x5), "D3D11DDICAPS_FREETHREADED|D3D11DDICAPS_COMMANDLISTS_BUILD_2");
  EXPECT_EQ(ValueOfName(*caps, "D3D11DDICAPS_FREETHREADED|D3D11DDICAPS_COMMANDLISTS_BUILD_2"), 5u);
  EXPECT_EQ(NameOfValue(*caps, 0x8), std::nullopt);
  EXPECT_EQ(HresultToString(static_cast<int32_t>(0x8007000E)), "E_OUTOFMEMORY");
  EXPECT_EQ(HresultToString(static_cast<int32_t>(0x88760870)), "D3DDDIERR_DEVICEREMOVED");
  EXPECT_EQ(HresultToString(static_cast<int32_t>(0x80001234)), "0x80001234");
}

// The generated C ABI: a table slot per catalog entry, handles are one pointer.
TEST(CatalogTest, GeneratedAbiShapes) {
  static_assert(sizeof(D3D11DDI_HCOMMANDLIST) == sizeof(void*));
  static_assert(sizeof(D3DKMT_HCONTEXT) == 4);
  D3D11DDI_DEVICEFUNCS funcs{};
  funcs.pfnRecycleCreateCommandList = nullptr;
  PFND3D11DDI_DESTROYCOMMANDLIST destroy = nullptr;
  funcs.pfnRecycleDestroyCommandList = destroy;  // one typedef for both (ddi-spec §1.4)
  funcs.pfnDestroyCommandList = destroy;
  EXPECT_EQ(funcs.pfnDestroyCommandList, funcs.pfnRecycleDestroyCommandList);
}

}  // namespace
}  // namespace cltrace::format
