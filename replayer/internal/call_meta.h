// What the replayer needs to know about each catalog call, computed once from ddi/catalog.h,
// ddi/call_traits.h (roles, handle classes) and format/call_traits.h: who makes the call (the
// runtime side, which the replayer re-issues, or the driver, whose callbacks the replayer
// observes), where its function pointer sits in its table, which of its fields are handles of
// which class, which handle it creates or destroys, and which fields are outputs the replay
// compares with the recording.
//
// Thread-safety: CallMetaFor() builds the table once (thread-safe static); immutable after.
#ifndef CLTRACE_REPLAYER_INTERNAL_CALL_META_H_
#define CLTRACE_REPLAYER_INTERNAL_CALL_META_H_

#include <cstddef>
#include <cstdint>

#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
#include "ddi/call_ids.h"
#include "ddi/call_traits.h"
#include "ddi/catalog.h"
#include "ddi/catalog_types.h"
#include "format/content.h"

namespace cltrace::replay::internal {

// Who makes a call.
enum class Role : uint8_t {
  kInvalid,   // not a catalog call
  kIssue,     // the runtime calls the driver (adapter, device, DXGI layers): re-issued
  kCallback,  // the driver calls the runtime (core-layer and kernel-thunk callbacks): observed
  kIgnore,    // kernel-mode layers (KMD, Dxgkrnl) and API annotations: the replayer's own
              // kernel stands in for them, so they are neither issued nor compared
  kDx6,       // the DX6 runtime calls the DX6 driver (DX6 layer): re-issued into the DX6
              // model driver by the DX6 replay (replayer/internal/dx6_replay.h)
};

// How a handle value is produced on replay (the catalog's class= of its handle type): driver
// handles get fresh memory, kernel handles (D3DKMT_*) hand the recorded value out again, the
// adapter is the one OpenAdapter10_2 returned, handles of the ignored kernel-mode layers are
// kOther.
using HandleClass = ddi::HandleClass;

// Where the size of memory for a created driver handle comes from.
enum class SizeSource : uint8_t {
  kNone,
  kPending,    // the last CalcPrivate*Size the driver answered on the recorded thread
  kLocalSize,  // a DC-table open: CalcDeferredContextHandleSize of the IC object (hRT field)
};

// What a pointer argument is on replay (the replayer never passes a recorded address).
enum class PointerRole : uint8_t {
  kInputData,        // data the driver reads (pSysMemUP, private driver data): the call's
                     // content (pSysMemUP of an upload that has some), else a zero region
  kDeviceFuncs,      // CreateDevice p11DeviceFuncs: the device's IC table
  kDxgiFuncs,        // CreateDevice DXGIBaseDDI.pDXGIDDIBaseFunctions
  kKernelCallbacks,  // pKTCallbacks
  kCoreCallbacks,    // p11UMCallbacks
  kContextFuncs,     // p11ContextFuncs: the table of the deferred context hDrvContext
  kIcObject,         // pICObject: the replay memory of the recorded handle
  kRelocatedFuncs,   // RelocateDeviceFuncs pDeviceFunctions: the table of the call's context
};

struct PointerField {
  uint16_t index;
  PointerRole role;
};

struct HandleField {
  uint16_t index;  // fixed-field index
  HandleClass cls;
};

struct CallMeta {
  const format::CallInfo* info = nullptr;
  Role role = Role::kInvalid;
  format::Layer layer = format::Layer::kApi;
  // Byte offset of the function pointer in its table (issued calls and callbacks).
  size_t slot_offset = 0;
  // Fixed fields that are handles, and whether any array element holds a handle.
  absl::InlinedVector<HandleField, 6> handles;
  bool array_handles = false;
  // Fixed kPtr fields (pointers the replayer substitutes before calling the driver).
  absl::InlinedVector<PointerField, 4> pointers;
  // CreateDeferredContext / RecycleCreateDeferredContext: the hDrvContext field.
  int16_t context_field = -1;
  // The driver handle this call creates (fresh memory), -1 if none; and where its size comes
  // from. For DC-table opens the size is that of the IC object named by `rt_field`.
  int16_t create_field = -1;
  SizeSource size_source = SizeSource::kNone;
  int16_t rt_field = -1;
  // The driver handle whose memory the runtime frees after this call returns, -1 if none.
  int16_t destroy_field = -1;
  // The field naming the table the call goes through: field 0 (hDevice / hAdapter) for most,
  // the DXGI hDevice inside the argument structure for PresentDXGI.
  int16_t table_field = 0;
  // The presence field of the call's argument structure (its first structure parameter), -1 if
  // it has none. Through the immediate-context table a create or size query needs it; only
  // context-local opens pass NULL (ddi-spec §2.2, R56).
  int16_t args_struct_field = -1;
  // CalcPrivate*Size: its answer sizes the next created handle on the thread.
  bool calc_private = false;
  // CalcDeferredContextHandleSize: its answer sizes DC-local handles of pICObject.
  bool calc_local_size = false;
  int16_t ic_object_field = -1;
  // Fields compared after the call (non-pointer outputs, output arrays).
  bool has_outputs = false;
  // Size checks of the plan: the pSysMemUP field (source data of an update), the kernel
  // callback output fields that size a buffer the replay allocates ("...Size"), GetCaps
  // DataSize.
  int16_t sysmem_field = -1;
  absl::InlinedVector<uint16_t, 4> buffer_size_outputs;
  int16_t caps_size_field = -1;
  // Content (format/content.h, FORMAT.md §3.8): which bytes of the application the call carries
  // and the fields that place them. kUploadSource: hDstResource, DstSubresource, the pDstBox
  // presence field (its members left..back follow it) and the input RowPitch/DepthPitch.
  // kMap: hResource, Subresource, DDIMap and the outputs pData/RowPitch/DepthPitch of
  // pMappedSubResource. kUnmap: hResource, Subresource. kInitialData (CreateResource): only
  // pCreateResource's pInitialDataUP array.
  format::ContentRole content_role = format::ContentRole::kNone;
  int16_t resource_field = -1;
  int16_t subresource_field = -1;
  int16_t box_field = -1;
  int16_t map_type_field = -1;
  int16_t mapped_data_field = -1;
  int16_t row_pitch_field = -1;
  int16_t depth_pitch_field = -1;
  bool content_fields_ok = false;  // every field the role needs exists
};

const CallMeta& CallMetaFor(format::CallId id);

// The class of a catalog handle type.
HandleClass ClassOfHandleType(uint16_t type_index);
// The handle type a value of `type_index` must have been created as: the type itself, except
// the DXGI handles, which carry the driver's D3D10 device and resource handles.
uint16_t CreatedTypeOf(uint16_t type_index);

// Visits every field value of a validated argument vector: the fixed fields, then the elements
// of every array (element `elem` of array field `array`). `fn(const FieldInfo&, size_t index,
// int array_field)` where array_field is -1 for fixed fields.
template <typename Fn>
void ForEachField(const format::CallInfo& call, absl::Span<const uint64_t> args, Fn&& fn) {
  absl::Span<const format::FieldInfo> fixed = format::Fields(call);
  for (size_t i = 0; i < fixed.size() && i < args.size(); ++i) fn(fixed[i], i, -1);
  size_t cursor = fixed.size();
  for (size_t i = 0; i < fixed.size() && i < args.size(); ++i) {
    if (fixed[i].kind != format::FieldKind::kArray || args[i] == 0) continue;
    absl::Span<const format::FieldInfo> elems = format::ElementFields(fixed[i]);
    const uint64_t n = args[i] - 1;
    for (uint64_t e = 0; e < n; ++e) {
      for (size_t j = 0; j < elems.size(); ++j) {
        if (cursor >= args.size()) return;
        fn(elems[j], cursor++, static_cast<int>(i));
      }
    }
  }
}

}  // namespace cltrace::replay::internal

#endif  // CLTRACE_REPLAYER_INTERNAL_CALL_META_H_
