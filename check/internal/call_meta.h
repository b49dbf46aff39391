// What the analysis needs to know about each catalog call, precomputed once per CallId from
// ddi/catalog.h and ddi/call_traits.h: the role of each call is the catalog's role= (Op is the
// checker's finer name for it, by layer), handle roles follow from the handle types' class=
// and object=, and field indexes are looked up by the fields' catalog names. Calls with role
// `other` keep Op::kOther, so rules about them stay silent.
//
// Thread-safety: CallTable::Get() builds the table once (thread-safe static) and it is
// immutable afterwards.
#ifndef CLTRACE_CHECK_INTERNAL_CALL_META_H_
#define CLTRACE_CHECK_INTERNAL_CALL_META_H_

#include <cstdint>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/string_view.h"
#include "check/rules.h"
#include "ddi/call_ids.h"
#include "ddi/catalog.h"
#include "ddi/catalog_types.h"

namespace cltrace::check::internal {

// The role a call plays for the state machines and rules.
enum class Op : uint8_t {
  kNone,    // not a known call id
  kOther,   // device call without a special role (draws, copies, clears...)
  kSetter,  // Set*: binds state
  // Adapter.
  kCreateDevice,
  kGetCaps,
  kCalcPrivate,  // every CalcPrivate*Size without a role of its own
  // Device table, command lists and deferred contexts (ddi-spec §2.1).
  kDestroyDevice,
  kCalcPrivateDeferredContextSize,
  kCreateDeferredContext,
  kRecycleCreateDeferredContext,
  kCalcPrivateCommandListSize,
  kCreateCommandList,
  kRecycleCreateCommandList,
  kRecycleCommandList,
  kRecycleDestroyCommandList,
  kDestroyCommandList,
  kCommandListExecute,
  kAbandonCommandList,
  kCheckHandleSizes,
  kCalcHandleSize,
  // Device table, objects and trackers.
  kCreateObject,   // Create*/Open* of a resource, view, shader, state object, query...
  kDestroyObject,  // Destroy* of such an object
  kQueryBegin,
  kQueryEnd,
  kMap,
  kUnmap,
  kFlush,
  // DXGI base functions.
  kDxgiPresent,
  kDxgiSetDisplayMode,
  kDxgiOther,
  // Core-layer callbacks.
  kSetErrorCb,
  kAmortizedCb,
  kDisableStagingCb,
  kStateCb,
  // Kernel-thunk callbacks.
  kRenderCb,
  kPresentCb,
  kSetDisplayModeCb,
  kAllocateCb,
  kDeallocateCb,
  kCreateContextCb,
  kHContextCb,  // other callbacks bound to one HCONTEXT (Escape, DestroyContext, sync objects)
  kOtherCb,
  // Kernel-mode driver and its callbacks (GPU model).
  kKmdRender,
  kKmdPatch,
  kKmdSubmitCommand,
  kKmdInterruptRoutine,
  kDxgkNotifyInterrupt,
  kDxgkQueueDpc,
  kKmdOther,
  // DX6.
  kDx6DrawPrimitives2,
  kDx6Other,
  kAnnotation,
};

inline constexpr int16_t kNoField = -1;

// One array field of a call: where its element count lives and how many fields an element
// has (elements follow the fixed fields, arrays in fixed-field order).
struct ArrayField {
  int16_t field;    // index of the kArray fixed field
  uint16_t stride;  // fields per element
  // Element offsets (within an element) of object-handle fields, up to 2.
  int8_t handle_elem[2] = {-1, -1};
};

struct CallMeta {
  Op op = Op::kNone;
  format::Layer layer = format::Layer::kApi;
  format::Domain domain = format::Domain::kAny;
  bool in_ic_table = false;
  bool in_dc_table = false;
  // Counts as recorded work on a DC (R48): not a Set*, not a local open/close.
  bool work = false;
  // Rule number to report when called through a DC table although the catalog says the
  // runtime never does (the catalog's dc_rule=; R4 by default).
  Rule dc_table_rule = Rule::kR4;
  // D3D11DDI_HANDLETYPE of the object a Create/Open/Destroy handles (or a CL), -1 if none.
  int8_t object_type = -1;
  // Field indexes (kNoField when absent).
  int16_t hdevice = kNoField;     // hDevice (device layer) / hAdapter
  int16_t handle = kNoField;      // the created/destroyed/used primary handle
  int16_t rt = kNoField;          // the HRT handle of a create (IC handle for local opens)
  int16_t present = kNoField;     // the argument structure's presence field
  int16_t args_first = kNoField;  // [args_first, args_end): the structure's members
  int16_t args_end = kNoField;
  int16_t dependency = kNoField;    // object-handle member of the structure (views: resource)
  int16_t hdeferred = kNoField;     // pCreateCommandList->hDeferredContext
  int16_t hdrvcontext = kNoField;   // pCreateDeferredContext->hDrvContext
  int16_t hdrvdevice = kNoField;    // pCreateDevice->hDrvDevice
  int16_t hrtcorelayer = kNoField;  // hRTCoreLayer of CreateDevice/CreateDeferredContext
  int16_t handle_type = kNoField;   // HandleType of CalcDeferredContextHandleSize
  int16_t ddimap = kNoField;        // DDIMap of a map
  int16_t usage = kNoField;         // Usage of CreateResource
  int16_t misc_flags = kNoField;    // MiscFlags of CreateResource
  int16_t primary_desc = kNoField;  // pPrimaryDesc of CreateResource (present: a primary)
  int16_t hresult = kNoField;       // hResult of SetErrorCb
  int16_t hruntime = kNoField;      // hRuntimeDevice of core-layer callbacks
  int16_t count_in = kNoField;      // CheckDeferredContextHandleSizes: pHSizes
  int16_t count_out = kNoField;     //   pHSizesOut
  int16_t sizes_array = kNoField;   //   pHandleSize
  int16_t caps_type = kNoField;     // GetCaps: Type
  int16_t caps_array = kNoField;    // GetCaps: pData->pData
  int16_t start_slot = kNoField;    // Set* with slot arrays: the first slot
  int16_t hcontext = kNoField;      // kernel callbacks: hContext (HCONTEXT)
  // Set*: the binding group (calls that bind the same slots share it: the catalog's group=,
  // as PsSetShaderWithIfaces would say group=PsSetShader); the CallId of the group's setter.
  uint16_t bind_group = 0;
  // Fixed object-handle fields other than the created one (R57 checks, bindings).
  absl::InlinedVector<int16_t, 4> handle_fields;
  // Every array field, in fixed-field order.
  absl::InlinedVector<ArrayField, 2> arrays;
  uint16_t fixed_count = 0;
};

// Values of named constants, looked up by name (0 / false when the catalog lacks them).
struct Constants {
  uint32_t e_outofmemory = 0;
  uint32_t e_invalidarg = 0;
  uint32_t deviceremoved = 0;       // D3DDDIERR_DEVICEREMOVED
  uint32_t dxgi_deviceremoved = 0;  // DXGI_ERROR_DEVICE_REMOVED
  uint64_t usage_dynamic = 2;
  uint64_t misc_shared = 0x2;
  uint64_t map_discard = 4;
  uint64_t map_nooverwrite = 5;
  uint64_t ht_commandlist = 11;
  uint64_t caps_threading = 128;
  uint64_t caps_freethreaded = 0x1;
  uint64_t caps_commandlists = 0x2;
  uint64_t caps_commandlists_build2 = 0x4;
};

class CallTable {
 public:
  static const CallTable& Get();

  const CallMeta& operator[](format::CallId id) const {
    size_t i = static_cast<size_t>(id);
    return i < metas_.size() ? metas_[i] : metas_[0];
  }
  const Constants& constants() const { return constants_; }
  // D3D11DDI_HANDLETYPE of an object handle type (by HandleTypes() index), -1 otherwise.
  int ObjectTypeOfHandleType(uint16_t type_index) const {
    return type_index < object_type_.size() ? object_type_[type_index] : -1;
  }

 private:
  CallTable();
  std::vector<CallMeta> metas_;
  std::vector<int8_t> object_type_;
  Constants constants_;

  static Constants LookUpConstants();
};

}  // namespace cltrace::check::internal

#endif  // CLTRACE_CHECK_INTERNAL_CALL_META_H_
