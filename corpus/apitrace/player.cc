#include "corpus/apitrace/player.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "corpus/apitrace/internal/d3d11_names.h"
#include "corpus/apitrace/internal/player_impl.h"
#include "ddi/catalog.h"
#include "runtime/runtime.h"

namespace cltrace::apitrace {
namespace internal {

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

// Bad input at `call`.
absl::Status Bad(const Call& call, absl::string_view message) {
  return absl::InvalidArgumentError(
      absl::StrCat("line ", call.line, ": ", call.name, ": ", message));
}

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
    case ObjKind::kClassInstance:
      return "a class instance";
    case ObjKind::kPlain:
      return "a DXGI object";
  }
  return "an object";
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

absl::Status Player::FindReleasedListExecute() {
  absl::flat_hash_map<uint64_t, int> refs;  // command lists alive: their references
  auto key_of = [](const Call& c, const char* arg) -> uint64_t {
    const Value* v = c.Arg(arg);
    return v == nullptr ? 0 : Deref(v)->AsUint().value_or(0);
  };
  // The first final release of a command list: is the list executed again before its address
  // names a new one?
  uint64_t released = 0;
  int64_t release_line = 0;
  Call c;
  while (source_->Next(&c)) {
    const absl::string_view method = c.Method();
    if (released != 0) {
      if (method == "FinishCommandList" && key_of(c, "ppCommandList") == released) break;
      if (method == "ExecuteCommandList" && key_of(c, "pCommandList") == released) {
        r40_key_ = released;
        r40_release_line_ = release_line;
        break;
      }
      continue;
    }
    if (method == "FinishCommandList") {
      if (uint64_t k = key_of(c, "ppCommandList"); k != 0) refs[k] = 1;
      continue;
    }
    const uint64_t self = key_of(c, "this");
    auto it = refs.find(self);
    if (it == refs.end()) continue;
    if (method == "AddRef") ++it->second;
    if (method != "Release" || --it->second > 0) continue;
    released = self;
    release_line = c.line;
  }
  // A malformed line is bad input before anything is played.
  if (!source_->status().ok()) return source_->status();
  return source_->Rewind();
}

void Player::CompactObjects() {
  if (objects_.size() < compact_at_) return;
  std::erase_if(objects_, [](const std::shared_ptr<Obj>& o) {
    return !o->alive && o->kind != ObjKind::kDevice &&
           !(o->kind == ObjKind::kContext && o->dev != nullptr && o->dev->ic_obj == o.get());
  });
  compact_at_ = std::max<size_t>(64, 2 * objects_.size());
}

absl::StatusOr<PlayReport> Player::Run() {
  if (absl::Status s = FindReleasedListExecute(); !s.ok()) return s;
  if (r40_key_ != 0) r40_before_ = R40Executes();
  // The capture's threads, in order of first appearance; each plays on a thread of its own
  // (the first on the calling thread), started when its first call is read. Turns: the thread
  // that played a call reads the next one and wakes only the thread it belongs to (a capture
  // with many threads must not wake them all for every call).
  absl::flat_hash_map<uint64_t, uint32_t> thread_index;
  std::mutex mu;
  std::deque<std::condition_variable> turn;  // per capture thread (stable addresses)
  std::vector<std::thread> pool;
  Call current;
  uint32_t party = 0;  // the capture thread of `current`
  bool done = false;
  absl::Status error;
  std::function<void(uint32_t)> worker;
  // Reads the next call (mu held): false at the end or on a read error.
  auto advance = [&]() -> bool {
    if (!source_->Next(&current)) {
      if (!source_->status().ok()) error = source_->status();
      done = true;
      for (std::condition_variable& t : turn) t.notify_all();
      return false;
    }
    ++report_.calls;
    const uint64_t t = current.thread.value_or(0);
    auto [it, fresh] = thread_index.try_emplace(t, static_cast<uint32_t>(turn.size()));
    party = it->second;
    if (fresh) {
      turn.emplace_back();
      if (party != 0) pool.emplace_back(worker, party);
    }
    turn[party].notify_one();
    return true;
  };
  worker = [&](uint32_t me) {
    std::unique_lock<std::mutex> lock(mu);
    for (;;) {
      turn[me].wait(lock, [&] { return done || party == me; });
      if (done) return;
      if (options_.on_call) options_.on_call(current);
      absl::Status s = PlayCall(current);
      CompactObjects();
      report_.max_objects = std::max<uint64_t>(report_.max_objects, objects_.size());
      if (!s.ok()) {
        error = s;
        done = true;
        for (std::condition_variable& t : turn) t.notify_all();
        return;
      }
      if (!advance()) return;
    }
  };
  bool any = false;
  {
    std::lock_guard<std::mutex> lock(mu);
    any = advance();
  }
  if (any) worker(0);
  // No thread starts another once `done` is set, so the pool is final here.
  for (std::thread& t : pool) t.join();
  report_.threads = static_cast<int>(turn.size());
  report_.max_buffered = source_->max_buffered();

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
    if (o->kind != ObjKind::kContext) return Bad(call, "this is not a device context");
    return Annotation(call, o);
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
  if (absl::StartsWith(iface, "ID3D11ClassLinkage")) return ClassLinkageCall(call);
  if (absl::StartsWith(iface, "ID3D11ClassInstance") &&
      (method == "GetInstanceName" || method == "GetTypeName")) {
    return absl::OkStatus();  // no DDI call
  }
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

absl::Status Player::Annotation(const Call& call, Obj* o) {
  const absl::string_view method = call.Method();
  if (method == "EndEvent") {
    o->ctx->EndEvent();
    return absl::OkStatus();
  }
  if (method != "BeginEvent" && method != "SetMarker") return Skip(call, "not implemented");
  absl::StatusOr<const Value*> name = Arg(call, "Name");
  if (!name.ok()) return name.status();
  const Value* v = Deref(*name);
  std::string text;
  if (v->kind == Kind::kString) {
    text = v->text;
  } else if (v->kind != Kind::kNull) {
    return Bad(call, "Name is not a string");
  }
  if (method == "BeginEvent") {
    o->ctx->BeginEvent(text);
  } else {
    o->ctx->SetMarker(text);
  }
  return absl::OkStatus();
}

absl::Status Player::ClassLinkageCall(const Call& call) {
  const absl::string_view method = call.Method();
  if (method != "GetClassInstance" && method != "CreateClassInstance") {
    return Skip(call, "not implemented");
  }
  if (call.ret && call.ret->text != "S_OK") return absl::OkStatus();  // failed in the capture
  auto obj = std::make_shared<Obj>();
  obj->kind = ObjKind::kClassInstance;
  if (method == "CreateClassInstance") {
    // Where the instance's data is: the D3D11DDIARG_POINTERDATA its Set*Shader passes.
    CLTRACE_TRY(cb, ArgEnum(call, "ConstantBufferOffset"));
    CLTRACE_TRY(vec, ArgEnum(call, "ConstantVectorOffset"));
    CLTRACE_TRY(tex, ArgEnum(call, "TextureOffset"));
    CLTRACE_TRY(samp, ArgEnum(call, "SamplerOffset"));
    obj->pointer_data =
        (*vec & 0xfffu) | (*cb & 0xfu) << 12 | (*samp & 0xfu) << 16 | (*tex & 0x7fu) << 20;
  }
  return BindNew(call, call.Arg("ppInstance"), std::move(obj));
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

}  // namespace internal

namespace {

class VectorSource : public CallSource {
 public:
  explicit VectorSource(const std::vector<Call>& calls) : calls_(calls) {}
  bool Next(Call* call) override {
    if (next_ >= calls_.size()) return false;
    *call = calls_[next_++];
    return true;
  }
  absl::Status status() const override { return absl::OkStatus(); }
  absl::Status Rewind() override {
    next_ = 0;
    return absl::OkStatus();
  }

 private:
  const std::vector<Call>& calls_;
  size_t next_ = 0;
};

}  // namespace

absl::StatusOr<std::unique_ptr<DumpFileSource>> DumpFileSource::Open(const std::string& path) {
  auto source = std::unique_ptr<DumpFileSource>(new DumpFileSource());
  source->in_.open(path, std::ios::binary);
  if (!source->in_) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  source->stream_ = std::make_unique<DumpStream>(&source->in_);
  return source;
}

bool DumpFileSource::Next(Call* call) { return stream_->Next(call); }

absl::Status DumpFileSource::Rewind() {
  max_buffered_ = max_buffered();
  in_.clear();
  in_.seekg(0);
  if (!in_) return absl::DataLossError("cannot read the dump again from its start");
  stream_ = std::make_unique<DumpStream>(&in_);
  return absl::OkStatus();
}

size_t DumpFileSource::max_buffered() const {
  return std::max(max_buffered_, stream_->max_buffered());
}

absl::StatusOr<PlayReport> Play(CallSource* source, const PlayOptions& options) {
  internal::Player player(source, options);
  return player.Run();
}

absl::StatusOr<PlayReport> Play(const std::vector<Call>& calls, const PlayOptions& options) {
  VectorSource source(calls);
  return Play(&source, options);
}

}  // namespace cltrace::apitrace
