// The apitrace player's internals, shared by the files that implement it: the objects the
// capture names (Obj, DeviceRec, Mapping), the helpers on dump values, and class Player, which
// plays a capture's calls through the runtime model. player.cc holds the entry point, Run,
// dispatch, object bookkeeping and the argument helpers; player_device.cc the device, swap
// chain, resource, view, shader and state creation; player_context.cc the device context calls.
// Not an interface: only corpus/apitrace/ includes it.
#ifndef CLTRACE_CORPUS_APITRACE_INTERNAL_PLAYER_IMPL_H_
#define CLTRACE_CORPUS_APITRACE_INTERNAL_PLAYER_IMPL_H_

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "corpus/apitrace/dump_parser.h"
#include "corpus/apitrace/player.h"
#include "runtime/runtime.h"

namespace cltrace::apitrace::internal {

using runtime::Stage;
using runtime::ViewKind;
using Kind = Value::Kind;

// ---- Values -----------------------------------------------------------------------------------

// The pointed-to value of `&value`; the value itself otherwise.
const Value* Deref(const Value* v);

// The elements of an array argument: {a, b}, &a (one element), NULL (none), a lone value.
std::vector<const Value*> Elements(const Value* v);

// A struct member at any depth up to two (unions appear as nested structures).
const Value* FindField(const Value* s, absl::string_view name);

class Player;

// Bad input at `call`.
absl::Status Bad(const Call& call, absl::string_view message);

// `auto var = expr;` returning its status from the calling function when it is not ok.
#define CLTRACE_TRY(var, expr) \
  auto var = (expr);           \
  if (!var.ok()) return var.status()

// ---- Objects ----------------------------------------------------------------------------------

enum class ObjKind : uint8_t {
  kDevice,
  kContext,
  kResource,
  kView,
  kShader,
  kInputLayout,
  kBlendState,
  kDepthStencilState,
  kRasterizerState,
  kSamplerState,
  kQuery,
  kCommandList,
  kSwapChain,
  kClassInstance,  // no runtime object: D3D11 keeps class instances itself
  kPlain,          // DXGI factories, adapters, outputs, class linkages: no runtime object
};

const char* KindName(ObjKind k);

struct Obj;
struct DeviceRec {
  runtime::Device* device = nullptr;
  // The device's own objects: they live as long as the device, whatever their counts say (the
  // children keep a D3D11 device; the device keeps its immediate context).
  Obj* device_obj = nullptr;
  Obj* ic_obj = nullptr;
};

struct Obj {
  ObjKind kind = ObjKind::kPlain;
  uint32_t refs = 1;
  // The runtime object whose count follows `refs`; null for objects the player counts itself
  // (devices, immediate contexts, swap chains, DXGI objects).
  runtime::Object* rt = nullptr;
  DeviceRec* dev = nullptr;
  runtime::DeviceContext* ctx = nullptr;    // contexts (immediate or deferred)
  std::vector<runtime::Resource*> buffers;  // swap chains: the back buffers (one reference each)
  runtime::ResourceDesc buffer_desc;        // swap chains: what the back buffers are
  std::vector<uint64_t> keys;               // the capture's pointers naming it
  // Class instances: the D3D11DDIARG_POINTERDATA bits their Set*Shader hands the driver
  // (uCBOffset:12, uCBID:4, uBaseSamp:4, uBaseTex:7 from CreateClassInstance's offsets).
  uint32_t pointer_data = 0;
  bool alive = true;
};

struct Mapping {
  const Obj* context = nullptr;  // the player's objects (kept in Player::objects_)
  const Obj* resource_obj = nullptr;
  // Textures: the pitches the capture's driver gave, the layout its memcpy bytes have; the
  // model driver's own pitches may differ (0 for buffers: one row).
  uint64_t capture_size = 0;
  uint32_t capture_row = 0, capture_depth = 0, row = 0, depth = 0;
  uint64_t size = 0;
  uint8_t* data = nullptr;
  runtime::DeviceContext* ctx = nullptr;
  runtime::Resource* resource = nullptr;
  uint32_t subresource = 0;
};

template <typename T>
T* As(const Obj* o) {
  return o == nullptr ? nullptr : static_cast<T*>(o->rt);
}

uint32_t MipCount(uint32_t w, uint32_t h, uint32_t d);

// BC1-BC7: rows of 4x4 blocks.
bool IsBlockCompressed(uint32_t format);

// Bytes per element of the vertex formats input layouts use (0: unknown).
uint32_t FormatBytes(uint32_t format);

// ---- The player -------------------------------------------------------------------------------

class Player {
 public:
  Player(CallSource* source, const PlayOptions& options) : source_(source), options_(options) {}

  absl::StatusOr<PlayReport> Run();

 private:
  // One call on its thread.
  absl::Status PlayCall(const Call& call);
  absl::Status Dispatch(const Call& call);
  // A method on object `o`: IUnknown, the methods that make no DDI call, then InterfaceCall,
  // which routes by interface.
  absl::Status ObjectCall(const Call& call, Obj* o);
  absl::Status QueryInterface(const Call& call, Obj* o);
  absl::Status GetDeviceOrContext(const Call& call, Obj* o);
  absl::Status InterfaceCall(const Call& call, Obj* o);
  absl::Status FreeFunction(const Call& call);
  absl::Status DeviceCall(const Call& call, Obj* self);
  absl::Status ContextCall(const Call& call, Obj* self);
  // ContextCall by kind of method (each takes the methods ContextCall routes to it).
  absl::Status ContextInputAssembly(const Call& call, Obj* self);  // IA, SO, CS UAVs
  absl::Status ContextOutputMerger(const Call& call, Obj* self);
  absl::Status ContextRasterizer(const Call& call, Obj* self);  // and SetPredication
  absl::Status ContextDraw(const Call& call, Obj* self);        // draws and dispatches
  absl::Status ContextCopy(const Call& call, Obj* self);
  absl::Status ContextUpdate(const Call& call, Obj* self);
  absl::Status ContextClear(const Call& call, Obj* self);  // and GenerateMips
  absl::Status ContextQuery(const Call& call, Obj* self);  // Begin, End, GetData
  absl::Status ContextCommandList(const Call& call, Obj* self);
  absl::Status SwapChainCall(const Call& call, Obj* self);
  absl::Status PlainCall(const Call& call);
  // ID3D11ClassLinkage: class instances (no DDI call; D3D11 keeps them itself).
  absl::Status ClassLinkageCall(const Call& call);
  // CreateCounter and CheckCounter on `device`.
  absl::Status CounterCall(const Call& call, Obj* self);
  // ID3DUserDefinedAnnotation markers on the context `o` (runtime/annotation.h).
  absl::Status Annotation(const Call& call, Obj* o);
  absl::Status Memcpy(const Call& call);
  absl::Status CreateDevice(const Call& call, bool with_swap_chain);
  absl::Status CreateSwapChain(const Call& call, Obj* device, const Value* desc, const Value* out);
  absl::Status MakeBackBuffers(const Call& call, Obj* chain, uint32_t count);
  absl::Status CreateResource(const Call& call, Obj* self);
  // CreateResource's initial data: one D3D10_DDIARG_SUBRESOURCE_UP per subresource of `rd`
  // into `up`, pointing into `bytes` (empty when the call has no pInitialData).
  absl::Status InitialData(const Call& call, const runtime::ResourceDesc& rd,
                           std::vector<std::string>* bytes,
                           std::vector<D3D10_DDIARG_SUBRESOURCE_UP>* up);
  absl::Status CreateView(const Call& call, Obj* self, ViewKind kind);
  absl::Status CreateShader(const Call& call, Obj* self, Stage stage);
  absl::Status CreateState(const Call& call, Obj* self);
  // CreateState by kind of object.
  absl::Status MakeInputLayout(const Call& call, Obj* self);
  absl::Status MakeBlendState(const Call& call, Obj* self);
  absl::Status MakeDepthStencilState(const Call& call, Obj* self);
  absl::Status MakeRasterizerState(const Call& call, Obj* self);
  absl::Status MakeSamplerState(const Call& call, Obj* self);
  absl::Status MakeQuery(const Call& call, Obj* self);  // and predicates
  absl::Status MakeDeferredContext(const Call& call, Obj* self);
  // Binds what the runtime model created (a skip when it refused) to output argument `out_name`.
  absl::Status BindCreated(const Call& call, Obj* self, HRESULT hr, runtime::Object* created,
                           ObjKind kind, const char* out_name);
  // Reads the fields of a description: keeps the first bad field's error in `bad` and uses the
  // fallback for it.
  struct DescReader {
    DescReader(Player* player, const Call& call) : player(player), call(call) {}
    Player* player;
    const Call& call;
    absl::Status bad;
    uint32_t Get(const Value* s, absl::string_view name, uint32_t fallback);
    float GetF(const Value* s, absl::string_view name, float fallback);
  };
  absl::Status MapCall(const Call& call, Obj* self);
  absl::Status Setter(const Call& call, Obj* self, Stage stage, absl::string_view what);

  // Objects.
  absl::StatusOr<Obj*> Lookup(const Call& call, const Value* v, ObjKind kind, bool allow_null);
  absl::StatusOr<Obj*> This(const Call& call);
  absl::Status BindNew(const Call& call, const Value* out, std::shared_ptr<Obj> obj);
  // The key `&0x...` an output argument names, 0 for NULL.
  absl::StatusOr<uint64_t> OutKey(const Call& call, const char* arg);
  void AddRef(Obj* o);
  void Release(Obj* o);
  void Forget(Obj* o);
  // AddRef for every object the references of output argument `v` name (Get* calls).
  void AddRefOutputs(const Value* v);

  // Arguments.
  absl::StatusOr<const Value*> Arg(const Call& call, absl::string_view name);
  absl::StatusOr<uint64_t> Uint(const Call& call, absl::string_view name);
  absl::StatusOr<uint32_t> U32(const Call& call, const Value* v, absl::string_view what);
  absl::StatusOr<double> Float(const Call& call, const Value* v, absl::string_view what);
  // An enum or flags value (names, numbers, a bitmask).
  absl::StatusOr<uint32_t> Enum(const Call& call, const Value* v, absl::string_view what);
  absl::StatusOr<uint32_t> FieldEnum(const Call& call, const Value* s, absl::string_view name,
                                     uint32_t fallback);
  absl::StatusOr<std::string> Bytes(const Call& call, const Value* v, size_t at_least);
  // Argument `arg` of the call: an enum or flags value, the same as a signed integer, a resource,
  // a view (not null), a box (`*has_box` false when the pointer is null).
  absl::StatusOr<uint32_t> ArgEnum(const Call& call, const char* arg);
  absl::StatusOr<int32_t> ArgInt(const Call& call, const char* arg);
  absl::StatusOr<Obj*> ArgResource(const Call& call, const char* arg, bool null_ok);
  absl::StatusOr<Obj*> ArgView(const Call& call, const char* arg);
  absl::Status ArgBox(const Call& call, const char* arg, D3D10_DDI_BOX* box, bool* has_box);

  absl::Status Skip(const Call& call, absl::string_view reason);
  void Substitute(const Call& call, absl::string_view reason);
  static void Note(std::vector<Skipped>* list, const Call& call, absl::string_view reason);

  CallSource* source_;
  const PlayOptions& options_;
  PlayReport report_;
  std::vector<std::unique_ptr<DeviceRec>> devices_;
  std::vector<std::shared_ptr<Obj>> objects_;  // creation order
  absl::flat_hash_map<uint64_t, std::shared_ptr<Obj>> keys_;
  std::map<uint64_t, Mapping> mappings_;  // by the capture's pData

  // An application bug D3D11 does not catch: executing a command list after its final Release.
  // A released object cannot reach the driver through the runtime model's API, so when the
  // first command list the capture finally releases is executed again, the first device runs
  // with the runtime model's R40 misuse mode, which issues that execute at the release.
  // A first pass over the source (rewound after it).
  absl::Status FindReleasedListExecute();
  // Drops released objects from objects_ once it has grown to twice its size after the last
  // compaction (devices and immediate contexts stay: GetDevice/GetImmediateContext revive them),
  // so the table holds about the live objects, not every object the capture ever made.
  void CompactObjects();
  size_t compact_at_ = 64;
  uint64_t r40_key_ = 0;  // the released list the capture executes again
  int64_t r40_release_line_ = 0;
  bool r40_armed_ = false;  // the first device was created with the misuse mode
  size_t r40_before_ = 0;   // R40 executes the runtime issued before the play
  static size_t R40Executes() {
    size_t n = 0;
    for (const runtime::LifecycleNonEdge& e : runtime::ProcessLifecycleSteps().non_edges) {
      n += absl::string_view(e.call) == "CommandListExecute" && e.rule == rules::Rule::kR40;
    }
    return n;
  }
};

}  // namespace cltrace::apitrace::internal

#endif  // CLTRACE_CORPUS_APITRACE_INTERNAL_PLAYER_IMPL_H_
