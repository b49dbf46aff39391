// The generated tables against Microsoft's order (ddi/testing/ms_tables.h, transcribed from
// Microsoft's pages): every slot's offset is its Microsoft index times the pointer size, every
// table has exactly Microsoft's slot count, and the catalog's slot i is Microsoft's member i.
#include "ddi/testing/ms_tables.h"

#include <cstddef>
#include <string>
#include <vector>

#include "ddi/catalog.h"
#include "ddi/ddi_abi.h"
#include "gtest/gtest.h"

namespace cltrace::ddi {
namespace {

struct Slot {
  std::string member;
  size_t offset;
};

#define CLTRACE_MS_SLOT(T, Name) Slot{"pfn" #Name, offsetof(T, pfn##Name)},
#define CLTRACE_DEVICE_SLOT(Name) CLTRACE_MS_SLOT(D3D11DDI_DEVICEFUNCS, Name)
#define CLTRACE_DXGI_SLOT(Name) CLTRACE_MS_SLOT(DXGI_DDI_BASE_FUNCTIONS, Name)
#define CLTRACE_KCB_SLOT(Name) Slot{"pfn" #Name, offsetof(D3DDDI_DEVICECALLBACKS, pfn##Name)},

// The catalog's calls through `table`, in declaration (= slot) order.
std::vector<const CallInfo*> CallsOfTable(const std::string& table) {
  std::vector<const CallInfo*> out;
  for (const CallInfo& c : Calls()) {
    if (c.table != nullptr && table == c.table) out.push_back(&c);
  }
  return out;
}

// Microsoft's member i must sit at slot i, and the table holds nothing else.
template <typename Table>
void ExpectMicrosoftOrder(const std::vector<Slot>& ms, const std::string& table) {
  ASSERT_EQ(sizeof(Table), ms.size() * sizeof(void*));
  std::vector<const CallInfo*> calls = CallsOfTable(table);
  ASSERT_EQ(calls.size(), ms.size());
  for (size_t i = 0; i < ms.size(); ++i) {
    EXPECT_EQ(ms[i].offset, i * sizeof(void*)) << ms[i].member << " is not at slot " << i;
    EXPECT_EQ(std::string(calls[i]->member), ms[i].member) << "catalog slot " << i;
  }
}

TEST(MicrosoftTablesTest, DeviceFuncsHaveMicrosoftsOneHundredFiftySlotsInOrder) {
  const std::vector<Slot> ms = {CLTRACE_MS_D3D11DDI_DEVICEFUNCS(CLTRACE_DEVICE_SLOT)};
  ASSERT_EQ(ms.size(), static_cast<size_t>(kMsD3D11DeviceFuncsSlots));
  ExpectMicrosoftOrder<D3D11DDI_DEVICEFUNCS>(ms, "D3D11DDI_DEVICEFUNCS");
}

TEST(MicrosoftTablesTest, DxgiBaseFunctionsHaveAllSevenSlotsInOrder) {
  const std::vector<Slot> ms = {CLTRACE_MS_DXGI_DDI_BASE_FUNCTIONS(CLTRACE_DXGI_SLOT)};
  ASSERT_EQ(ms.size(), static_cast<size_t>(kMsDxgiBaseFunctionsSlots));
  ExpectMicrosoftOrder<DXGI_DDI_BASE_FUNCTIONS>(ms, "DXGI_DDI_BASE_FUNCTIONS");
}

TEST(MicrosoftTablesTest, DeviceCallbacksAreTheUncompactedD3D11Table) {
  const std::vector<Slot> ms = {CLTRACE_MS_D3DDDI_DEVICECALLBACKS(CLTRACE_KCB_SLOT)};
  ASSERT_EQ(ms.size(), static_cast<size_t>(kMsD3dDdiDeviceCallbacksSlots));
  ExpectMicrosoftOrder<D3DDDI_DEVICECALLBACKS>(ms, "D3DDDI_DEVICECALLBACKS");
}

}  // namespace
}  // namespace cltrace::ddi
