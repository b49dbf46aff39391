#include "corpus/apitrace/player.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "ddi/catalog.h"
#include "runtime/runtime.h"

namespace cltrace::apitrace {
namespace {

using runtime::Stage;
using runtime::ViewKind;
using Kind = Value::Kind;

// ---- D3D11 names ----------------------------------------------------------------------------
// D3D11 enum and flag names without their "D3D11_" / "D3D10_" / "D3D_" prefix, with the value
// the 11.0 DDI takes (the same number as the API's except for the bind flags, which the DDI
// numbers differently, and the misc flags the DDI does not have).
struct NameValue {
  const char* name;
  uint32_t value;
};
constexpr NameValue kNames[] = {
    // BOOL (apitrace prints it as an enum) and the API's named constants
    {"FALSE", 0},
    {"TRUE", 1},
    {"DEFAULT_SAMPLE_MASK", 0xffffffffu},
    {"KEEP_RENDER_TARGETS_AND_DEPTH_STENCIL", 0xffffffffu},
    {"KEEP_UNORDERED_ACCESS_VIEWS", 0xffffffffu},
    {"SO_NO_RASTERIZED_STREAM", 0xffffffffu},
    // D3D11_USAGE
    {"USAGE_DEFAULT", 0},
    {"USAGE_IMMUTABLE", 1},
    {"USAGE_DYNAMIC", 2},
    {"USAGE_STAGING", 3},
    // D3D11_BIND_FLAG -> D3D10_DDI_RESOURCE_BIND_FLAG
    {"BIND_VERTEX_BUFFER", 0x1},
    {"BIND_INDEX_BUFFER", 0x2},
    {"BIND_CONSTANT_BUFFER", 0x4},
    {"BIND_SHADER_RESOURCE", 0x8},
    {"BIND_STREAM_OUTPUT", 0x10},
    {"BIND_RENDER_TARGET", 0x20},
    {"BIND_DEPTH_STENCIL", 0x40},
    {"BIND_UNORDERED_ACCESS", 0x100},
    {"BIND_DECODER", 0x200},
    // D3D11_CPU_ACCESS_FLAG -> the DDI's map bits (read 1, write 2)
    {"CPU_ACCESS_READ", 0x1},
    {"CPU_ACCESS_WRITE", 0x2},
    // D3D11_RESOURCE_MISC_FLAG -> D3D10_DDI_RESOURCE_MISC_FLAG (cube: the dimension instead)
    {"RESOURCE_MISC_GENERATE_MIPS", 0x1},
    {"RESOURCE_MISC_SHARED", 0x2},
    {"RESOURCE_MISC_TEXTURECUBE", 0},
    {"RESOURCE_MISC_DRAWINDIRECT_ARGS", 0x10},
    {"RESOURCE_MISC_BUFFER_ALLOW_RAW_VIEWS", 0x20},
    {"RESOURCE_MISC_BUFFER_STRUCTURED", 0x40},
    {"RESOURCE_MISC_RESOURCE_CLAMP", 0},
    {"RESOURCE_MISC_SHARED_KEYEDMUTEX", 0},
    {"RESOURCE_MISC_GDI_COMPATIBLE", 0},
    // D3D11_MAP, D3D11_MAP_FLAG
    {"MAP_READ", 1},
    {"MAP_WRITE", 2},
    {"MAP_READ_WRITE", 3},
    {"MAP_WRITE_DISCARD", 4},
    {"MAP_WRITE_NO_OVERWRITE", 5},
    {"MAP_FLAG_DO_NOT_WAIT", 0x100000},
    // D3D11_QUERY
    {"QUERY_EVENT", 0},
    {"QUERY_OCCLUSION", 1},
    {"QUERY_TIMESTAMP", 2},
    {"QUERY_TIMESTAMP_DISJOINT", 3},
    {"QUERY_PIPELINE_STATISTICS", 4},
    {"QUERY_OCCLUSION_PREDICATE", 5},
    {"QUERY_SO_STATISTICS", 6},
    {"QUERY_SO_OVERFLOW_PREDICATE", 7},
    {"QUERY_MISC_PREDICATEHINT", 1},
    {"ASYNC_GETDATA_DONOTFLUSH", 1},
    // D3D11_PRIMITIVE_TOPOLOGY (the patch lists are added by ValueOf)
    {"PRIMITIVE_TOPOLOGY_UNDEFINED", 0},
    {"PRIMITIVE_TOPOLOGY_POINTLIST", 1},
    {"PRIMITIVE_TOPOLOGY_LINELIST", 2},
    {"PRIMITIVE_TOPOLOGY_LINESTRIP", 3},
    {"PRIMITIVE_TOPOLOGY_TRIANGLELIST", 4},
    {"PRIMITIVE_TOPOLOGY_TRIANGLESTRIP", 5},
    {"PRIMITIVE_TOPOLOGY_LINELIST_ADJ", 10},
    {"PRIMITIVE_TOPOLOGY_LINESTRIP_ADJ", 11},
    {"PRIMITIVE_TOPOLOGY_TRIANGLELIST_ADJ", 12},
    {"PRIMITIVE_TOPOLOGY_TRIANGLESTRIP_ADJ", 13},
    // D3D11_INPUT_CLASSIFICATION, D3D11_CLEAR_FLAG
    {"APPEND_ALIGNED_ELEMENT", 0xffffffffu},
    {"INPUT_PER_VERTEX_DATA", 0},
    {"INPUT_PER_INSTANCE_DATA", 1},
    {"CLEAR_DEPTH", 1},
    {"CLEAR_STENCIL", 2},
    // D3D11_BLEND, D3D11_BLEND_OP, D3D11_COLOR_WRITE_ENABLE
    {"BLEND_ZERO", 1},
    {"BLEND_ONE", 2},
    {"BLEND_SRC_COLOR", 3},
    {"BLEND_INV_SRC_COLOR", 4},
    {"BLEND_SRC_ALPHA", 5},
    {"BLEND_INV_SRC_ALPHA", 6},
    {"BLEND_DEST_ALPHA", 7},
    {"BLEND_INV_DEST_ALPHA", 8},
    {"BLEND_DEST_COLOR", 9},
    {"BLEND_INV_DEST_COLOR", 10},
    {"BLEND_SRC_ALPHA_SAT", 11},
    {"BLEND_BLEND_FACTOR", 14},
    {"BLEND_INV_BLEND_FACTOR", 15},
    {"BLEND_SRC1_COLOR", 16},
    {"BLEND_INV_SRC1_COLOR", 17},
    {"BLEND_SRC1_ALPHA", 18},
    {"BLEND_INV_SRC1_ALPHA", 19},
    {"BLEND_OP_ADD", 1},
    {"BLEND_OP_SUBTRACT", 2},
    {"BLEND_OP_REV_SUBTRACT", 3},
    {"BLEND_OP_MIN", 4},
    {"BLEND_OP_MAX", 5},
    {"COLOR_WRITE_ENABLE_RED", 1},
    {"COLOR_WRITE_ENABLE_GREEN", 2},
    {"COLOR_WRITE_ENABLE_BLUE", 4},
    {"COLOR_WRITE_ENABLE_ALPHA", 8},
    {"COLOR_WRITE_ENABLE_ALL", 15},
    // D3D11_COMPARISON_FUNC, D3D11_DEPTH_WRITE_MASK, D3D11_STENCIL_OP
    {"COMPARISON_NEVER", 1},
    {"COMPARISON_LESS", 2},
    {"COMPARISON_EQUAL", 3},
    {"COMPARISON_LESS_EQUAL", 4},
    {"COMPARISON_GREATER", 5},
    {"COMPARISON_NOT_EQUAL", 6},
    {"COMPARISON_GREATER_EQUAL", 7},
    {"COMPARISON_ALWAYS", 8},
    {"DEPTH_WRITE_MASK_ZERO", 0},
    {"DEPTH_WRITE_MASK_ALL", 1},
    {"STENCIL_OP_KEEP", 1},
    {"STENCIL_OP_ZERO", 2},
    {"STENCIL_OP_REPLACE", 3},
    {"STENCIL_OP_INCR_SAT", 4},
    {"STENCIL_OP_DECR_SAT", 5},
    {"STENCIL_OP_INVERT", 6},
    {"STENCIL_OP_INCR", 7},
    {"STENCIL_OP_DECR", 8},
    // D3D11_FILL_MODE, D3D11_CULL_MODE, D3D11_TEXTURE_ADDRESS_MODE
    {"FILL_WIREFRAME", 2},
    {"FILL_SOLID", 3},
    {"CULL_NONE", 1},
    {"CULL_FRONT", 2},
    {"CULL_BACK", 3},
    {"TEXTURE_ADDRESS_WRAP", 1},
    {"TEXTURE_ADDRESS_MIRROR", 2},
    {"TEXTURE_ADDRESS_CLAMP", 3},
    {"TEXTURE_ADDRESS_BORDER", 4},
    {"TEXTURE_ADDRESS_MIRROR_ONCE", 5},
    // D3D11_FILTER (the COMPARISON_ variants are added by ValueOf)
    {"FILTER_MIN_MAG_MIP_POINT", 0x0},
    {"FILTER_MIN_MAG_POINT_MIP_LINEAR", 0x1},
    {"FILTER_MIN_POINT_MAG_LINEAR_MIP_POINT", 0x4},
    {"FILTER_MIN_POINT_MAG_MIP_LINEAR", 0x5},
    {"FILTER_MIN_LINEAR_MAG_MIP_POINT", 0x10},
    {"FILTER_MIN_LINEAR_MAG_POINT_MIP_LINEAR", 0x11},
    {"FILTER_MIN_MAG_LINEAR_MIP_POINT", 0x14},
    {"FILTER_MIN_MAG_MIP_LINEAR", 0x15},
    {"FILTER_ANISOTROPIC", 0x55},
    // D3D11_CREATE_DEVICE_FLAG (only SINGLETHREADED reaches the DDI)
    {"CREATE_DEVICE_SINGLETHREADED", 0x10},
    {"CREATE_DEVICE_DEBUG", 0},
    {"CREATE_DEVICE_BGRA_SUPPORT", 0},
    {"CREATE_DEVICE_SWITCH_TO_REF", 0},
    {"CREATE_DEVICE_PREVENT_INTERNAL_THREADING_OPTIMIZATIONS", 0},
    {"CREATE_DEVICE_VIDEO_SUPPORT", 0},
    {"CREATE_DEVICE_DEBUGGABLE", 0},
    {"CREATE_DEVICE_PREVENT_ALTERING_LAYER_SETTINGS_FROM_REGISTRY", 0},
    {"CREATE_DEVICE_DISABLE_GPU_TIMEOUT", 0},
    // DXGI_USAGE
    {"DXGI_RESOURCE_PRIORITY_MINIMUM", 0x28000000},
    {"DXGI_RESOURCE_PRIORITY_LOW", 0x50000000},
    {"DXGI_RESOURCE_PRIORITY_NORMAL", 0x78000000},
    {"DXGI_RESOURCE_PRIORITY_HIGH", 0xa0000000},
    {"DXGI_RESOURCE_PRIORITY_MAXIMUM", 0xc8000000},
    {"DXGI_USAGE_SHADER_INPUT", 0x8},
    {"DXGI_USAGE_RENDER_TARGET_OUTPUT", 0x20},
    {"DXGI_USAGE_BACK_BUFFER", 0},
    {"DXGI_USAGE_SHARED", 0},
    {"DXGI_USAGE_READ_ONLY", 0},
    {"DXGI_USAGE_DISCARD_ON_PRESENT", 0},
    {"DXGI_USAGE_UNORDERED_ACCESS", 0x100},
};

absl::string_view Unprefixed(absl::string_view name) {
  for (absl::string_view p : {"D3D11_", "D3D10_", "D3D_"}) {
    if (absl::ConsumePrefix(&name, p)) break;
  }
  return name;
}

const absl::flat_hash_map<std::string, uint32_t>& NameTable() {
  static const auto* table = [] {
    auto* t = new absl::flat_hash_map<std::string, uint32_t>;
    for (const NameValue& n : kNames) t->emplace(n.name, n.value);
    for (uint32_t i = 1; i <= 32; ++i) {
      t->emplace(absl::StrCat("PRIMITIVE_TOPOLOGY_", i, "_CONTROL_POINT_PATCHLIST"), 32 + i);
    }
    for (const NameValue& n : kNames) {
      absl::string_view f = n.name;
      if (absl::ConsumePrefix(&f, "FILTER_")) {
        t->emplace(absl::StrCat("FILTER_COMPARISON_", f), n.value | 0x80);
      }
    }
    return t;
  }();
  return *table;
}

// The value of one enum or flag name; DXGI formats come from the DDI catalog.
std::optional<uint32_t> ValueOfName(absl::string_view name) {
  if (absl::StartsWith(name, "DXGI_FORMAT_")) {
    static const ddi::EnumInfo* formats = ddi::FindEnum("DXGI_FORMAT");
    if (formats == nullptr) return std::nullopt;
    std::optional<uint64_t> v = ddi::ValueOfName(*formats, name);
    if (!v) return std::nullopt;
    return static_cast<uint32_t>(*v);
  }
  const auto& table = NameTable();
  auto it = table.find(Unprefixed(name));
  if (it == table.end()) return std::nullopt;
  return it->second;
}

// ---- Values -----------------------------------------------------------------------------------

// The pointed-to value of `&value`; the value itself otherwise.
const Value* Deref(const Value* v) {
  if (v != nullptr && v->kind == Kind::kReference && !v->members.empty()) {
    return &v->members[0].value;
  }
  return v;
}

// The elements of an array argument: {a, b}, &a (one element), NULL (none), a lone value.
std::vector<const Value*> Elements(const Value* v) {
  std::vector<const Value*> out;
  if (v == nullptr || v->kind == Kind::kNull || v->kind == Kind::kUnknown) return out;
  if (v->kind == Kind::kReference) v = Deref(v);
  if (v->kind == Kind::kArray) {
    for (const Value::Member& m : v->members) out.push_back(&m.value);
  } else {
    out.push_back(v);
  }
  return out;
}

// A struct member at any depth up to two (unions appear as nested structures).
const Value* FindField(const Value* s, absl::string_view name) {
  s = Deref(s);
  if (s == nullptr || s->kind != Kind::kStruct) return nullptr;
  if (const Value* f = s->Field(name)) return f;
  for (const Value::Member& m : s->members) {
    if (m.value.kind == Kind::kStruct) {
      if (const Value* f = m.value.Field(name)) return f;
    }
  }
  return nullptr;
}

class Player;

// Bad input at `call`.
absl::Status Bad(const Call& call, absl::string_view message) {
  return absl::InvalidArgumentError(
      absl::StrCat("line ", call.line, ": ", call.name, ": ", message));
}

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
  kPlain,  // DXGI factories, adapters, outputs, class linkages: no runtime object
};

const char* KindName(ObjKind k) {
  switch (k) {
    case ObjKind::kDevice:
      return "a device";
    case ObjKind::kContext:
      return "a device context";
    case ObjKind::kResource:
      return "a resource";
    case ObjKind::kView:
      return "a view";
    case ObjKind::kShader:
      return "a shader";
    case ObjKind::kInputLayout:
      return "an input layout";
    case ObjKind::kBlendState:
      return "a blend state";
    case ObjKind::kDepthStencilState:
      return "a depth-stencil state";
    case ObjKind::kRasterizerState:
      return "a rasterizer state";
    case ObjKind::kSamplerState:
      return "a sampler state";
    case ObjKind::kQuery:
      return "a query";
    case ObjKind::kCommandList:
      return "a command list";
    case ObjKind::kSwapChain:
      return "a swap chain";
    case ObjKind::kPlain:
      return "a DXGI object";
  }
  return "an object";
}

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

uint32_t MipCount(uint32_t w, uint32_t h, uint32_t d) {
  uint32_t m = std::max({w, h, d, 1u});
  uint32_t n = 1;
  while (m > 1) {
    m >>= 1;
    ++n;
  }
  return n;
}

// BC1-BC7: rows of 4x4 blocks.
bool IsBlockCompressed(uint32_t format) {
  return (format >= 70 && format <= 84) || (format >= 94 && format <= 99);
}

// Bytes per element of the vertex formats input layouts use (0: unknown).
uint32_t FormatBytes(uint32_t format) {
  if (format >= 1 && format <= 4) return 16;
  if (format >= 5 && format <= 8) return 12;
  if (format >= 9 && format <= 22) return 8;
  if (format >= 23 && format <= 47) return 4;
  if (format >= 48 && format <= 59) return 2;
  if (format >= 60 && format <= 65) return 1;
  return 4;
}

// ---- The player -------------------------------------------------------------------------------

class Player {
 public:
  Player(const std::vector<Call>& calls, const PlayOptions& options)
      : calls_(calls), options_(options) {}

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
  absl::Status Memcpy(const Call& call);
  absl::Status CreateDevice(const Call& call, bool with_swap_chain);
  absl::Status CreateSwapChain(const Call& call, Obj* device, const Value* desc, const Value* out);
  absl::Status MakeBackBuffers(const Call& call, Obj* chain, uint32_t count);
  absl::Status CreateResource(const Call& call, Obj* self);
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

  const std::vector<Call>& calls_;
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
  void FindReleasedListExecute();
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

absl::Status Player::Skip(const Call& call, absl::string_view reason) {
  if (options_.strict) {
    return Bad(call, absl::StrCat("not played (", reason, "); --strict"));
  }
  Note(&report_.skipped, call, reason);
  return absl::OkStatus();
}

void Player::Substitute(const Call& call, absl::string_view reason) {
  Note(&report_.substitutes, call, reason);
}

void Player::Note(std::vector<Skipped>* list, const Call& call, absl::string_view reason) {
  for (Skipped& s : *list) {
    if (s.name == call.name && s.reason == reason) {
      ++s.count;
      return;
    }
  }
  list->push_back(Skipped{call.name, 1, call.line, std::string(reason)});
}

absl::StatusOr<const Value*> Player::Arg(const Call& call, absl::string_view name) {
  const Value* v = call.Arg(name);
  if (v == nullptr) return Bad(call, absl::StrCat("argument ", name, " is missing"));
  return v;
}

absl::StatusOr<uint32_t> Player::U32(const Call& call, const Value* v, absl::string_view what) {
  std::optional<uint64_t> u = v == nullptr ? std::nullopt : Deref(v)->AsUint();
  if (!u || *u > 0xffffffffu) {
    if (v != nullptr && Deref(v)->kind == Kind::kInt && Deref(v)->negative &&
        Deref(v)->i >= INT32_MIN) {
      return static_cast<uint32_t>(static_cast<int32_t>(Deref(v)->i));
    }
    return Bad(call, absl::StrCat(what, " is not a 32-bit number"));
  }
  return static_cast<uint32_t>(*u);
}

absl::StatusOr<uint64_t> Player::Uint(const Call& call, absl::string_view name) {
  absl::StatusOr<const Value*> v = Arg(call, name);
  if (!v.ok()) return v.status();
  absl::StatusOr<uint32_t> u = U32(call, *v, name);
  if (!u.ok()) return u.status();
  return *u;
}

absl::StatusOr<double> Player::Float(const Call& call, const Value* v, absl::string_view what) {
  v = Deref(v);
  if (v != nullptr && v->kind == Kind::kFloat) return v->d;
  if (v != nullptr && v->kind == Kind::kInt) {
    return v->negative ? static_cast<double>(v->i) : static_cast<double>(v->u);
  }
  return Bad(call, absl::StrCat(what, " is not a number"));
}

absl::StatusOr<uint32_t> Player::Enum(const Call& call, const Value* v, absl::string_view what) {
  v = Deref(v);
  if (v == nullptr) return Bad(call, absl::StrCat(what, " is missing"));
  if (v->kind == Kind::kName) {
    std::optional<uint32_t> n = ValueOfName(v->text);
    if (!n) return Bad(call, absl::StrCat("unknown value ", v->text, " for ", what));
    return *n;
  }
  if (v->kind == Kind::kBitmask) {
    uint32_t bits = static_cast<uint32_t>(v->u);
    for (const std::string& name : v->names) {
      std::optional<uint32_t> n = ValueOfName(name);
      if (!n) return Bad(call, absl::StrCat("unknown flag ", name, " for ", what));
      bits |= *n;
    }
    return bits;
  }
  return U32(call, v, what);
}

absl::StatusOr<uint32_t> Player::FieldEnum(const Call& call, const Value* s, absl::string_view name,
                                           uint32_t fallback) {
  const Value* f = FindField(s, name);
  if (f == nullptr) return fallback;
  return Enum(call, f, name);
}

absl::StatusOr<std::string> Player::Bytes(const Call& call, const Value* v, size_t at_least) {
  std::string bytes;
  v = Deref(v);
  if (v != nullptr && v->kind == Kind::kBlob && !v->text.empty()) {
    std::string path = v->text;
    if (path[0] != '/') path = absl::StrCat(options_.blob_dir, "/", path);
    std::ifstream in(path, std::ios::binary);
    if (!in) return Bad(call, absl::StrCat("cannot read blob file ", path));
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  } else if (v != nullptr && v->kind == Kind::kBlob) {
    if (v->u > (uint64_t{1} << 30)) return Bad(call, "blob larger than 1 GiB");
    bytes.assign(v->u, '\0');
  } else if (v != nullptr && v->kind == Kind::kString) {
    bytes = v->text;
  }
  if (bytes.size() < at_least) bytes.resize(at_least, '\0');
  return bytes;
}

// ---- Object table ---------------------------------------------------------------------------

absl::StatusOr<Obj*> Player::Lookup(const Call& call, const Value* v, ObjKind kind,
                                    bool allow_null) {
  v = Deref(v);
  std::optional<uint64_t> key = v == nullptr ? std::nullopt : v->AsUint();
  if (!key) return Bad(call, "expected an object pointer");
  if (*key == 0) {
    if (allow_null) return nullptr;
    return Bad(call, "NULL where an object is needed");
  }
  auto it = keys_.find(*key);
  if (it == keys_.end()) {
    return Bad(call, absl::StrCat("0x", absl::Hex(*key),
                                  " is no live object (never created, or released)"));
  }
  Obj* o = it->second.get();
  if (o->kind != kind) {
    return Bad(call, absl::StrCat("0x", absl::Hex(*key), " is ", KindName(o->kind), ", not ",
                                  KindName(kind)));
  }
  return o;
}

absl::StatusOr<Obj*> Player::This(const Call& call) {
  const Value* v = call.Arg("this");
  std::optional<uint64_t> key = v == nullptr ? std::nullopt : v->AsUint();
  if (!key || *key == 0) return Bad(call, "no 'this' object");
  auto it = keys_.find(*key);
  if (it == keys_.end()) {
    return Bad(call, absl::StrCat("this = 0x", absl::Hex(*key),
                                  " is no live object (never created, or released)"));
  }
  return it->second.get();
}

absl::StatusOr<uint64_t> Player::OutKey(const Call& call, const char* arg) {
  const Value* v = call.Arg(arg);
  if (v == nullptr) return Bad(call, absl::StrCat("argument ", arg, " is missing"));
  std::optional<uint64_t> key = Deref(v)->AsUint();
  if (!key) return Bad(call, absl::StrCat(arg, " does not name an object"));
  return *key;
}

absl::Status Player::BindNew(const Call& call, const Value* out, std::shared_ptr<Obj> obj) {
  std::optional<uint64_t> key = Deref(out)->AsUint();
  if (!key) return Bad(call, "the output does not name an object");
  if (*key != 0) {
    auto it = keys_.find(*key);
    if (it != keys_.end()) {
      return Bad(call, absl::StrCat("0x", absl::Hex(*key), " names a live object already"));
    }
    obj->keys.push_back(*key);
    keys_[*key] = obj;
  }
  objects_.push_back(std::move(obj));
  return absl::OkStatus();
}

void Player::AddRef(Obj* o) {
  ++o->refs;
  if (o->rt != nullptr) o->rt->AddRef();
}

void Player::Release(Obj* o) {
  if (o->refs == 0) return;
  --o->refs;
  if (o->rt != nullptr) o->rt->Release();
  if (o->refs == 0) Forget(o);
}

void Player::Forget(Obj* o) {
  o->alive = false;
  // A mapping of a released resource or on a released context is gone with it: a later memcpy
  // into its range is bad input, never a write into freed memory.
  for (auto it = mappings_.begin(); it != mappings_.end();) {
    if (it->second.context == o || it->second.resource_obj == o) {
      it = mappings_.erase(it);
    } else {
      ++it;
    }
  }
  for (uint64_t k : o->keys) keys_.erase(k);
  o->keys.clear();
  if (o->kind == ObjKind::kSwapChain) {
    for (runtime::Resource* r : o->buffers) r->Release();
    o->buffers.clear();
  }
  // Devices: the runtime device lives until the capture ends (its children keep it, as in D3D11).
}

void Player::AddRefOutputs(const Value* v) {
  for (const Value* e : Elements(v)) {
    std::optional<uint64_t> key = e->AsUint();
    if (!key || *key == 0) continue;
    auto it = keys_.find(*key);
    if (it != keys_.end()) AddRef(it->second.get());
  }
}

// ---- Playing ----------------------------------------------------------------------------------

void Player::FindReleasedListExecute() {
  absl::flat_hash_map<uint64_t, int> refs;  // command lists alive: their references
  auto key_of = [](const Call& c, const char* arg) -> uint64_t {
    const Value* v = c.Arg(arg);
    return v == nullptr ? 0 : Deref(v)->AsUint().value_or(0);
  };
  for (size_t i = 0; i < calls_.size(); ++i) {
    const Call& c = calls_[i];
    const absl::string_view method = c.Method();
    if (method == "FinishCommandList") {
      if (uint64_t k = key_of(c, "ppCommandList"); k != 0) refs[k] = 1;
      continue;
    }
    const uint64_t self = key_of(c, "this");
    auto it = refs.find(self);
    if (it == refs.end()) continue;
    if (method == "AddRef") ++it->second;
    if (method != "Release" || --it->second > 0) continue;
    // The first final release of a command list: is the list executed again before its
    // address names a new one?
    for (size_t j = i + 1; j < calls_.size(); ++j) {
      const Call& later = calls_[j];
      if (later.Method() == "FinishCommandList" && key_of(later, "ppCommandList") == self) break;
      if (later.Method() == "ExecuteCommandList" && key_of(later, "pCommandList") == self) {
        r40_key_ = self;
        r40_release_line_ = c.line;
        break;
      }
    }
    return;
  }
}

absl::StatusOr<PlayReport> Player::Run() {
  report_.calls = calls_.size();
  FindReleasedListExecute();
  if (r40_key_ != 0) r40_before_ = R40Executes();
  // The capture's threads, in order of first appearance.
  std::vector<uint64_t> threads;
  absl::flat_hash_map<uint64_t, uint32_t> thread_index;
  // Turns: the thread of the next call plays; only that thread is woken (a capture with many
  // threads must not wake them all for every call).
  std::vector<uint32_t> party(calls_.size());
  for (size_t i = 0; i < calls_.size(); ++i) {
    const uint64_t t = calls_[i].thread.value_or(0);
    auto [it, fresh] = thread_index.try_emplace(t, static_cast<uint32_t>(threads.size()));
    if (fresh) threads.push_back(t);
    party[i] = it->second;
  }
  report_.threads = static_cast<int>(threads.size());

  std::mutex mu;
  std::vector<std::condition_variable> turn(threads.size());
  size_t next = 0;
  absl::Status error;
  auto worker = [&](uint32_t me) {
    std::unique_lock<std::mutex> lock(mu);
    for (;;) {
      turn[me].wait(lock, [&] { return next >= calls_.size() || party[next] == me; });
      if (next >= calls_.size()) return;
      const Call& call = calls_[next];
      if (options_.on_call) options_.on_call(call);
      absl::Status s = PlayCall(call);
      if (!s.ok()) {
        error = s;
        next = calls_.size();
      } else {
        ++next;
      }
      if (next >= calls_.size()) {
        for (std::condition_variable& t : turn) t.notify_all();
      } else if (party[next] != me) {
        turn[party[next]].notify_one();
      }
    }
  };
  std::vector<std::thread> pool;
  for (uint32_t i = 1; i < threads.size(); ++i) pool.emplace_back(worker, i);
  if (!threads.empty()) worker(0);
  for (std::thread& t : pool) t.join();

  // What the capture left alive: unmapped and released, newest first, then the devices.
  for (auto& [start, m] : mappings_) m.ctx->Unmap(m.resource, m.subresource);  // both alive
  mappings_.clear();
  for (auto it = objects_.rbegin(); it != objects_.rend(); ++it) {
    Obj* o = it->get();
    while (o->alive && o->refs > 0) Release(o);
  }
  for (auto& d : devices_) {
    if (d->device != nullptr) d->device->Release();
  }
  if (!error.ok()) return error;
  return report_;
}

absl::Status Player::PlayCall(const Call& call) { return Dispatch(call); }

absl::Status Player::Dispatch(const Call& call) {
  uint64_t skipped_before = 0;
  for (const Skipped& k : report_.skipped) skipped_before += k.count;
  // A call counts as played when it succeeded without a skip (errors pass through unchanged).
  auto played = [&](absl::Status s) {
    uint64_t skipped_after = 0;
    for (const Skipped& k : report_.skipped) skipped_after += k.count;
    if (s.ok() && skipped_after == skipped_before) ++report_.played;
    return s;
  };
  if (call.incomplete) return played(Skip(call, "the program died inside the call"));
  if (!call.args.empty() && call.args[0].name.empty()) {
    return Bad(call, "the dump has no argument names (dump it without --arg-names=no)");
  }
  if (call.Interface().empty()) return played(FreeFunction(call));

  absl::StatusOr<Obj*> self = This(call);
  if (!self.ok()) return self.status();
  return played(ObjectCall(call, *self));
}

absl::Status Player::ObjectCall(const Call& call, Obj* o) {
  const absl::string_view method = call.Method();
  // IUnknown on every interface.
  if (method == "AddRef") {
    AddRef(o);
    return absl::OkStatus();
  }
  if (method == "Release") {
    Release(o);
    return absl::OkStatus();
  }
  if (method == "QueryInterface") return QueryInterface(call, o);
  // Methods every D3D11 / DXGI object has that make no DDI call.
  static const std::set<std::string, std::less<>> kNoDdi = {"SetPrivateData",
                                                            "SetPrivateDataInterface",
                                                            "GetPrivateData",
                                                            "GetDesc",
                                                            "GetDesc1",
                                                            "GetDesc2",
                                                            "GetDesc3",
                                                            "GetType",
                                                            "GetContextFlags",
                                                            "GetFeatureLevel",
                                                            "GetCreationFlags",
                                                            "GetDeviceRemovedReason",
                                                            "SetExceptionMode",
                                                            "GetExceptionMode",
                                                            "CheckFeatureSupport",
                                                            "GetDataSize",
                                                            "GetEvictionPriority",
                                                            "GetStatus",
                                                            "SetMultithreadProtected",
                                                            "GetMultithreadProtected",
                                                            "Enter",
                                                            "Leave",
                                                            "GetClassLinkage"};
  if (kNoDdi.contains(method)) return absl::OkStatus();
  if ((method == "GetDevice" || absl::StartsWith(method, "GetImmediateContext")) &&
      o->dev != nullptr) {
    return GetDeviceOrContext(call, o);
  }
  if (method == "GetDevice" || method == "GetResource") {
    for (const Value::Member& m : call.args) {
      if (m.name != "this") AddRefOutputs(&m.value);
    }
    return absl::OkStatus();
  }
  return InterfaceCall(call, o);
}

absl::Status Player::QueryInterface(const Call& call, Obj* o) {
  if (!call.ret || call.ret->text != "S_OK") return absl::OkStatus();
  absl::StatusOr<uint64_t> key = OutKey(call, "ppvObject");
  if (!key.ok()) return key.status();
  if (*key == 0) return absl::OkStatus();
  auto it = keys_.find(*key);
  if (it != keys_.end()) {
    AddRef(it->second.get());
  } else {
    // Another interface of the same object: one reference count.
    // (A copy first: inserting may rehash the table under a reference into it.)
    std::shared_ptr<Obj> same = keys_.at(o->keys.front());
    o->keys.push_back(*key);
    keys_[*key] = std::move(same);
    AddRef(o);
  }
  return absl::OkStatus();
}

absl::Status Player::GetDeviceOrContext(const Call& call, Obj* o) {
  // The device and its immediate context answer these even when the program's count of them
  // reached zero (the children keep them): the pointer names them again.
  const bool device = call.Method() == "GetDevice";
  absl::StatusOr<uint64_t> key = OutKey(call, device ? "ppDevice" : "ppImmediateContext");
  if (!key.ok()) return key.status();
  Obj* target = device ? o->dev->device_obj : o->dev->ic_obj;
  if (*key == 0 || target == nullptr) return absl::OkStatus();
  if (auto it = keys_.find(*key); it != keys_.end()) {
    if (it->second.get() != target) return Bad(call, "the pointer names another object");
    AddRef(target);
    return absl::OkStatus();
  }
  for (const auto& obj : objects_) {
    if (obj.get() == target) {
      target->alive = true;
      ++target->refs;
      target->keys.push_back(*key);
      keys_[*key] = obj;
    }
  }
  return absl::OkStatus();
}

absl::Status Player::InterfaceCall(const Call& call, Obj* o) {
  const absl::string_view iface = call.Interface();
  const absl::string_view method = call.Method();
  if (absl::StartsWith(iface, "ID3DUserDefinedAnnotation")) {
    return Skip(call, "the runtime model has no hook for application markers");
  }
  if (absl::StartsWith(iface, "ID3D11DeviceContext")) {
    if (o->kind != ObjKind::kContext) return Bad(call, "this is not a device context");
    return ContextCall(call, o);
  }
  if (absl::StartsWith(iface, "ID3D11Device")) {
    if (o->kind != ObjKind::kDevice) return Bad(call, "this is not a device");
    return DeviceCall(call, o);
  }
  if (absl::StartsWith(iface, "IDXGISwapChain")) {
    if (o->kind != ObjKind::kSwapChain) return Bad(call, "this is not a swap chain");
    return SwapChainCall(call, o);
  }
  if (absl::StartsWith(iface, "IDXGIFactory") && absl::StartsWith(method, "CreateSwapChain")) {
    const Value* dev = call.Arg("pDevice");
    absl::StatusOr<Obj*> device = Lookup(call, dev, ObjKind::kDevice, false);
    if (!device.ok()) return device.status();
    const Value* desc = call.Arg("pDesc");
    return CreateSwapChain(call, *device, desc, call.Arg("ppSwapChain"));
  }
  if (absl::StartsWith(iface, "IDXGI")) return PlainCall(call);
  if (iface == "ID3D11Resource" || iface == "ID3D11Buffer" ||
      absl::StartsWith(iface, "ID3D11Texture")) {
    if (method == "SetEvictionPriority" && o->kind == ObjKind::kResource) {
      absl::StatusOr<uint32_t> p = Enum(call, call.Arg("EvictionPriority"), "EvictionPriority");
      if (!p.ok()) return p.status();
      o->dev->device->SetEvictionPriority(As<runtime::Resource>(o), static_cast<uint32_t>(*p));
      return absl::OkStatus();
    }
  }
  return Skip(call, "not implemented");
}

absl::Status Player::PlainCall(const Call& call) {
  // DXGI plumbing (factories, adapters, outputs, the device's DXGI face): no DDI call. Objects
  // handed out through `&0x...` outputs are counted here.
  if (!call.ret || (call.ret->text != "S_OK" && call.ret->kind != Kind::kUnknown)) {
    return absl::OkStatus();
  }
  for (const Value::Member& m : call.args) {
    if (m.name == "this" || m.value.kind != Kind::kReference) continue;
    if (!absl::StartsWith(m.name, "pp") && m.name != "pAdapter") continue;
    std::optional<uint64_t> key = Deref(&m.value)->AsUint();
    if (!key || *key == 0) continue;
    auto it = keys_.find(*key);
    if (it != keys_.end()) {
      AddRef(it->second.get());
    } else {
      auto obj = std::make_shared<Obj>();
      obj->kind = ObjKind::kPlain;
      if (absl::Status s = BindNew(call, &m.value, std::move(obj)); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

absl::Status Player::FreeFunction(const Call& call) {
  const std::string& name = call.name;
  if (name == "D3D11CreateDevice") return CreateDevice(call, false);
  if (name == "D3D11CreateDeviceAndSwapChain") return CreateDevice(call, true);
  if (absl::StartsWith(name, "CreateDXGIFactory")) return PlainCall(call);
  if (name == "memcpy") return Memcpy(call);
  return Skip(call, "not implemented");
}

absl::Status Player::CreateDevice(const Call& call, bool with_swap_chain) {
  if (call.ret && call.ret->kind == Kind::kName && call.ret->text != "S_OK" &&
      call.ret->text != "S_FALSE") {
    return absl::OkStatus();  // it failed in the capture: the program went on without it
  }
  absl::StatusOr<uint64_t> device_key = OutKey(call, "ppDevice");
  if (!device_key.ok()) return device_key.status();
  if (*device_key == 0) return absl::OkStatus();  // a feature-level probe
  runtime::RuntimeOptions ro = options_.runtime;
  if (const Value* flags = call.Arg("Flags")) {
    absl::StatusOr<uint32_t> f = Enum(call, flags, "Flags");
    if (!f.ok()) return f.status();
    ro.create_device_flags |= *f & D3D11DDI_CREATEDEVICE_FLAG_SINGLETHREADED;
  }
  if (r40_key_ != 0 && devices_.empty()) {
    ro.misuse = runtime::Misuse::kR40;
    r40_armed_ = true;
  }
  auto rec = std::make_unique<DeviceRec>();
  HRESULT hr = runtime::Device::Create(ro, &rec->device);
  if (hr != S_OK || rec->device == nullptr) {
    return absl::InternalError(absl::StrCat("line ", call.line,
                                            ": the runtime model cannot create a device (0x",
                                            absl::Hex(static_cast<uint32_t>(hr)), ")"));
  }
  DeviceRec* d = rec.get();
  devices_.push_back(std::move(rec));
  auto device = std::make_shared<Obj>();
  device->kind = ObjKind::kDevice;
  device->dev = d;
  d->device_obj = device.get();
  Obj* device_obj = device.get();
  if (absl::Status s = BindNew(call, call.Arg("ppDevice"), std::move(device)); !s.ok()) return s;

  auto ic = std::make_shared<Obj>();
  ic->kind = ObjKind::kContext;
  ic->dev = d;
  ic->ctx = d->device->GetImmediateContext();
  d->ic_obj = ic.get();
  const Value* ic_out = call.Arg("ppImmediateContext");
  if (ic_out != nullptr && Deref(ic_out)->AsUint().value_or(0) != 0) {
    if (absl::Status s = BindNew(call, ic_out, ic); !s.ok()) return s;
  } else {
    ic->refs = 0;  // reachable later through GetImmediateContext
    objects_.push_back(ic);
  }
  if (with_swap_chain) {
    return CreateSwapChain(call, device_obj, call.Arg("pSwapChainDesc"), call.Arg("ppSwapChain"));
  }
  return absl::OkStatus();
}

absl::Status Player::CreateSwapChain(const Call& call, Obj* device, const Value* desc,
                                     const Value* out) {
  if (call.ret && call.ret->kind == Kind::kName && call.ret->text != "S_OK") {
    return absl::OkStatus();
  }
  if (out == nullptr || Deref(out)->AsUint().value_or(0) == 0) return absl::OkStatus();
  desc = Deref(desc);
  if (desc == nullptr || desc->kind != Kind::kStruct) return Bad(call, "no swap-chain description");
  const Value* mode = desc->Field("BufferDesc");
  const Value* geometry = mode != nullptr ? mode : desc;  // DXGI_SWAP_CHAIN_DESC1: flat
  runtime::ResourceDesc rd;
  rd.dimension = D3D10DDIRESOURCE_TEXTURE2D;
  absl::StatusOr<uint32_t> width = FieldEnum(call, geometry, "Width", 0);
  absl::StatusOr<uint32_t> height = FieldEnum(call, geometry, "Height", 0);
  absl::StatusOr<uint32_t> format = FieldEnum(call, geometry, "Format", 28);
  absl::StatusOr<uint32_t> count = FieldEnum(call, desc, "BufferCount", 1);
  absl::StatusOr<uint32_t> usage = FieldEnum(call, desc, "BufferUsage", 0x20);
  for (const auto* s : {&width, &height, &format, &count, &usage}) {
    if (!s->ok()) return s->status();
  }
  if (*count == 0 || *count > 16) return Bad(call, "BufferCount out of range");
  rd.width = *width == 0 ? 64 : *width;  // 0: the window's size, which the capture does not hold
  rd.height = *height == 0 ? 64 : *height;
  rd.format = *format;
  rd.bind_flags = (*usage & (D3D10_DDI_BIND_SHADER_RESOURCE | D3D10_DDI_BIND_RENDER_TARGET |
                             D3D11_DDI_BIND_UNORDERED_ACCESS)) |
                  D3D10_DDI_BIND_PRESENT;
  auto chain = std::make_shared<Obj>();
  chain->kind = ObjKind::kSwapChain;
  chain->dev = device->dev;
  chain->buffer_desc = rd;
  if (absl::Status s = MakeBackBuffers(call, chain.get(), *count); !s.ok()) return s;
  return BindNew(call, out, std::move(chain));
}

absl::Status Player::MakeBackBuffers(const Call& call, Obj* chain, uint32_t count) {
  for (runtime::Resource* r : chain->buffers) r->Release();
  chain->buffers.clear();
  for (uint32_t i = 0; i < count; ++i) {
    runtime::Resource* r = nullptr;
    if (HRESULT hr = chain->dev->device->CreateResource(chain->buffer_desc, &r); hr != S_OK) {
      for (runtime::Resource* b : chain->buffers) b->Release();
      chain->buffers.clear();
      return Bad(call, absl::StrCat("the runtime model refused the back buffer (0x",
                                    absl::Hex(static_cast<uint32_t>(hr)), ")"));
    }
    chain->buffers.push_back(r);
  }
  return absl::OkStatus();
}

absl::Status Player::SwapChainCall(const Call& call, Obj* self) {
  const absl::string_view method = call.Method();
  runtime::Device* device = self->dev->device;
  if (method == "GetBuffer") {
    absl::StatusOr<uint64_t> index = Uint(call, "Buffer");
    if (!index.ok()) return index.status();
    absl::StatusOr<uint64_t> key = OutKey(call, "ppSurface");
    if (!key.ok()) return key.status();
    if (*key == 0) return absl::OkStatus();
    // DISCARD / SEQUENTIAL chains hand out buffer 0 only; flip chains any.
    if (*index >= self->buffers.size()) return Bad(call, "Buffer out of range");
    auto it = keys_.find(*key);
    if (it != keys_.end()) {
      AddRef(it->second.get());
      return absl::OkStatus();
    }
    auto surface = std::make_shared<Obj>();
    surface->kind = ObjKind::kResource;
    surface->dev = self->dev;
    surface->rt = self->buffers[*index];
    surface->rt->AddRef();
    return BindNew(call, call.Arg("ppSurface"), std::move(surface));
  }
  if (method == "Present" || method == "Present1") {
    HRESULT hr = device->Present(self->buffers[0]);
    if (hr == S_OK && self->buffers.size() > 1) {
      device->RotateResourceIdentities(self->buffers.data(),
                                       static_cast<uint32_t>(self->buffers.size()));
    }
    return absl::OkStatus();
  }
  if (method == "ResizeBuffers" || method == "ResizeBuffers1") {
    if (call.ret && call.ret->kind == Kind::kName && call.ret->text != "S_OK") {
      return absl::OkStatus();  // refused in the capture (back buffers still referenced)
    }
    absl::StatusOr<uint64_t> count = Uint(call, "BufferCount");
    absl::StatusOr<uint64_t> width = Uint(call, "Width");
    absl::StatusOr<uint64_t> height = Uint(call, "Height");
    absl::StatusOr<uint32_t> format = Enum(call, call.Arg("NewFormat"), "NewFormat");
    for (const auto* st : {&count, &width, &height}) {
      if (!st->ok()) return st->status();
    }
    if (!format.ok()) return format.status();
    if (*count > 16 || *width > 16384 || *height > 16384) return Bad(call, "size out of range");
    // Zero keeps the current value (the window's size, the buffer count, the format).
    if (*width != 0) self->buffer_desc.width = static_cast<uint32_t>(*width);
    if (*height != 0) self->buffer_desc.height = static_cast<uint32_t>(*height);
    if (*format != 0) self->buffer_desc.format = *format;
    const uint32_t n =
        *count != 0 ? static_cast<uint32_t>(*count) : static_cast<uint32_t>(self->buffers.size());
    return MakeBackBuffers(call, self, n);
  }
  if (method == "ResizeTarget" || method == "GetDesc1" || method == "GetFullscreenDesc" ||
      method == "SetMaximumFrameLatency" || method == "GetMaximumFrameLatency" ||
      method == "GetFrameLatencyWaitableObject" || method == "SetSourceSize" ||
      method == "GetSourceSize" || method == "GetRestrictToOutput" || method == "SetColorSpace1" ||
      method == "CheckColorSpaceSupport" || method == "GetFullscreenState" ||
      method == "GetContainingOutput" || method == "GetFrameStatistics" ||
      method == "GetLastPresentCount" || method == "GetHwnd" || method == "GetBackgroundColor" ||
      method == "GetRotation" || method == "SetBackgroundColor" ||
      method == "GetCurrentBackBufferIndex") {
    return absl::OkStatus();
  }
  return Skip(call, "not implemented");
}

absl::Status Player::Memcpy(const Call& call) {
  absl::StatusOr<const Value*> dest = Arg(call, "dest");
  if (!dest.ok()) return dest.status();
  absl::StatusOr<const Value*> src = Arg(call, "src");
  if (!src.ok()) return src.status();
  absl::StatusOr<uint64_t> n = Uint(call, "n");
  if (!n.ok()) return n.status();
  std::optional<uint64_t> at = Deref(*dest)->AsUint();
  if (!at) return Bad(call, "dest is not a pointer");
  auto it = mappings_.upper_bound(*at);
  if (it == mappings_.begin()) return Bad(call, "dest is in no mapped range");
  --it;
  const Mapping& m = it->second;
  const uint64_t offset = *at - it->first;
  if (offset > m.capture_size || *n > m.capture_size - offset) {
    return Bad(call, absl::StrCat("copies ", *n, " bytes at offset ", offset, " of a ",
                                  m.capture_size, "-byte mapping"));
  }
  if (m.data == nullptr) return Skip(call, "the Map it writes into failed here");
  absl::StatusOr<std::string> bytes = Bytes(call, *src, *n);
  if (!bytes.ok()) return bytes.status();
  if (m.capture_row == m.row && m.capture_depth == m.depth) {
    std::memcpy(m.data + offset, bytes->data(), *n);  // same layout (and every buffer)
    return absl::OkStatus();
  }
  // Another driver's pitches: row by row into the model driver's layout; the padding past the
  // shorter row is dropped.
  for (uint64_t pos = offset, end = offset + *n; pos < end;) {
    const uint64_t slice = m.capture_depth != 0 ? pos / m.capture_depth : 0;
    const uint64_t in_slice = m.capture_depth != 0 ? pos % m.capture_depth : pos;
    const uint64_t row = m.capture_row != 0 ? in_slice / m.capture_row : 0;
    const uint64_t column = m.capture_row != 0 ? in_slice % m.capture_row : in_slice;
    const uint64_t chunk =
        std::min(end - pos, m.capture_row != 0 ? m.capture_row - column : end - pos);
    const uint64_t to = slice * m.depth + row * m.row + column;
    const uint64_t fits = column < m.row ? std::min<uint64_t>(chunk, m.row - column) : 0;
    if (row * m.row < m.depth && to < m.size) {
      std::memcpy(m.data + to, bytes->data() + (pos - offset), std::min(fits, m.size - to));
    }
    pos += chunk;
  }
  return absl::OkStatus();
}

// ---- ID3D11Device -------------------------------------------------------------------------

absl::Status Player::CreateResource(const Call& call, Obj* self) {
  const absl::string_view method = call.Method();
  absl::StatusOr<const Value*> desc_arg = Arg(call, "pDesc");
  if (!desc_arg.ok()) {
    desc_arg = Arg(call, "pDesc1");
    if (!desc_arg.ok()) return desc_arg.status();
  }
  const Value* desc = Deref(*desc_arg);
  if (desc == nullptr || desc->kind != Kind::kStruct) return Bad(call, "pDesc is no structure");
  runtime::ResourceDesc rd;
  absl::StatusOr<uint32_t> usage = FieldEnum(call, desc, "Usage", 0);
  absl::StatusOr<uint32_t> bind = FieldEnum(call, desc, "BindFlags", 0);
  absl::StatusOr<uint32_t> cpu = FieldEnum(call, desc, "CPUAccessFlags", 0);
  absl::StatusOr<uint32_t> misc = FieldEnum(call, desc, "MiscFlags", 0);
  for (const auto* s : {&usage, &bind, &cpu, &misc}) {
    if (!s->ok()) return s->status();
  }
  rd.usage = static_cast<D3D10_DDI_RESOURCE_USAGE>(*usage & 3);
  // A number the capture printed for the bind flags is D3D11's: its UNORDERED_ACCESS is 0x80.
  rd.bind_flags = *bind;
  const Value* bind_value = FindField(desc, "BindFlags");
  if (bind_value != nullptr && Deref(bind_value)->kind == Kind::kInt && (*bind & 0x80)) {
    rd.bind_flags = (*bind & ~0x80u) | D3D11_DDI_BIND_UNORDERED_ACCESS;
  }
  rd.map_flags =
      (*cpu & 0x30000) ? ((*cpu & 0x20000) ? 1u : 0u) | ((*cpu & 0x10000) ? 2u : 0u) : *cpu;
  rd.misc_flags = *misc & 0x73;
  bool cube = (*misc & 0x4) != 0 && Deref(FindField(desc, "MiscFlags"))->kind == Kind::kInt;
  if (const Value* m = Deref(FindField(desc, "MiscFlags")); m != nullptr) {
    for (const std::string& n : m->names) cube = cube || absl::EndsWith(n, "TEXTURECUBE");
    cube = cube || (m->kind == Kind::kName && absl::EndsWith(m->text, "TEXTURECUBE"));
  }
  if (method == "CreateBuffer") {
    rd.dimension = D3D10DDIRESOURCE_BUFFER;
    absl::StatusOr<uint32_t> width = FieldEnum(call, desc, "ByteWidth", 0);
    absl::StatusOr<uint32_t> stride = FieldEnum(call, desc, "StructureByteStride", 0);
    if (!width.ok()) return width.status();
    if (!stride.ok()) return stride.status();
    rd.width = *width;
    rd.byte_stride = *stride;
  } else {
    rd.dimension = absl::StartsWith(method, "CreateTexture1D")   ? D3D10DDIRESOURCE_TEXTURE1D
                   : absl::StartsWith(method, "CreateTexture3D") ? D3D10DDIRESOURCE_TEXTURE3D
                   : cube                                        ? D3D10DDIRESOURCE_TEXTURECUBE
                                                                 : D3D10DDIRESOURCE_TEXTURE2D;
    absl::StatusOr<uint32_t> w = FieldEnum(call, desc, "Width", 1);
    absl::StatusOr<uint32_t> h = FieldEnum(call, desc, "Height", 1);
    absl::StatusOr<uint32_t> d = FieldEnum(call, desc, "Depth", 1);
    absl::StatusOr<uint32_t> mips = FieldEnum(call, desc, "MipLevels", 1);
    absl::StatusOr<uint32_t> array = FieldEnum(call, desc, "ArraySize", 1);
    absl::StatusOr<uint32_t> format = FieldEnum(call, desc, "Format", 0);
    for (const auto* s : {&w, &h, &d, &mips, &array, &format}) {
      if (!s->ok()) return s->status();
    }
    if (*w == 0 || *h == 0 || *d == 0 || *w > 16384 || *h > 16384 || *d > 2048 || *array > 2048) {
      return Bad(call, "texture size out of range");
    }
    rd.width = *w;
    rd.height = *h;
    rd.depth = *d;
    rd.mip_levels = *mips == 0 ? MipCount(*w, *h, *d) : *mips;
    rd.array_size = *array == 0 ? 1 : *array;
    if (cube) rd.array_size = std::max(1u, rd.array_size / 6);
    rd.format = *format;
  }
  runtime::Device* device = self->dev->device;
  absl::StatusOr<uint64_t> key =
      OutKey(call, method == "CreateBuffer"                      ? "ppBuffer"
                   : absl::StartsWith(method, "CreateTexture1D") ? "ppTexture1D"
                   : absl::StartsWith(method, "CreateTexture3D") ? "ppTexture3D"
                                                                 : "ppTexture2D");
  if (!key.ok()) return key.status();
  if (*key == 0) return absl::OkStatus();  // a parameter check (NULL output): no object
  runtime::Resource* r = nullptr;
  if (HRESULT hr = device->CreateResource(rd, &r); hr != S_OK) {
    return Skip(call, "the runtime model refused the resource");
  }
  auto obj = std::make_shared<Obj>();
  obj->kind = ObjKind::kResource;
  obj->dev = self->dev;
  obj->rt = r;
  const Value* out = call.Arg(method == "CreateBuffer"                      ? "ppBuffer"
                              : absl::StartsWith(method, "CreateTexture1D") ? "ppTexture1D"
                              : absl::StartsWith(method, "CreateTexture3D") ? "ppTexture3D"
                                                                            : "ppTexture2D");
  if (absl::Status s = BindNew(call, out, obj); !s.ok()) {
    r->Release();
    return s;
  }
  // Initial data: the runtime model's CreateResource takes none yet, so the bytes go in
  // through the immediate context's UpdateSubresource, one per subresource.
  const std::vector<const Value*> initial = Elements(call.Arg("pInitialData"));
  if (!initial.empty()) {
    Substitute(call, "initial data uploaded with UpdateSubresource on the immediate context");
    const uint32_t subresources =
        rd.mip_levels * rd.array_size * (rd.dimension == D3D10DDIRESOURCE_TEXTURECUBE ? 6 : 1);
    for (size_t i = 0; i < initial.size() && i < subresources; ++i) {
      const Value* data = Deref(initial[i]);
      absl::StatusOr<uint32_t> pitch = FieldEnum(call, data, "SysMemPitch", 0);
      absl::StatusOr<uint32_t> slice = FieldEnum(call, data, "SysMemSlicePitch", 0);
      if (!pitch.ok()) return pitch.status();
      if (!slice.ok()) return slice.status();
      const uint64_t rows = rd.height, depth = rd.depth;
      const uint64_t need =
          rd.dimension == D3D10DDIRESOURCE_BUFFER
              ? rd.width
              : depth *
                    std::max<uint64_t>(*slice, rows * std::max<uint64_t>(*pitch, rd.width * 16ull));
      if (need > (uint64_t{1} << 30)) return Bad(call, "initial data larger than 1 GiB");
      const Value* mem = FindField(data, "pSysMem");
      absl::StatusOr<std::string> bytes = Bytes(call, mem, need);
      if (!bytes.ok()) return bytes.status();
      device->GetImmediateContext()->UpdateSubresource(r, static_cast<uint32_t>(i), nullptr,
                                                       bytes->data(), *pitch, *slice);
    }
  }
  return absl::OkStatus();
}

absl::Status Player::CreateView(const Call& call, Obj* self, ViewKind kind) {
  absl::StatusOr<const Value*> res_arg = Arg(call, "pResource");
  if (!res_arg.ok()) return res_arg.status();
  absl::StatusOr<Obj*> res = Lookup(call, *res_arg, ObjKind::kResource, false);
  if (!res.ok()) return res.status();
  runtime::Resource* r = As<runtime::Resource>(*res);
  const char* out_name = kind == ViewKind::kShaderResource ? "ppSRView"
                         : kind == ViewKind::kRenderTarget ? "ppRTView"
                         : kind == ViewKind::kDepthStencil ? "ppDepthStencilView"
                                                           : "ppUAView";
  const Value* out = call.Arg(out_name);
  if (out == nullptr) return Bad(call, absl::StrCat("argument ", out_name, " is missing"));
  if (Deref(out)->AsUint().value_or(0) == 0) return absl::OkStatus();
  runtime::ViewDesc vd;
  vd.format = r->desc().format;
  vd.dimension = r->desc().dimension;
  vd.num_elements = r->desc().width;
  const Value* desc = Deref(call.Arg("pDesc"));
  if (desc != nullptr && desc->kind == Kind::kStruct) {
    absl::StatusOr<uint32_t> format = FieldEnum(call, desc, "Format", 0);
    if (!format.ok()) return format.status();
    if (*format != 0) vd.format = *format;
    for (const char* f : {"FirstElement", "ElementOffset"}) {
      absl::StatusOr<uint32_t> v = FieldEnum(call, desc, f, 0);
      if (!v.ok()) return v.status();
      if (FindField(desc, f) != nullptr) vd.first_element = *v;
    }
    for (const char* f : {"NumElements", "ElementWidth"}) {
      absl::StatusOr<uint32_t> v = FieldEnum(call, desc, f, 0);
      if (!v.ok()) return v.status();
      if (FindField(desc, f) != nullptr) vd.num_elements = *v;
    }
    for (const char* f : {"MipSlice", "MostDetailedMip"}) {
      absl::StatusOr<uint32_t> v = FieldEnum(call, desc, f, 0);
      if (!v.ok()) return v.status();
      if (FindField(desc, f) != nullptr) vd.mip_slice = *v;
    }
  }
  runtime::View* v = nullptr;
  if (HRESULT hr = self->dev->device->CreateView(kind, r, vd, &v); hr != S_OK) {
    return Skip(call, "the runtime model refused the view");
  }
  auto obj = std::make_shared<Obj>();
  obj->kind = ObjKind::kView;
  obj->dev = self->dev;
  obj->rt = v;
  if (absl::Status s = BindNew(call, out, std::move(obj)); !s.ok()) {
    v->Release();
    return s;
  }
  return absl::OkStatus();
}

absl::Status Player::CreateShader(const Call& call, Obj* self, Stage stage) {
  static const char* const kOut[] = {"ppVertexShader", "ppPixelShader",  "ppGeometryShader",
                                     "ppHullShader",   "ppDomainShader", "ppComputeShader"};
  const Value* out = call.Arg(kOut[static_cast<int>(stage)]);
  if (out == nullptr)
    return Bad(call, absl::StrCat("argument ", kOut[static_cast<int>(stage)], " is missing"));
  if (Deref(out)->AsUint().value_or(0) == 0) return absl::OkStatus();
  if (const Value* linkage = call.Arg("pClassLinkage");
      linkage != nullptr && Deref(linkage)->AsUint().value_or(0) != 0) {
    return Skip(call, "class linkage");
  }
  absl::StatusOr<const Value*> code_arg = Arg(call, "pShaderBytecode");
  if (!code_arg.ok()) return code_arg.status();
  absl::StatusOr<std::string> bytes = Bytes(call, *code_arg, 0);
  if (!bytes.ok()) return bytes.status();
  // The DDI takes the token stream of the DXBC container's SHDR/SHEX chunk.
  std::vector<uint32_t> tokens;
  const std::string& b = *bytes;
  auto u32 = [&](size_t at) {
    uint32_t v;
    std::memcpy(&v, b.data() + at, 4);
    return v;
  };
  if (b.size() >= 32 && b.compare(0, 4, "DXBC") == 0) {
    const uint32_t chunks = u32(28);
    for (uint32_t i = 0; i < chunks && 32 + 4ull * i + 4 <= b.size(); ++i) {
      const uint32_t at = u32(32 + 4 * i);
      if (at > b.size() || b.size() - at < 8) break;
      const std::string fourcc = b.substr(at, 4);
      const uint32_t size = u32(at + 4);
      if ((fourcc != "SHDR" && fourcc != "SHEX") || size > b.size() - at - 8 || size < 8) continue;
      const uint32_t length = u32(at + 12);
      if (length < 2 || length * 4ull > size) return Bad(call, "malformed shader chunk");
      tokens.resize(length);
      std::memcpy(tokens.data(), b.data() + at + 8, length * 4ull);
      break;
    }
    if (tokens.empty()) return Bad(call, "bytecode without a SHDR/SHEX chunk");
  } else {
    // The bytes are not in the dump: a minimal program of the stage.
    tokens = {0x00050000u | static_cast<uint32_t>(stage), 2u};
  }
  runtime::Shader* shader = nullptr;
  HRESULT hr = S_OK;
  if (call.Method() == "CreateGeometryShaderWithStreamOutput") {
    // The declaration's entries in order: the register of an entry is its position (the output
    // signature is not parsed); a gap (no semantic name) writes no register.
    std::vector<D3D11DDIARG_STREAM_OUTPUT_DECLARATION_ENTRY> entries;
    for (const Value* e : Elements(call.Arg("pSODeclaration"))) {
      absl::StatusOr<uint32_t> stream = FieldEnum(call, e, "Stream", 0);
      absl::StatusOr<uint32_t> slot = FieldEnum(call, e, "OutputSlot", 0);
      absl::StatusOr<uint32_t> start = FieldEnum(call, e, "StartComponent", 0);
      absl::StatusOr<uint32_t> count = FieldEnum(call, e, "ComponentCount", 4);
      for (const auto* st : {&stream, &slot, &start, &count}) {
        if (!st->ok()) return st->status();
      }
      if (*start > 3 || *count > 4 - *start || *slot > 3 || *stream > 3) {
        return Bad(call, "a stream-output entry out of range");
      }
      const Value* semantic = FindField(e, "SemanticName");
      const bool gap = semantic == nullptr || Deref(semantic)->kind == Kind::kNull;
      D3D11DDIARG_STREAM_OUTPUT_DECLARATION_ENTRY entry{};
      entry.Stream = *stream;
      entry.OutputSlot = *slot;
      entry.RegisterIndex = gap ? 0xffffffffu : static_cast<UINT>(entries.size());
      entry.RegisterMask = static_cast<BYTE>(((1u << *count) - 1) << *start);
      entries.push_back(entry);
    }
    std::vector<uint32_t> strides;
    for (const Value* e : Elements(call.Arg("pBufferStrides"))) {
      absl::StatusOr<uint32_t> v = U32(call, e, "pBufferStrides");
      if (!v.ok()) return v.status();
      strides.push_back(*v);
    }
    absl::StatusOr<uint32_t> rasterized =
        call.Arg("RasterizedStream") == nullptr
            ? absl::StatusOr<uint32_t>(0u)
            : Enum(call, call.Arg("RasterizedStream"), "RasterizedStream");
    if (!rasterized.ok()) return rasterized.status();
    if (entries.size() > 128 || strides.size() > 4) return Bad(call, "too many entries");
    hr = self->dev->device->CreateGeometryShaderWithStreamOutput(
        tokens.data(), entries.data(), static_cast<uint32_t>(entries.size()), strides.data(),
        static_cast<uint32_t>(strides.size()), *rasterized, &shader);
  } else {
    hr = self->dev->device->CreateShader(stage, tokens.data(), &shader);
  }
  if (hr != S_OK || shader == nullptr) return Skip(call, "the runtime model refused the shader");
  auto obj = std::make_shared<Obj>();
  obj->kind = ObjKind::kShader;
  obj->dev = self->dev;
  obj->rt = shader;
  if (absl::Status s = BindNew(call, out, std::move(obj)); !s.ok()) {
    shader->Release();
    return s;
  }
  return absl::OkStatus();
}

uint32_t Player::DescReader::Get(const Value* s, absl::string_view name, uint32_t fallback) {
  absl::StatusOr<uint32_t> v = player->FieldEnum(call, s, name, fallback);
  if (!v.ok()) {
    if (bad.ok()) bad = v.status();
    return fallback;
  }
  return *v;
}

float Player::DescReader::GetF(const Value* s, absl::string_view name, float fallback) {
  const Value* f = FindField(s, name);
  if (f == nullptr) return fallback;
  absl::StatusOr<double> v = player->Float(call, f, name);
  if (!v.ok()) {
    if (bad.ok()) bad = v.status();
    return fallback;
  }
  return static_cast<float>(*v);
}

// Whether the capture passed no place (or NULL) for the created object: nothing to create.
bool NoOutput(const Call& call, const char* out_name) {
  return Deref(call.Arg(out_name)) == nullptr ||
         Deref(call.Arg(out_name))->AsUint().value_or(0) == 0;
}

absl::Status Player::BindCreated(const Call& call, Obj* self, HRESULT hr, runtime::Object* created,
                                 ObjKind kind, const char* out_name) {
  if (hr != S_OK || created == nullptr) {
    return Skip(call, absl::StrCat("the runtime model refused it (0x",
                                   absl::Hex(static_cast<uint32_t>(hr)), ")"));
  }
  auto obj = std::make_shared<Obj>();
  obj->kind = kind;
  obj->dev = self->dev;
  obj->rt = created;
  const Value* out = call.Arg(out_name);
  if (absl::Status s = BindNew(call, out, std::move(obj)); !s.ok()) {
    created->Release();
    return s;
  }
  return absl::OkStatus();
}

absl::Status Player::CreateState(const Call& call, Obj* self) {
  const absl::string_view method = call.Method();
  // D3D11 hands out the existing state object for an identical description, without a DDI
  // call: the capture shows the same pointer again, which means one more reference.
  static const std::pair<const char*, ObjKind> kShared[] = {
      {"ppBlendState", ObjKind::kBlendState},
      {"ppDepthStencilState", ObjKind::kDepthStencilState},
      {"ppRasterizerState", ObjKind::kRasterizerState},
      {"ppSamplerState", ObjKind::kSamplerState}};
  for (const auto& [arg, shared_kind] : kShared) {
    const Value* v = call.Arg(arg);
    std::optional<uint64_t> key = v == nullptr ? std::nullopt : Deref(v)->AsUint();
    if (!key || *key == 0) continue;
    auto it = keys_.find(*key);
    if (it != keys_.end() && it->second->kind == shared_kind) {
      AddRef(it->second.get());
      return absl::OkStatus();
    }
  }
  if (method == "CreateInputLayout") return MakeInputLayout(call, self);
  if (absl::StartsWith(method, "CreateBlendState")) return MakeBlendState(call, self);
  if (method == "CreateDepthStencilState") return MakeDepthStencilState(call, self);
  if (absl::StartsWith(method, "CreateRasterizerState")) return MakeRasterizerState(call, self);
  if (method == "CreateSamplerState") return MakeSamplerState(call, self);
  if (method == "CreateQuery" || method == "CreatePredicate") return MakeQuery(call, self);
  if (absl::StartsWith(method, "CreateDeferredContext")) return MakeDeferredContext(call, self);
  return BindCreated(call, self, S_OK, nullptr, ObjKind::kPlain, "");
}

absl::Status Player::MakeInputLayout(const Call& call, Obj* self) {
  const char* out_name = "ppInputLayout";
  DescReader r{this, call};
  std::vector<D3D10DDIARG_INPUT_ELEMENT_DESC> elements;
  uint32_t next_offset[32] = {};
  for (const Value* e : Elements(call.Arg("pInputElementDescs"))) {
    D3D10DDIARG_INPUT_ELEMENT_DESC el{};
    el.InputSlot = r.Get(e, "InputSlot", 0) & 31;
    el.Format = r.Get(e, "Format", 0);
    el.AlignedByteOffset = r.Get(e, "AlignedByteOffset", 0xffffffffu);
    if (el.AlignedByteOffset == 0xffffffffu) el.AlignedByteOffset = next_offset[el.InputSlot];
    next_offset[el.InputSlot] = el.AlignedByteOffset + FormatBytes(el.Format);
    el.InputSlotClass = static_cast<D3D10_DDI_INPUT_CLASSIFICATION>(r.Get(e, "InputSlotClass", 0));
    el.InstanceDataStepRate = r.Get(e, "InstanceDataStepRate", 0);
    el.InputRegister = static_cast<UINT>(elements.size());
    elements.push_back(el);
  }
  if (!r.bad.ok()) return r.bad;
  if (elements.size() > 32) return Bad(call, "more than 32 input elements");
  if (NoOutput(call, out_name)) return absl::OkStatus();
  runtime::InputLayout* l = nullptr;
  HRESULT hr = self->dev->device->CreateInputLayout(elements.data(),
                                                    static_cast<uint32_t>(elements.size()), &l);
  return BindCreated(call, self, hr, l, ObjKind::kInputLayout, out_name);
}

absl::Status Player::MakeBlendState(const Call& call, Obj* self) {
  const char* out_name = "ppBlendState";
  DescReader r{this, call};
  const Value* d = Deref(call.Arg("pBlendStateDesc"));
  if (d == nullptr) d = Deref(call.Arg("pBlendDesc"));
  if (d == nullptr) return Bad(call, "no blend description");
  D3D10_1_DDI_BLEND_DESC bd{};
  bd.AlphaToCoverageEnable = r.Get(d, "AlphaToCoverageEnable", 0);
  bd.IndependentBlendEnable = r.Get(d, "IndependentBlendEnable", 0);
  std::vector<const Value*> targets = Elements(FindField(d, "RenderTarget"));
  for (size_t i = 0; i < 8; ++i) {
    const Value* t = i < targets.size() ? targets[i] : nullptr;
    auto& rt = bd.RenderTarget[i];
    if (t == nullptr) {
      rt = D3D10_DDI_RENDER_TARGET_BLEND_DESC1{FALSE,
                                               static_cast<D3D10_DDI_BLEND>(2),
                                               static_cast<D3D10_DDI_BLEND>(1),
                                               static_cast<D3D10_DDI_BLEND_OP>(1),
                                               static_cast<D3D10_DDI_BLEND>(2),
                                               static_cast<D3D10_DDI_BLEND>(1),
                                               static_cast<D3D10_DDI_BLEND_OP>(1),
                                               15};
      continue;
    }
    if (r.Get(t, "LogicOpEnable", 0) != 0) return Skip(call, "logic operations (11.1)");
    rt.BlendEnable = r.Get(t, "BlendEnable", 0);
    rt.SrcBlend = static_cast<D3D10_DDI_BLEND>(r.Get(t, "SrcBlend", 2));
    rt.DestBlend = static_cast<D3D10_DDI_BLEND>(r.Get(t, "DestBlend", 1));
    rt.BlendOp = static_cast<D3D10_DDI_BLEND_OP>(r.Get(t, "BlendOp", 1));
    rt.SrcBlendAlpha = static_cast<D3D10_DDI_BLEND>(r.Get(t, "SrcBlendAlpha", 2));
    rt.DestBlendAlpha = static_cast<D3D10_DDI_BLEND>(r.Get(t, "DestBlendAlpha", 1));
    rt.BlendOpAlpha = static_cast<D3D10_DDI_BLEND_OP>(r.Get(t, "BlendOpAlpha", 1));
    rt.RenderTargetWriteMask = static_cast<UINT8>(r.Get(t, "RenderTargetWriteMask", 15));
  }
  if (!r.bad.ok()) return r.bad;
  if (NoOutput(call, out_name)) return absl::OkStatus();
  runtime::BlendState* s = nullptr;
  HRESULT hr = self->dev->device->CreateBlendState(bd, &s);
  return BindCreated(call, self, hr, s, ObjKind::kBlendState, out_name);
}

absl::Status Player::MakeDepthStencilState(const Call& call, Obj* self) {
  const char* out_name = "ppDepthStencilState";
  DescReader r{this, call};
  const Value* d = Deref(call.Arg("pDepthStencilDesc"));
  if (d == nullptr) return Bad(call, "no depth-stencil description");
  D3D10_DDI_DEPTH_STENCIL_DESC dd{};
  dd.DepthEnable = r.Get(d, "DepthEnable", 1);
  dd.DepthWriteMask = static_cast<D3D10_DDI_DEPTH_WRITE_MASK>(r.Get(d, "DepthWriteMask", 1));
  dd.DepthFunc = static_cast<D3D10_DDI_COMPARISON_FUNC>(r.Get(d, "DepthFunc", 2));
  dd.StencilEnable = r.Get(d, "StencilEnable", 0);
  dd.FrontEnable = dd.StencilEnable;
  dd.BackEnable = dd.StencilEnable;
  dd.StencilReadMask = static_cast<UINT8>(r.Get(d, "StencilReadMask", 0xff));
  dd.StencilWriteMask = static_cast<UINT8>(r.Get(d, "StencilWriteMask", 0xff));
  for (auto [name, face] : {std::pair{"FrontFace", &dd.FrontFace}, {"BackFace", &dd.BackFace}}) {
    const Value* f = FindField(d, name);
    face->StencilFailOp = static_cast<D3D10_DDI_STENCIL_OP>(r.Get(f, "StencilFailOp", 1));
    face->StencilDepthFailOp = static_cast<D3D10_DDI_STENCIL_OP>(r.Get(f, "StencilDepthFailOp", 1));
    face->StencilPassOp = static_cast<D3D10_DDI_STENCIL_OP>(r.Get(f, "StencilPassOp", 1));
    face->StencilFunc = static_cast<D3D10_DDI_COMPARISON_FUNC>(r.Get(f, "StencilFunc", 8));
  }
  if (!r.bad.ok()) return r.bad;
  if (NoOutput(call, out_name)) return absl::OkStatus();
  runtime::DepthStencilState* s = nullptr;
  HRESULT hr = self->dev->device->CreateDepthStencilState(dd, &s);
  return BindCreated(call, self, hr, s, ObjKind::kDepthStencilState, out_name);
}

absl::Status Player::MakeRasterizerState(const Call& call, Obj* self) {
  const char* out_name = "ppRasterizerState";
  DescReader r{this, call};
  const Value* d = Deref(call.Arg("pRasterizerDesc"));
  if (d == nullptr) return Bad(call, "no rasterizer description");
  D3D10_DDI_RASTERIZER_DESC rd{};
  rd.FillMode = static_cast<D3D10_DDI_FILL_MODE>(r.Get(d, "FillMode", 3));
  rd.CullMode = static_cast<D3D10_DDI_CULL_MODE>(r.Get(d, "CullMode", 3));
  rd.FrontCounterClockwise = r.Get(d, "FrontCounterClockwise", 0);
  rd.DepthBias = static_cast<INT>(r.Get(d, "DepthBias", 0));
  rd.DepthBiasClamp = r.GetF(d, "DepthBiasClamp", 0);
  rd.SlopeScaledDepthBias = r.GetF(d, "SlopeScaledDepthBias", 0);
  rd.DepthClipEnable = r.Get(d, "DepthClipEnable", 1);
  rd.ScissorEnable = r.Get(d, "ScissorEnable", 0);
  rd.MultisampleEnable = r.Get(d, "MultisampleEnable", 0);
  rd.AntialiasedLineEnable = r.Get(d, "AntialiasedLineEnable", 0);
  if (r.Get(d, "ForcedSampleCount", 0) != 0) return Skip(call, "ForcedSampleCount (11.1)");
  if (!r.bad.ok()) return r.bad;
  if (NoOutput(call, out_name)) return absl::OkStatus();
  runtime::RasterizerState* s = nullptr;
  HRESULT hr = self->dev->device->CreateRasterizerState(rd, &s);
  return BindCreated(call, self, hr, s, ObjKind::kRasterizerState, out_name);
}

absl::Status Player::MakeSamplerState(const Call& call, Obj* self) {
  const char* out_name = "ppSamplerState";
  DescReader r{this, call};
  const Value* d = Deref(call.Arg("pSamplerDesc"));
  if (d == nullptr) return Bad(call, "no sampler description");
  D3D10_DDI_SAMPLER_DESC sd{};
  sd.Filter = static_cast<D3D10_DDI_FILTER>(r.Get(d, "Filter", 0x15));
  sd.AddressU = static_cast<D3D10_DDI_TEXTURE_ADDRESS_MODE>(r.Get(d, "AddressU", 3));
  sd.AddressV = static_cast<D3D10_DDI_TEXTURE_ADDRESS_MODE>(r.Get(d, "AddressV", 3));
  sd.AddressW = static_cast<D3D10_DDI_TEXTURE_ADDRESS_MODE>(r.Get(d, "AddressW", 3));
  sd.MipLODBias = r.GetF(d, "MipLODBias", 0);
  sd.MaxAnisotropy = r.Get(d, "MaxAnisotropy", 1);
  sd.ComparisonFunc = static_cast<D3D10_DDI_COMPARISON_FUNC>(r.Get(d, "ComparisonFunc", 1));
  std::vector<const Value*> border = Elements(FindField(d, "BorderColor"));
  for (size_t i = 0; i < 4 && i < border.size(); ++i) {
    absl::StatusOr<double> c = Float(call, border[i], "BorderColor");
    if (!c.ok()) return c.status();
    sd.BorderColor[i] = static_cast<float>(*c);
  }
  sd.MinLOD = r.GetF(d, "MinLOD", 0);
  sd.MaxLOD = r.GetF(d, "MaxLOD", 3.402823466e+38f);
  if (!r.bad.ok()) return r.bad;
  if (NoOutput(call, out_name)) return absl::OkStatus();
  runtime::SamplerState* s = nullptr;
  HRESULT hr = self->dev->device->CreateSamplerState(sd, &s);
  return BindCreated(call, self, hr, s, ObjKind::kSamplerState, out_name);
}

absl::Status Player::MakeQuery(const Call& call, Obj* self) {
  const bool query = call.Method() == "CreateQuery";
  const char* out_name = query ? "ppQuery" : "ppPredicate";
  DescReader r{this, call};
  const Value* d = Deref(call.Arg(query ? "pQueryDesc" : "pPredicateDesc"));
  if (d == nullptr) return Bad(call, "no query description");
  uint32_t type = r.Get(d, "Query", 0);
  if (!r.bad.ok()) return r.bad;
  if (type > 7) return Skip(call, "per-stream stream-output queries");
  if (NoOutput(call, out_name)) return absl::OkStatus();
  runtime::Query* q = nullptr;
  HRESULT hr = self->dev->device->CreateQuery(static_cast<D3D10DDI_QUERY>(type), &q);
  return BindCreated(call, self, hr, q, ObjKind::kQuery, out_name);
}

absl::Status Player::MakeDeferredContext(const Call& call, Obj* self) {
  const char* out_name = "ppDeferredContext";
  absl::StatusOr<uint64_t> flags = Uint(call, "ContextFlags");
  if (!flags.ok()) return flags.status();
  if (NoOutput(call, out_name)) return absl::OkStatus();
  runtime::DeviceContext* dc = nullptr;
  HRESULT hr = self->dev->device->CreateDeferredContext(0, &dc);
  if (hr != S_OK) return BindCreated(call, self, hr, dc, ObjKind::kContext, out_name);
  auto obj = std::make_shared<Obj>();
  obj->kind = ObjKind::kContext;
  obj->dev = self->dev;
  obj->rt = dc;
  obj->ctx = dc;
  if (absl::Status s = BindNew(call, call.Arg(out_name), std::move(obj)); !s.ok()) {
    dc->Release();
    return s;
  }
  return absl::OkStatus();
}

absl::Status Player::DeviceCall(const Call& call, Obj* self) {
  const absl::string_view method = call.Method();
  runtime::Device* device = self->dev->device;
  if (method == "CreateBuffer" || absl::StartsWith(method, "CreateTexture")) {
    if (method == "CreateTexture2D1" || method == "CreateTexture3D1") {
      return Skip(call, "11.3 texture descriptions");
    }
    return CreateResource(call, self);
  }
  if (method == "CreateShaderResourceView")
    return CreateView(call, self, ViewKind::kShaderResource);
  if (method == "CreateRenderTargetView") return CreateView(call, self, ViewKind::kRenderTarget);
  if (method == "CreateDepthStencilView") return CreateView(call, self, ViewKind::kDepthStencil);
  if (method == "CreateUnorderedAccessView") {
    return CreateView(call, self, ViewKind::kUnorderedAccess);
  }
  static const std::pair<const char*, Stage> kShaders[] = {
      {"CreateVertexShader", Stage::kVS},   {"CreatePixelShader", Stage::kPS},
      {"CreateGeometryShader", Stage::kGS}, {"CreateHullShader", Stage::kHS},
      {"CreateDomainShader", Stage::kDS},   {"CreateComputeShader", Stage::kCS}};
  for (const auto& [name, stage] : kShaders) {
    if (method == name) return CreateShader(call, self, stage);
  }
  if (method == "CreateGeometryShaderWithStreamOutput") return CreateShader(call, self, Stage::kGS);
  if (method == "CreateInputLayout" || method == "CreateBlendState" ||
      method == "CreateBlendState1" || method == "CreateDepthStencilState" ||
      method == "CreateRasterizerState" || method == "CreateRasterizerState1" ||
      method == "CreateSamplerState" || method == "CreateQuery" || method == "CreatePredicate" ||
      method == "CreateDeferredContext" || method == "CreateDeferredContext1") {
    return CreateState(call, self);
  }
  if (method == "CreateClassLinkage") {
    auto obj = std::make_shared<Obj>();
    obj->kind = ObjKind::kPlain;
    return BindNew(call, call.Arg("ppLinkage"), std::move(obj));
  }
  if (method == "CheckFormatSupport") {
    absl::StatusOr<uint32_t> format = Enum(call, call.Arg("Format"), "Format");
    if (!format.ok()) return format.status();
    uint32_t support = 0;
    device->CheckFormatSupport(static_cast<DXGI_FORMAT>(*format), &support);
    return absl::OkStatus();
  }
  if (method == "CheckMultisampleQualityLevels") {
    absl::StatusOr<uint32_t> format = Enum(call, call.Arg("Format"), "Format");
    if (!format.ok()) return format.status();
    absl::StatusOr<uint64_t> samples = Uint(call, "SampleCount");
    if (!samples.ok()) return samples.status();
    uint32_t levels = 0;
    device->CheckMultisampleQualityLevels(static_cast<DXGI_FORMAT>(*format),
                                          static_cast<uint32_t>(*samples), &levels);
    return absl::OkStatus();
  }
  if (method == "CheckCounterInfo") {
    D3D10DDI_COUNTER_INFO info{};
    device->CheckCounterInfo(&info);
    return absl::OkStatus();
  }
  return Skip(call, "not implemented");
}

// ---- ID3D11DeviceContext ----------------------------------------------------------------------

// A subresource index of `r`, and a box inside it (D3D11 drops such a call; the player refuses
// the capture, so no driver reads past what the program handed it).
absl::Status CheckSubresource(const Call& call, const runtime::Resource* r, uint32_t sub,
                              const D3D10_DDI_BOX* box) {
  const runtime::ResourceDesc& d = r->desc();
  const uint64_t mips = std::max(1u, d.mip_levels);
  const uint64_t count =
      mips * std::max(1u, d.array_size) * (d.dimension == D3D10DDIRESOURCE_TEXTURECUBE ? 6 : 1);
  if (sub >= count) {
    return Bad(call, absl::StrCat("subresource ", sub, " of a resource with ", count));
  }
  if (box == nullptr) return absl::OkStatus();
  const uint32_t mip = static_cast<uint32_t>(sub % mips);
  const bool buffer = d.dimension == D3D10DDIRESOURCE_BUFFER;
  const int64_t w = buffer ? d.width : std::max(1u, d.width >> mip);
  const int64_t h = buffer ? 1 : std::max(1u, d.height >> mip);
  const int64_t z = buffer ? 1 : std::max(1u, d.depth >> mip);
  if (box->left < 0 || box->top < 0 || box->front < 0 || box->right < box->left ||
      box->bottom < box->top || box->back < box->front || box->right > w || box->bottom > h ||
      box->back > z) {
    return Bad(call, "the box is not inside the subresource");
  }
  return absl::OkStatus();
}

absl::Status Player::MapCall(const Call& call, Obj* self) {
  absl::StatusOr<Obj*> res = Lookup(call, call.Arg("pResource"), ObjKind::kResource, false);
  if (!res.ok()) return res.status();
  runtime::Resource* r = As<runtime::Resource>(*res);
  absl::StatusOr<uint64_t> sub = Uint(call, "Subresource");
  if (!sub.ok()) return sub.status();
  if (absl::Status st = CheckSubresource(call, r, static_cast<uint32_t>(*sub), nullptr); !st.ok()) {
    return st;
  }
  if (call.Method() == "Unmap") {
    for (auto it = mappings_.begin(); it != mappings_.end();) {
      if (it->second.ctx == self->ctx && it->second.resource == r &&
          it->second.subresource == *sub) {
        it = mappings_.erase(it);
      } else {
        ++it;
      }
    }
    self->ctx->Unmap(r, static_cast<uint32_t>(*sub));
    return absl::OkStatus();
  }
  absl::StatusOr<uint32_t> type = Enum(call, call.Arg("MapType"), "MapType");
  if (!type.ok()) return type.status();
  absl::StatusOr<uint32_t> flags = Enum(call, call.Arg("MapFlags"), "MapFlags");
  if (!flags.ok()) return flags.status();
  if (*type < 1 || *type > 5) return Bad(call, "MapType out of range");
  runtime::MappedSubresource m;
  HRESULT hr =
      self->ctx->Map(r, static_cast<uint32_t>(*sub), static_cast<D3D10_DDI_MAP>(*type), *flags, &m);
  if (call.ret && call.ret->kind == Kind::kName && call.ret->text != "S_OK") {
    // The capture's Map failed (DXGI_ERROR_WAS_STILL_DRAWING with DO_NOT_WAIT...): no memcpy
    // or Unmap follows, so a map that succeeded here ends at once.
    if (hr == S_OK) {
      self->ctx->Unmap(r, static_cast<uint32_t>(*sub));
      Substitute(call, absl::StrCat("failed in the capture (", call.ret->text,
                                    "): the model's map succeeded and is unmapped at once"));
    }
    return absl::OkStatus();
  }
  const Value* out = Deref(call.Arg("pMappedResource"));
  const Value* p = FindField(out, "pData");
  std::optional<uint64_t> at = p == nullptr ? std::nullopt : Deref(p)->AsUint();
  if (!at || *at == 0) return absl::OkStatus();  // failed in the capture (no memcpy follows)
  const runtime::ResourceDesc& d = r->desc();
  Mapping mapping;
  mapping.size = d.width;
  mapping.capture_size = d.width;
  if (d.dimension != D3D10DDIRESOURCE_BUFFER) {
    const uint32_t mip = static_cast<uint32_t>(*sub % std::max(1u, d.mip_levels));
    uint64_t rows = std::max(1u, d.height >> mip);
    if (IsBlockCompressed(d.format)) rows = (rows + 3) / 4;  // rows of 4x4 blocks
    const uint64_t slices = std::max(1u, d.depth >> mip);
    mapping.row = m.row_pitch;
    mapping.depth = m.depth_pitch != 0 ? m.depth_pitch : static_cast<uint32_t>(m.row_pitch * rows);
    mapping.size = hr == S_OK ? uint64_t{mapping.depth} * slices : 0;
    absl::StatusOr<uint32_t> row = FieldEnum(call, out, "RowPitch", 0);
    absl::StatusOr<uint32_t> depth = FieldEnum(call, out, "DepthPitch", 0);
    if (!row.ok()) return row.status();
    if (!depth.ok()) return depth.status();
    mapping.capture_row = *row;
    mapping.capture_depth = *depth != 0 ? *depth : static_cast<uint32_t>(*row * rows);
    mapping.capture_size = uint64_t{mapping.capture_depth} * slices;
  }
  mapping.data = hr == S_OK ? static_cast<uint8_t*>(m.data) : nullptr;
  mapping.context = self;
  mapping.resource_obj = *res;
  mapping.ctx = self->ctx;
  mapping.resource = r;
  mapping.subresource = static_cast<uint32_t>(*sub);
  mappings_[*at] = mapping;
  return absl::OkStatus();
}

absl::Status Player::Setter(const Call& call, Obj* self, Stage stage, absl::string_view what) {
  runtime::DeviceContext* c = self->ctx;
  if (what == "SetShader") {
    const char* name = stage == Stage::kVS   ? "pVertexShader"
                       : stage == Stage::kPS ? "pPixelShader"
                       : stage == Stage::kGS ? "pGeometryShader"
                       : stage == Stage::kHS ? "pHullShader"
                       : stage == Stage::kDS ? "pDomainShader"
                                             : "pComputeShader";
    absl::StatusOr<Obj*> s = Lookup(call, call.Arg(name), ObjKind::kShader, true);
    if (!s.ok()) return s.status();
    if (!Elements(call.Arg("ppClassInstances")).empty()) return Skip(call, "class instances");
    c->SetShader(stage, As<runtime::Shader>(*s));
    return absl::OkStatus();
  }
  absl::StatusOr<uint64_t> start = Uint(call, "StartSlot");
  if (!start.ok()) return start.status();
  auto objects = [&](const char* arg,
                     ObjKind kind) -> absl::StatusOr<std::vector<runtime::Object*>> {
    std::vector<runtime::Object*> out;
    for (const Value* e : Elements(call.Arg(arg))) {
      absl::StatusOr<Obj*> o = Lookup(call, e, kind, true);
      if (!o.ok()) return o.status();
      out.push_back(*o == nullptr ? nullptr : (*o)->rt);
    }
    if (out.size() > 128) return Bad(call, "too many slots");
    return out;
  };
  if (what == "SetConstantBuffers") {
    if (!Elements(call.Arg("pFirstConstant")).empty()) {
      return Skip(call, "constant-buffer offsets (11.1)");
    }
    auto list = objects("ppConstantBuffers", ObjKind::kResource);
    if (!list.ok()) return list.status();
    std::vector<runtime::Resource*> v;
    for (runtime::Object* o : *list) v.push_back(static_cast<runtime::Resource*>(o));
    c->SetConstantBuffers(stage, static_cast<uint32_t>(*start), static_cast<uint32_t>(v.size()),
                          v.data());
  } else if (what == "SetShaderResources") {
    auto list = objects("ppShaderResourceViews", ObjKind::kView);
    if (!list.ok()) return list.status();
    std::vector<runtime::View*> v;
    for (runtime::Object* o : *list) v.push_back(static_cast<runtime::View*>(o));
    c->SetShaderResources(stage, static_cast<uint32_t>(*start), static_cast<uint32_t>(v.size()),
                          v.data());
  } else {  // SetSamplers
    auto list = objects("ppSamplers", ObjKind::kSamplerState);
    if (!list.ok()) return list.status();
    std::vector<runtime::SamplerState*> v;
    for (runtime::Object* o : *list) v.push_back(static_cast<runtime::SamplerState*>(o));
    c->SetSamplers(stage, static_cast<uint32_t>(*start), static_cast<uint32_t>(v.size()), v.data());
  }
  return absl::OkStatus();
}

absl::StatusOr<uint32_t> Player::ArgEnum(const Call& call, const char* arg) {
  absl::StatusOr<const Value*> v = Arg(call, arg);
  if (!v.ok()) return v.status();
  return Enum(call, *v, arg);
}

absl::StatusOr<int32_t> Player::ArgInt(const Call& call, const char* arg) {
  absl::StatusOr<uint32_t> v = ArgEnum(call, arg);
  if (!v.ok()) return v.status();
  return static_cast<int32_t>(*v);
}

absl::StatusOr<Obj*> Player::ArgResource(const Call& call, const char* arg, bool null_ok) {
  return Lookup(call, call.Arg(arg), ObjKind::kResource, null_ok);
}

absl::StatusOr<Obj*> Player::ArgView(const Call& call, const char* arg) {
  return Lookup(call, call.Arg(arg), ObjKind::kView, false);
}

// Evaluates `expr` (an absl::StatusOr) into `var`; returns its status when it failed.
#define CLTRACE_TRY(var, expr) \
  auto var = (expr);           \
  if (!var.ok()) return var.status()

absl::Status Player::ArgBox(const Call& call, const char* arg, D3D10_DDI_BOX* box, bool* has_box) {
  const Value* b = Deref(call.Arg(arg));
  *has_box = b != nullptr && b->kind == Kind::kStruct;
  if (*has_box) {
    INT* fields[] = {&box->left, &box->top, &box->front, &box->right, &box->bottom, &box->back};
    const char* names[] = {"left", "top", "front", "right", "bottom", "back"};
    for (int k = 0; k < 6; ++k) {
      CLTRACE_TRY(v, FieldEnum(call, b, names[k], 0));
      *fields[k] = static_cast<INT>(*v);
    }
  }
  return absl::OkStatus();
}

absl::Status Player::ContextCall(const Call& call, Obj* self) {
  absl::string_view method = call.Method();
  // Per-stage methods: VSSetShader, PSSetConstantBuffers1, CSSetSamplers...
  static const std::pair<const char*, Stage> kStages[] = {{"VS", Stage::kVS}, {"PS", Stage::kPS},
                                                          {"GS", Stage::kGS}, {"HS", Stage::kHS},
                                                          {"DS", Stage::kDS}, {"CS", Stage::kCS}};
  for (const auto& [prefix, stage] : kStages) {
    absl::string_view rest = method;
    if (!absl::ConsumePrefix(&rest, prefix)) continue;
    absl::ConsumeSuffix(&rest, "1");
    if (rest == "SetShader" || rest == "SetConstantBuffers" || rest == "SetShaderResources" ||
        rest == "SetSamplers") {
      return Setter(call, self, stage, rest);
    }
    if (absl::StartsWith(rest, "Get")) {
      for (const Value::Member& m : call.args) {
        if (absl::StartsWith(m.name, "pp")) AddRefOutputs(&m.value);
      }
      return absl::OkStatus();
    }
  }
  if (absl::StartsWith(method, "IAGet") || absl::StartsWith(method, "OMGet") ||
      absl::StartsWith(method, "RSGet") || absl::StartsWith(method, "SOGet") ||
      method == "GetPredication") {
    for (const Value::Member& m : call.args) {
      if (absl::StartsWith(m.name, "pp")) AddRefOutputs(&m.value);
    }
    return absl::OkStatus();
  }
  using Handler = absl::Status (Player::*)(const Call& call, Obj* self);
  static const auto* const kHandlers = new absl::flat_hash_map<absl::string_view, Handler>{
      {"IASetInputLayout", &Player::ContextInputAssembly},
      {"IASetVertexBuffers", &Player::ContextInputAssembly},
      {"IASetIndexBuffer", &Player::ContextInputAssembly},
      {"IASetPrimitiveTopology", &Player::ContextInputAssembly},
      {"SOSetTargets", &Player::ContextInputAssembly},
      {"CSSetUnorderedAccessViews", &Player::ContextInputAssembly},
      {"OMSetRenderTargets", &Player::ContextOutputMerger},
      {"OMSetRenderTargetsAndUnorderedAccessViews", &Player::ContextOutputMerger},
      {"OMSetBlendState", &Player::ContextOutputMerger},
      {"OMSetDepthStencilState", &Player::ContextOutputMerger},
      {"RSSetState", &Player::ContextRasterizer},
      {"RSSetViewports", &Player::ContextRasterizer},
      {"RSSetScissorRects", &Player::ContextRasterizer},
      {"SetPredication", &Player::ContextRasterizer},
      {"Draw", &Player::ContextDraw},
      {"DrawIndexed", &Player::ContextDraw},
      {"DrawInstanced", &Player::ContextDraw},
      {"DrawIndexedInstanced", &Player::ContextDraw},
      {"DrawAuto", &Player::ContextDraw},
      {"DrawInstancedIndirect", &Player::ContextDraw},
      {"DrawIndexedInstancedIndirect", &Player::ContextDraw},
      {"DispatchIndirect", &Player::ContextDraw},
      {"Dispatch", &Player::ContextDraw},
      {"CopyResource", &Player::ContextCopy},
      {"CopySubresourceRegion", &Player::ContextCopy},
      {"CopySubresourceRegion1", &Player::ContextCopy},
      {"CopyStructureCount", &Player::ContextCopy},
      {"ResolveSubresource", &Player::ContextCopy},
      {"UpdateSubresource", &Player::ContextUpdate},
      {"UpdateSubresource1", &Player::ContextUpdate},
      {"ClearRenderTargetView", &Player::ContextClear},
      {"ClearDepthStencilView", &Player::ContextClear},
      {"ClearUnorderedAccessViewUint", &Player::ContextClear},
      {"ClearUnorderedAccessViewFloat", &Player::ContextClear},
      {"GenerateMips", &Player::ContextClear},
      {"Map", &Player::MapCall},
      {"Unmap", &Player::MapCall},
      {"Begin", &Player::ContextQuery},
      {"End", &Player::ContextQuery},
      {"GetData", &Player::ContextQuery},
      {"ClearState", &Player::ContextCommandList},
      {"Flush", &Player::ContextCommandList},
      {"FinishCommandList", &Player::ContextCommandList},
      {"ExecuteCommandList", &Player::ContextCommandList},
  };
  auto it = kHandlers->find(method);
  if (it == kHandlers->end()) return Skip(call, "not implemented");
  return (this->*(it->second))(call, self);
}

absl::Status Player::ContextInputAssembly(const Call& call, Obj* self) {
  const absl::string_view method = call.Method();
  runtime::DeviceContext* c = self->ctx;
  if (method == "IASetInputLayout") {
    CLTRACE_TRY(l, Lookup(call, call.Arg("pInputLayout"), ObjKind::kInputLayout, true));
    c->IASetInputLayout(As<runtime::InputLayout>(*l));
  } else if (method == "IASetVertexBuffers") {
    CLTRACE_TRY(start, ArgEnum(call, "StartSlot"));
    std::vector<runtime::Resource*> buffers;
    std::vector<uint32_t> strides, offsets;
    for (const Value* e : Elements(call.Arg("ppVertexBuffers"))) {
      CLTRACE_TRY(b, Lookup(call, e, ObjKind::kResource, true));
      buffers.push_back(As<runtime::Resource>(*b));
    }
    for (const Value* e : Elements(call.Arg("pStrides"))) {
      CLTRACE_TRY(s, U32(call, e, "pStrides"));
      strides.push_back(*s);
    }
    for (const Value* e : Elements(call.Arg("pOffsets"))) {
      CLTRACE_TRY(s, U32(call, e, "pOffsets"));
      offsets.push_back(*s);
    }
    if (buffers.size() > 32) return Bad(call, "too many vertex buffers");
    strides.resize(buffers.size());
    offsets.resize(buffers.size());
    c->IASetVertexBuffers(*start, static_cast<uint32_t>(buffers.size()), buffers.data(),
                          strides.data(), offsets.data());
  } else if (method == "IASetIndexBuffer") {
    CLTRACE_TRY(b, ArgResource(call, "pIndexBuffer", true));
    CLTRACE_TRY(format, ArgEnum(call, "Format"));
    CLTRACE_TRY(offset, ArgEnum(call, "Offset"));
    c->IASetIndexBuffer(As<runtime::Resource>(*b), *format, *offset);
  } else if (method == "IASetPrimitiveTopology") {
    CLTRACE_TRY(t, ArgEnum(call, "Topology"));
    c->IASetPrimitiveTopology(static_cast<D3D10_DDI_PRIMITIVE_TOPOLOGY>(*t));
  } else if (method == "SOSetTargets") {
    std::vector<runtime::Resource*> buffers;
    std::vector<uint32_t> offsets;
    for (const Value* e : Elements(call.Arg("ppSOTargets"))) {
      CLTRACE_TRY(b, Lookup(call, e, ObjKind::kResource, true));
      buffers.push_back(As<runtime::Resource>(*b));
    }
    for (const Value* e : Elements(call.Arg("pOffsets"))) {
      CLTRACE_TRY(n, U32(call, e, "pOffsets"));
      offsets.push_back(*n);
    }
    if (buffers.size() > 4) return Bad(call, "more than 4 stream-output targets");
    offsets.resize(buffers.size(), 0);
    c->SOSetTargets(static_cast<uint32_t>(buffers.size()), buffers.data(), offsets.data());
  } else if (method == "CSSetUnorderedAccessViews") {
    CLTRACE_TRY(start, ArgEnum(call, "StartSlot"));
    std::vector<runtime::View*> views;
    std::vector<uint32_t> counts;
    for (const Value* e : Elements(call.Arg("ppUnorderedAccessViews"))) {
      CLTRACE_TRY(v, Lookup(call, e, ObjKind::kView, true));
      views.push_back(As<runtime::View>(*v));
    }
    for (const Value* e : Elements(call.Arg("pUAVInitialCounts"))) {
      CLTRACE_TRY(n, U32(call, e, "pUAVInitialCounts"));
      counts.push_back(*n);
    }
    if (views.size() > 64) return Bad(call, "too many views");
    counts.resize(views.size(), 0xffffffffu);
    c->CSSetUnorderedAccessViews(*start, static_cast<uint32_t>(views.size()), views.data(),
                                 counts.data());
  } else {
    return Skip(call, "not implemented");
  }
  return absl::OkStatus();
}

absl::Status Player::ContextOutputMerger(const Call& call, Obj* self) {
  const absl::string_view method = call.Method();
  runtime::DeviceContext* c = self->ctx;
  if (method == "OMSetRenderTargetsAndUnorderedAccessViews") {
    // The runtime model binds UAVs to the compute stage only: played when it binds no UAV.
    CLTRACE_TRY(rtv_count, ArgEnum(call, "NumRTVs"));
    CLTRACE_TRY(uav_count, ArgEnum(call, "NumUAVs"));
    if (uav_count.value() != 0 && uav_count.value() != 0xffffffffu) {
      return Skip(call, "pixel-stage UAVs (the runtime model binds UAVs to compute only)");
    }
    if (rtv_count.value() == 0xffffffffu) return absl::OkStatus();  // keeps the render targets
  }
  if (method == "OMSetRenderTargets" || method == "OMSetRenderTargetsAndUnorderedAccessViews") {
    std::vector<runtime::View*> rtvs;
    for (const Value* e : Elements(call.Arg("ppRenderTargetViews"))) {
      CLTRACE_TRY(v, Lookup(call, e, ObjKind::kView, true));
      rtvs.push_back(As<runtime::View>(*v));
    }
    if (rtvs.size() > 8) return Bad(call, "more than 8 render targets");
    CLTRACE_TRY(dsv, Lookup(call, call.Arg("pDepthStencilView"), ObjKind::kView, true));
    c->OMSetRenderTargets(static_cast<uint32_t>(rtvs.size()), rtvs.data(), As<runtime::View>(*dsv));
  } else if (method == "OMSetBlendState") {
    CLTRACE_TRY(s, Lookup(call, call.Arg("pBlendState"), ObjKind::kBlendState, true));
    float factor[4] = {1, 1, 1, 1};
    std::vector<const Value*> f = Elements(call.Arg("BlendFactor"));
    for (size_t i = 0; i < 4 && i < f.size(); ++i) {
      CLTRACE_TRY(v, Float(call, f[i], "BlendFactor"));
      factor[i] = static_cast<float>(*v);
    }
    CLTRACE_TRY(mask, ArgEnum(call, "SampleMask"));
    c->OMSetBlendState(As<runtime::BlendState>(*s), factor, *mask);
  } else if (method == "OMSetDepthStencilState") {
    CLTRACE_TRY(s, Lookup(call, call.Arg("pDepthStencilState"), ObjKind::kDepthStencilState, true));
    CLTRACE_TRY(ref, ArgEnum(call, "StencilRef"));
    c->OMSetDepthStencilState(As<runtime::DepthStencilState>(*s), *ref);
  } else {
    return Skip(call, "not implemented");
  }
  return absl::OkStatus();
}

absl::Status Player::ContextRasterizer(const Call& call, Obj* self) {
  const absl::string_view method = call.Method();
  runtime::DeviceContext* c = self->ctx;
  if (method == "RSSetState") {
    CLTRACE_TRY(s, Lookup(call, call.Arg("pRasterizerState"), ObjKind::kRasterizerState, true));
    c->RSSetState(As<runtime::RasterizerState>(*s));
  } else if (method == "RSSetViewports") {
    std::vector<D3D10_DDI_VIEWPORT> vps;
    for (const Value* e : Elements(call.Arg("pViewports"))) {
      D3D10_DDI_VIEWPORT vp{};
      float* fields[] = {&vp.TopLeftX, &vp.TopLeftY, &vp.Width,
                         &vp.Height,   &vp.MinDepth, &vp.MaxDepth};
      const char* names[] = {"TopLeftX", "TopLeftY", "Width", "Height", "MinDepth", "MaxDepth"};
      for (int k = 0; k < 6; ++k) {
        const Value* f = FindField(e, names[k]);
        if (f == nullptr) continue;
        CLTRACE_TRY(v, Float(call, f, names[k]));
        *fields[k] = static_cast<float>(*v);
      }
      vps.push_back(vp);
    }
    if (vps.size() > 16) return Bad(call, "more than 16 viewports");
    c->RSSetViewports(static_cast<uint32_t>(vps.size()), vps.data());
  } else if (method == "RSSetScissorRects") {
    std::vector<D3D10_DDI_RECT> rects;
    for (const Value* e : Elements(call.Arg("pRects"))) {
      D3D10_DDI_RECT r{};
      LONG* fields[] = {&r.left, &r.top, &r.right, &r.bottom};
      const char* names[] = {"left", "top", "right", "bottom"};
      for (int k = 0; k < 4; ++k) {
        const Value* f = FindField(e, names[k]);
        if (f == nullptr) continue;
        CLTRACE_TRY(v, U32(call, f, names[k]));
        *fields[k] = static_cast<LONG>(static_cast<int32_t>(*v));
      }
      rects.push_back(r);
    }
    if (rects.size() > 16) return Bad(call, "more than 16 rectangles");
    c->RSSetScissorRects(static_cast<uint32_t>(rects.size()), rects.data());
  } else if (method == "SetPredication") {
    CLTRACE_TRY(q, Lookup(call, call.Arg("pPredicate"), ObjKind::kQuery, true));
    CLTRACE_TRY(value, ArgEnum(call, "PredicateValue"));
    c->SetPredication(As<runtime::Query>(*q), *value ? TRUE : FALSE);
  } else {
    return Skip(call, "not implemented");
  }
  return absl::OkStatus();
}

absl::Status Player::ContextDraw(const Call& call, Obj* self) {
  const absl::string_view method = call.Method();
  runtime::DeviceContext* c = self->ctx;
  if (method == "Draw") {
    CLTRACE_TRY(n, ArgEnum(call, "VertexCount"));
    CLTRACE_TRY(start, ArgEnum(call, "StartVertexLocation"));
    c->Draw(*n, *start);
  } else if (method == "DrawIndexed") {
    CLTRACE_TRY(n, ArgEnum(call, "IndexCount"));
    CLTRACE_TRY(start, ArgEnum(call, "StartIndexLocation"));
    CLTRACE_TRY(base, ArgInt(call, "BaseVertexLocation"));
    c->DrawIndexed(*n, *start, *base);
  } else if (method == "DrawInstanced") {
    CLTRACE_TRY(n, ArgEnum(call, "VertexCountPerInstance"));
    CLTRACE_TRY(instances, ArgEnum(call, "InstanceCount"));
    CLTRACE_TRY(start, ArgEnum(call, "StartVertexLocation"));
    CLTRACE_TRY(first, ArgEnum(call, "StartInstanceLocation"));
    c->DrawInstanced(*n, *instances, *start, *first);
  } else if (method == "DrawIndexedInstanced") {
    CLTRACE_TRY(n, ArgEnum(call, "IndexCountPerInstance"));
    CLTRACE_TRY(instances, ArgEnum(call, "InstanceCount"));
    CLTRACE_TRY(start, ArgEnum(call, "StartIndexLocation"));
    CLTRACE_TRY(base, ArgInt(call, "BaseVertexLocation"));
    CLTRACE_TRY(first, ArgEnum(call, "StartInstanceLocation"));
    c->DrawIndexedInstanced(*n, *instances, *start, *base, *first);
  } else if (method == "DrawAuto") {
    c->DrawAuto();
  } else if (method == "DrawInstancedIndirect" || method == "DrawIndexedInstancedIndirect" ||
             method == "DispatchIndirect") {
    CLTRACE_TRY(b, ArgResource(call, "pBufferForArgs", false));
    CLTRACE_TRY(offset, ArgEnum(call, "AlignedByteOffsetForArgs"));
    runtime::Resource* r = As<runtime::Resource>(*b);
    if (method == "DrawInstancedIndirect")
      c->DrawInstancedIndirect(r, *offset);
    else if (method == "DrawIndexedInstancedIndirect")
      c->DrawIndexedInstancedIndirect(r, *offset);
    else
      c->DispatchIndirect(r, *offset);
  } else if (method == "Dispatch") {
    CLTRACE_TRY(x, ArgEnum(call, "ThreadGroupCountX"));
    CLTRACE_TRY(y, ArgEnum(call, "ThreadGroupCountY"));
    CLTRACE_TRY(z, ArgEnum(call, "ThreadGroupCountZ"));
    c->Dispatch(*x, *y, *z);
  } else {
    return Skip(call, "not implemented");
  }
  return absl::OkStatus();
}

absl::Status Player::ContextCopy(const Call& call, Obj* self) {
  const absl::string_view method = call.Method();
  runtime::DeviceContext* c = self->ctx;
  if (method == "CopyResource") {
    CLTRACE_TRY(dst, ArgResource(call, "pDstResource", false));
    CLTRACE_TRY(src, ArgResource(call, "pSrcResource", false));
    c->CopyResource(As<runtime::Resource>(*dst), As<runtime::Resource>(*src));
  } else if (method == "CopySubresourceRegion" || method == "CopySubresourceRegion1") {
    if (method == "CopySubresourceRegion1") {
      CLTRACE_TRY(flags, ArgEnum(call, "CopyFlags"));
      if (*flags != 0) return Skip(call, "copy flags (11.1)");
    }
    CLTRACE_TRY(dst, ArgResource(call, "pDstResource", false));
    CLTRACE_TRY(dst_sub, ArgEnum(call, "DstSubresource"));
    CLTRACE_TRY(x, ArgEnum(call, "DstX"));
    CLTRACE_TRY(y, ArgEnum(call, "DstY"));
    CLTRACE_TRY(z, ArgEnum(call, "DstZ"));
    CLTRACE_TRY(src, ArgResource(call, "pSrcResource", false));
    CLTRACE_TRY(src_sub, ArgEnum(call, "SrcSubresource"));
    D3D10_DDI_BOX box{};
    bool has_box = false;
    if (absl::Status st = ArgBox(call, "pSrcBox", &box, &has_box); !st.ok()) return st;
    if (absl::Status st = CheckSubresource(call, As<runtime::Resource>(*dst), *dst_sub, nullptr);
        !st.ok()) {
      return st;
    }
    if (absl::Status st =
            CheckSubresource(call, As<runtime::Resource>(*src), *src_sub, has_box ? &box : nullptr);
        !st.ok()) {
      return st;
    }
    c->CopySubresourceRegion(As<runtime::Resource>(*dst), *dst_sub, *x, *y, *z,
                             As<runtime::Resource>(*src), *src_sub, has_box ? &box : nullptr);
  } else if (method == "CopyStructureCount") {
    CLTRACE_TRY(dst, ArgResource(call, "pDstBuffer", false));
    CLTRACE_TRY(offset, ArgEnum(call, "DstAlignedByteOffset"));
    CLTRACE_TRY(src, ArgView(call, "pSrcView"));
    c->CopyStructureCount(As<runtime::Resource>(*dst), *offset, As<runtime::View>(*src));
  } else if (method == "ResolveSubresource") {
    CLTRACE_TRY(dst, ArgResource(call, "pDstResource", false));
    CLTRACE_TRY(dst_sub, ArgEnum(call, "DstSubresource"));
    CLTRACE_TRY(src, ArgResource(call, "pSrcResource", false));
    CLTRACE_TRY(src_sub, ArgEnum(call, "SrcSubresource"));
    CLTRACE_TRY(format, ArgEnum(call, "Format"));
    c->ResolveSubresource(As<runtime::Resource>(*dst), *dst_sub, As<runtime::Resource>(*src),
                          *src_sub, static_cast<DXGI_FORMAT>(*format));
  } else {
    return Skip(call, "not implemented");
  }
  return absl::OkStatus();
}

absl::Status Player::ContextUpdate(const Call& call, Obj* self) {
  if (call.Method() == "UpdateSubresource1") {
    CLTRACE_TRY(flags, ArgEnum(call, "CopyFlags"));
    if (*flags != 0) return Skip(call, "copy flags (11.1)");
  }
  CLTRACE_TRY(dst, ArgResource(call, "pDstResource", false));
  CLTRACE_TRY(sub, ArgEnum(call, "DstSubresource"));
  CLTRACE_TRY(pitch, ArgEnum(call, "SrcRowPitch"));
  CLTRACE_TRY(slice, ArgEnum(call, "SrcDepthPitch"));
  runtime::Resource* r = As<runtime::Resource>(*dst);
  D3D10_DDI_BOX box{};
  bool has_box = false;
  if (absl::Status st = ArgBox(call, "pDstBox", &box, &has_box); !st.ok()) return st;
  if (absl::Status st = CheckSubresource(call, r, *sub, has_box ? &box : nullptr); !st.ok()) {
    return st;
  }
  // What the driver may read: the whole subresource at the given pitches (an upper bound).
  const runtime::ResourceDesc& d = r->desc();
  const uint64_t need =
      d.dimension == D3D10DDIRESOURCE_BUFFER
          ? d.width
          : uint64_t{d.depth} *
                std::max<uint64_t>(
                    *slice, uint64_t{d.height} * std::max<uint64_t>(*pitch, d.width * 16ull));
  if (need > (uint64_t{1} << 30)) return Bad(call, "update larger than 1 GiB");
  CLTRACE_TRY(bytes, Bytes(call, call.Arg("pSrcData"), need));
  self->ctx->UpdateSubresource(r, *sub, has_box ? &box : nullptr, bytes->data(), *pitch, *slice);
  return absl::OkStatus();
}

absl::Status Player::ContextClear(const Call& call, Obj* self) {
  const absl::string_view method = call.Method();
  runtime::DeviceContext* c = self->ctx;
  if (method == "ClearRenderTargetView") {
    CLTRACE_TRY(v, ArgView(call, "pRenderTargetView"));
    float color[4] = {};
    std::vector<const Value*> f = Elements(call.Arg("ColorRGBA"));
    for (size_t i = 0; i < 4 && i < f.size(); ++i) {
      CLTRACE_TRY(x, Float(call, f[i], "ColorRGBA"));
      color[i] = static_cast<float>(*x);
    }
    c->ClearRenderTargetView(As<runtime::View>(*v), color);
  } else if (method == "ClearDepthStencilView") {
    CLTRACE_TRY(v, ArgView(call, "pDepthStencilView"));
    CLTRACE_TRY(flags, ArgEnum(call, "ClearFlags"));
    CLTRACE_TRY(depth, Float(call, call.Arg("Depth"), "Depth"));
    CLTRACE_TRY(stencil, ArgEnum(call, "Stencil"));
    c->ClearDepthStencilView(As<runtime::View>(*v), *flags, static_cast<float>(*depth),
                             static_cast<uint8_t>(*stencil));
  } else if (method == "ClearUnorderedAccessViewUint") {
    CLTRACE_TRY(v, ArgView(call, "pUnorderedAccessView"));
    std::vector<const Value*> f = Elements(call.Arg("Values"));
    uint32_t values[4] = {};
    for (size_t i = 0; i < 4 && i < f.size(); ++i) {
      CLTRACE_TRY(x, U32(call, f[i], "Values"));
      values[i] = *x;
    }
    c->ClearUnorderedAccessViewUint(As<runtime::View>(*v), values);
  } else if (method == "ClearUnorderedAccessViewFloat") {
    CLTRACE_TRY(v, ArgView(call, "pUnorderedAccessView"));
    std::vector<const Value*> f = Elements(call.Arg("Values"));
    float values[4] = {};
    for (size_t i = 0; i < 4 && i < f.size(); ++i) {
      CLTRACE_TRY(x, Float(call, f[i], "Values"));
      values[i] = static_cast<float>(*x);
    }
    c->ClearUnorderedAccessViewFloat(As<runtime::View>(*v), values);
  } else if (method == "GenerateMips") {
    CLTRACE_TRY(v, ArgView(call, "pShaderResourceView"));
    c->GenerateMips(As<runtime::View>(*v));
  } else {
    return Skip(call, "not implemented");
  }
  return absl::OkStatus();
}

absl::Status Player::ContextQuery(const Call& call, Obj* self) {
  const absl::string_view method = call.Method();
  runtime::DeviceContext* c = self->ctx;
  CLTRACE_TRY(q, Lookup(call, call.Arg("pAsync"), ObjKind::kQuery, false));
  runtime::Query* query = As<runtime::Query>(*q);
  if (method == "Begin") {
    c->Begin(query);
  } else if (method == "End") {
    c->End(query);
  } else {
    CLTRACE_TRY(size, ArgEnum(call, "DataSize"));
    CLTRACE_TRY(flags, ArgEnum(call, "GetDataFlags"));
    uint64_t data[32] = {};
    if (*size > sizeof(data)) return Bad(call, "DataSize larger than any query's data");
    const Value* out = call.Arg("pData");
    const bool null = out == nullptr || out->kind == Kind::kNull;
    c->GetData(query, null ? nullptr : data, null ? 0 : *size, *flags);
  }
  return absl::OkStatus();
}

absl::Status Player::ContextCommandList(const Call& call, Obj* self) {
  const absl::string_view method = call.Method();
  runtime::DeviceContext* c = self->ctx;
  if (method == "ClearState") {
    c->ClearState();
  } else if (method == "Flush") {
    c->Flush();
  } else if (method == "FinishCommandList") {
    CLTRACE_TRY(restore, ArgEnum(call, "RestoreDeferredContextState"));
    CLTRACE_TRY(key, OutKey(call, "ppCommandList"));
    runtime::CommandList* cl = nullptr;
    HRESULT hr = c->FinishCommandList(*restore ? TRUE : FALSE, *key == 0 ? nullptr : &cl);
    if (hr != S_OK || cl == nullptr) return absl::OkStatus();
    auto obj = std::make_shared<Obj>();
    obj->kind = ObjKind::kCommandList;
    obj->dev = self->dev;
    obj->rt = cl;
    if (absl::Status s = BindNew(call, call.Arg("ppCommandList"), std::move(obj)); !s.ok()) {
      cl->Release();
      return s;
    }
  } else if (method == "ExecuteCommandList") {
    if (const Value* v = call.Arg("pCommandList");
        r40_armed_ && v != nullptr && Deref(v)->AsUint() == r40_key_ && !keys_.contains(r40_key_) &&
        R40Executes() > r40_before_) {
      r40_armed_ = false;
      Substitute(call,
                 absl::StrCat("executes the command list released at line ", r40_release_line_,
                              ": issued at that Release by the runtime model's R40 "
                              "misuse mode"));
      return absl::OkStatus();
    }
    CLTRACE_TRY(l, Lookup(call, call.Arg("pCommandList"), ObjKind::kCommandList, false));
    CLTRACE_TRY(restore, ArgEnum(call, "RestoreContextState"));
    c->ExecuteCommandList(As<runtime::CommandList>(*l), *restore ? TRUE : FALSE);
  } else {
    return Skip(call, "not implemented");
  }
  return absl::OkStatus();
}

#undef CLTRACE_TRY

}  // namespace

absl::StatusOr<PlayReport> Play(const std::vector<Call>& calls, const PlayOptions& options) {
  Player player(calls, options);
  return player.Run();
}

}  // namespace cltrace::apitrace
