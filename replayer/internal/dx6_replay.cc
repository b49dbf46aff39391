#include "replayer/internal/dx6_replay.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "ddi/ddi_abi.h"
#include "format/call_codec.h"
#include "format/catalog.h"
#include "format/content.h"
#include "replayer/internal/call_meta.h"
#include "replayer/internal/compare.h"
#include "rules/planted_bugs.h"

namespace cltrace::replay::internal {
namespace {

using format::CallId;
using format::Event;
using format::FieldInfo;
using format::FieldKind;

// What the DX6 runtime leaves after dwCommandLength (dx6/dx6_runtime.cc kStaleCommand): an
// unknown opcode, so a driver reading past the length fails on it (R80).
constexpr uint8_t kStaleCommand[4] = {0xFF, 0x00, 0x01, 0x00};

// The fields of a DX6 call the replay reads, by name (-1 where the call has none).
struct Dx6Fields {
  int surface = -1;  // lpDDSurface (buffer callbacks)
  int rval = -1;     // ddRVal
  // D3dDrawPrimitives2.
  int flags = -1, vertex_type = -1, commands = -1, commands_out = -1, command_offset = -1,
      command_length = -1, vertex = -1, vertex_out = -1, vertex_offset = -1, vertex_length = -1,
      vertex_size = -1;
};

Dx6Fields FieldsOf(CallId call) {
  const format::CallInfo& ci = *format::GetCall(call);
  auto at = [&](const char* name) { return format::FieldIndex(ci, name); };
  Dx6Fields f;
  f.surface = at("lpDDSurface");
  f.rval = at("ddRVal");
  f.flags = at("dwFlags");
  f.vertex_type = at("dwVertexType");
  f.commands = at("lpDDCommands");
  f.commands_out = at("lpDDCommandsOut");
  f.command_offset = at("dwCommandOffset");
  f.command_length = at("dwCommandLength");
  f.vertex = at("lpDDVertex");
  f.vertex_out = at("lpDDVertexOut");
  f.vertex_offset = at("dwVertexOffset");
  f.vertex_length = at("dwVertexLength");
  f.vertex_size = at("dwVertexSize");
  return f;
}

uint64_t Arg(const Event& e, int field) {
  return field >= 0 && static_cast<size_t>(field) < e.args.size() ? e.args[field] : 0;
}

bool UserVertices(const Event& e, const Dx6Fields& f) {
  return (Arg(e, f.flags) & D3DHALDP2_USERMEMVERTICES) != 0;
}

// The vertex bytes a D3dDrawPrimitives2 hands the driver (0 without a vertex source).
uint64_t VertexBytes(const Event& e, const Dx6Fields& f) {
  if (!UserVertices(e, f) && Arg(e, f.vertex) == 0) return 0;
  return format::Dp2VertexBytes(static_cast<uint32_t>(Arg(e, f.vertex_type)),
                                static_cast<uint32_t>(Arg(e, f.vertex_size)),
                                static_cast<uint32_t>(Arg(e, f.vertex_length)));
}

bool IsContextType(const FieldInfo& f) {
  return absl::string_view(format::HandleTypes()[f.type_index].name) == "D3DHAL_HCONTEXT";
}

class Dx6Replayer {
 public:
  Dx6Replayer(const Plan& plan, const ReplayOptions& options, std::unique_ptr<Dx6Driver> driver)
      : plan_(plan), options_(options), owned_(std::move(driver)), driver_(*owned_) {
    env_.arena = &arena_;
    env_.actual = &actual_;
    env_.handle_raw = [this](uint64_t id) -> uint64_t {
      auto it = raw_of_id_.find(id);
      return it == raw_of_id_.end() ? 0 : it->second;
    };
    env_.handle_id = [this](uint64_t raw) -> uint64_t {
      auto it = id_of_raw_.find(raw);
      if (it != id_of_raw_.end()) return it->second;
      unknown_.push_back(raw);
      return kUnknownBase + unknown_.size() - 1;
    };
    env_.pointer = [this](const FieldInfo& f, uint64_t recorded) -> void* {
      const absl::string_view name = f.name;
      if (name == "lpdwRStates") return recorded == 0 ? nullptr : rstates_;
      if (name == "lpVertices") return recorded == 0 ? nullptr : user_vertices_;
      return nullptr;  // outputs (fpVidMem, lpSurfData): the driver writes them
    };
  }

  void Run(ReplayResult* result) {
    for (uint32_t i : plan_.dx6) {
      const Event& e = plan_.events[i];
      if (bad_.has_value() || (!options_.keep_going && !divergences_.empty())) break;
      Issue(e);
      ++calls_;
    }
    Merge(result);
  }

 private:
  static constexpr uint64_t kUnknownBase = uint64_t{1} << 62;

  // The surfaces a call names (its recent history goes with a divergence).
  static std::vector<uint64_t> Surfaces(const Event& e) {
    const Dx6Fields f = FieldsOf(e.call);
    std::vector<uint64_t> ids;
    for (int field : {f.surface, f.commands, f.vertex}) {
      const uint64_t id = Arg(e, field);
      if (id != 0 && std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
    }
    return ids;
  }
  void Diverge(const Event& e, std::string expected, std::string actual) {
    divergences_.push_back(
        Divergence{e.seq, e.tid, e.call, std::move(expected), std::move(actual), Surfaces(e), {}});
  }
  void FailInput(const Event& e, std::string message) {
    if (!bad_.has_value()) bad_ = BadInput::At(e, std::move(message));
  }

  void Bind(uint64_t id, uint64_t raw) {
    if (auto old = raw_of_id_.find(id); old != raw_of_id_.end()) id_of_raw_.erase(old->second);
    raw_of_id_[id] = raw;
    id_of_raw_[raw] = id;
  }
  void Unbind(uint64_t id) {
    auto it = raw_of_id_.find(id);
    if (it == raw_of_id_.end()) return;
    if (auto r = id_of_raw_.find(it->second); r != id_of_raw_.end() && r->second == id) {
      id_of_raw_.erase(r);
    }
    raw_of_id_.erase(it);
  }

  // Gives every input handle of `e` its replay value; false (bad input) for a surface the
  // replay does not know.
  bool PrepareHandles(const Event& e, const CallMeta& m) {
    absl::Span<const FieldInfo> fields = format::Fields(*m.info);
    for (const HandleField& h : m.handles) {
      const FieldInfo& f = fields[h.index];
      const uint64_t id = e.args[h.index];
      if (id == 0 || f.dir == format::FieldDir::kOut) continue;
      if (IsContextType(f)) {
        if (!raw_of_id_.contains(id)) Bind(id, driver_.CreateContext().value);
        continue;
      }
      if (e.call == CallId::kCreateD3DBuffer) {
        // The runtime's new surface object.
        surfaces_.push_back(std::make_unique<char>());
        Bind(id, reinterpret_cast<uintptr_t>(surfaces_.back().get()));
        continue;
      }
      if (!raw_of_id_.contains(id)) {
        FailInput(e, absl::StrFormat("surface %s (%s) is not a buffer the DX6 driver holds",
                                     plan_.handles->Token(id), f.name));
        return false;
      }
    }
    return true;
  }

  // Writes `bytes` (or zeros when `bytes` is empty and `length` > 0) at `offset` of the
  // replay memory of surface `id`, then `tail` where it fits. Returns a note when less than
  // asked reached the driver.
  std::string WriteBuffer(uint64_t id, uint64_t offset, absl::string_view bytes, uint64_t length,
                          absl::Span<const uint8_t> tail, const char* what) {
    if (length == 0 && tail.empty()) return "";
    auto raw = raw_of_id_.find(id);
    const absl::Span<uint8_t> memory =
        raw == raw_of_id_.end()
            ? absl::Span<uint8_t>()
            : driver_.BufferMemory(DD_HSURFACE{reinterpret_cast<void*>(raw->second)});
    if (memory.empty()) {
      return absl::StrFormat("the driver holds no %s buffer %s: nothing written", what,
                             plan_.handles->Token(id));
    }
    uint8_t* base = memory.data();
    const uint64_t size = memory.size();
    std::string note;
    const uint64_t room = offset < size ? size - offset : 0;
    const uint64_t n = std::min(length, room);
    if (n < length) {
      note = absl::StrFormat("%d of the %d %s bytes fit the %d-byte buffer the driver gave", n,
                             length, what, size);
    }
    if (bytes.empty()) {
      std::memset(base + offset, 0, n);
    } else {
      std::memcpy(base + offset, bytes.data(), n);
      content_bytes_ += n;
    }
    if (!tail.empty() && length + tail.size() <= room) {
      std::memcpy(base + offset + length, tail.data(), tail.size());
    }
    return note;
  }

  // The recorded bytes of a D3dDrawPrimitives2, into the replay's buffers.
  void PrepareDrawPrimitives2(const Event& e, const Dx6Fields& f) {
    const uint64_t command_length = Arg(e, f.command_length);
    const uint64_t vertex_bytes = VertexBytes(e, f);
    absl::string_view content;
    if (e.content != 0) content = plan_.contents->Token(e.content);  // size checked by the plan
    const absl::string_view commands =
        content.empty() ? absl::string_view() : content.substr(0, command_length);
    const absl::string_view vertices =
        content.empty() ? absl::string_view() : content.substr(command_length);
    std::vector<std::string> notes;
    if (content.empty() && command_length + vertex_bytes > 0) {
      notes.push_back(
          "D3dDrawPrimitives2 has no content: the driver gets zeros for its command "
          "and vertex bytes");
    }
    if (!content.empty()) ++draws_;
    if (std::string n = WriteBuffer(Arg(e, f.commands), Arg(e, f.command_offset), commands,
                                    command_length, kStaleCommand, "command");
        !n.empty()) {
      notes.push_back(std::move(n));
    }
    user_vertices_buffer_.clear();
    user_vertices_ = nullptr;
    if (UserVertices(e, f)) {
      user_vertices_buffer_.assign(vertex_bytes + 1, '\0');
      if (!vertices.empty()) {
        std::memcpy(user_vertices_buffer_.data(), vertices.data(), vertex_bytes);
        content_bytes_ += vertex_bytes;
      }
      user_vertices_ = user_vertices_buffer_.data();
    } else if (vertex_bytes > 0) {
      if (std::string n = WriteBuffer(Arg(e, f.vertex), Arg(e, f.vertex_offset), vertices,
                                      vertex_bytes, {}, "vertex");
          !n.empty()) {
        notes.push_back(std::move(n));
      }
    }
    for (std::string& n : notes) {
      notes_.push_back(absl::StrCat("seq ", e.seq, ": ", n));
    }
  }

  void* EntryPoint(CallId call) {
    const DD_D3DBUFCALLBACKS* b = driver_.buffer_callbacks();
    switch (call) {
      case CallId::kCanCreateD3DBuffer:
        return reinterpret_cast<void*>(b->CanCreateD3DBuffer);
      case CallId::kCreateD3DBuffer:
        return reinterpret_cast<void*>(b->CreateD3DBuffer);
      case CallId::kDestroyD3DBuffer:
        return reinterpret_cast<void*>(b->DestroyD3DBuffer);
      case CallId::kLockD3DBuffer:
        return reinterpret_cast<void*>(b->LockD3DBuffer);
      case CallId::kUnlockD3DBuffer:
        return reinterpret_cast<void*>(b->UnlockD3DBuffer);
      case CallId::kD3dDrawPrimitives2:
        return reinterpret_cast<void*>(driver_.hal_callbacks3()->DrawPrimitives2);
      default:
        return nullptr;
    }
  }

  std::string HandleText(uint64_t id) const {
    if (id == 0) return "NULL";
    if (id >= kUnknownBase) return "a handle the recording does not know";
    return std::string(plan_.handles->Token(id));
  }

  void Issue(const Event& e) {
    const CallMeta& m = CallMetaFor(e.call);
    const Dx6Fields f = FieldsOf(e.call);
    void* pfn = EntryPoint(e.call);
    if (pfn == nullptr) {
      FailInput(e, absl::StrCat(m.info->name, " is not an entry point of the DX6 driver"));
      return;
    }
    if (!PrepareHandles(e, m)) return;
    if (e.call == CallId::kD3dDrawPrimitives2) PrepareDrawPrimitives2(e, f);
    arena_.Reset();
    actual_.clear();
    unknown_.clear();
    absl::StatusOr<int64_t> ret = format::InvokeCall(e.call, pfn, e.args, env_);
    if (!ret.ok()) {
      FailInput(e, std::string(ret.status().message()));
      return;
    }
    const size_t before = divergences_.size();
    if (*ret != e.ret) {
      Diverge(e, absl::StrCat("ret ", RetText(e.call, e.ret)),
              absl::StrCat("ret ", RetText(e.call, *ret)));
    }
    CompareOutputs(e, m);
    if (divergences_.size() != before) return;
    if (e.call == CallId::kDestroyD3DBuffer && Arg(e, f.rval) == 0) Unbind(Arg(e, f.surface));
  }

  void CompareOutputs(const Event& e, const CallMeta& m) {
    const format::CallInfo& ci = *m.info;
    auto same_handle = [&](uint64_t rec, uint64_t act, const FieldInfo& f) {
      if (rec == act) return true;
      if (IsContextType(f) || rec == 0 || act < kUnknownBase ||
          act - kUnknownBase >= unknown_.size() || raw_of_id_.contains(rec)) {
        return false;
      }
      // A buffer the driver hands back for the first time: from now on that id is it.
      Bind(rec, unknown_[act - kUnknownBase]);
      return true;
    };
    std::optional<FieldDiff> d =
        FirstDifference(ci, e.args, actual_, format::FieldDir::kOut, same_handle);
    if (d.has_value()) {
      auto text = [&](uint64_t v) {
        return d->field->kind == FieldKind::kHandle ? HandleText(v) : OutputValueText(*d->field, v);
      };
      Diverge(e, absl::StrCat(d->name, "=", text(d->expected)),
              absl::StrCat(d->name, "=", text(d->actual)));
      return;
    }
    // Output pointers: their addresses differ by nature, whether there is one does not.
    absl::Span<const FieldInfo> fields = format::Fields(ci);
    for (size_t i = 0; i < fields.size() && i < actual_.size(); ++i) {
      if (fields[i].kind != FieldKind::kPtr || fields[i].dir != format::FieldDir::kOut) continue;
      if ((e.args[i] == 0) != (actual_[i] == 0)) {
        Diverge(e, absl::StrCat(fields[i].name, e.args[i] == 0 ? "=NULL" : " a pointer"),
                absl::StrCat(fields[i].name, actual_[i] == 0 ? "=NULL" : " a pointer"));
        return;
      }
    }
  }

  void Merge(ReplayResult* r) {
    r->dx6_calls = calls_;
    r->content.dx6_draws += draws_;
    r->content.dx6_bytes += content_bytes_;
    for (std::string& n : notes_) r->content.notes.push_back(std::move(n));
    if (bad_.has_value() && (r->outcome != Outcome::kBadInput || bad_->seq < r->bad_seq)) {
      r->outcome = Outcome::kBadInput;
      r->bad_seq = bad_->seq;
      r->bad_tid = bad_->tid;
      r->bad_call = bad_->call;
      r->bad_message = bad_->message;
    }
    for (Divergence& d : divergences_) r->divergences.push_back(std::move(d));
    std::stable_sort(r->divergences.begin(), r->divergences.end(),
                     [](const Divergence& a, const Divergence& b) { return a.seq < b.seq; });
    if (!options_.keep_going && r->divergences.size() > 1) r->divergences.resize(1);
    if (r->outcome != Outcome::kBadInput && !r->divergences.empty()) {
      r->outcome = Outcome::kDivergent;
    }
  }

  const Plan& plan_;
  const ReplayOptions& options_;
  std::unique_ptr<Dx6Driver> owned_;
  Dx6Driver& driver_;
  format::InvokeArena arena_;
  format::InvokeEnv env_;
  format::ArgVec actual_;
  std::vector<uint64_t> unknown_;  // raw values captured this call that no id names
  absl::flat_hash_map<uint64_t, uint64_t> raw_of_id_, id_of_raw_;
  std::vector<std::unique_ptr<char>> surfaces_;  // the runtime's surface objects
  uint32_t rstates_[256] = {};
  std::string user_vertices_buffer_;
  void* user_vertices_ = nullptr;
  std::vector<Divergence> divergences_;
  std::optional<BadInput> bad_;
  std::vector<std::string> notes_;
  uint64_t calls_ = 0, draws_ = 0, content_bytes_ = 0;
};

}  // namespace

std::string CheckDx6Event(const Event& e, const format::TokenTable& contents) {
  const format::CallInfo& ci = *format::GetCall(e.call);
  const absl::Span<const FieldInfo> fields = format::Fields(ci);
  if (e.args.empty() || fields.empty() || e.args[0] == 0) {
    return absl::StrFormat(
        "%s without its argument structure (%s is NULL): the DX6 driver reads it, and the DX6 "
        "runtime always passes one",
        ci.name, fields.empty() ? "?" : fields[0].name);
  }
  if (e.call != CallId::kD3dDrawPrimitives2) {
    if (e.content != 0) {
      return absl::StrFormat(
          "%s carries content (id %d), but it takes no bytes from the application (of the DX6 "
          "calls only D3dDrawPrimitives2 does, FORMAT.md §3.8)",
          ci.name, e.content);
    }
    return "";
  }
  const Dx6Fields f = FieldsOf(e.call);
  const uint64_t commands = Arg(e, f.command_length);
  const uint64_t vertices = VertexBytes(e, f);
  if (e.content == 0) {
    if (UserVertices(e, f) && vertices > format::kMaxContentBytes) {
      return absl::StrFormat(
          "USERMEMVERTICES with %d vertex bytes (dwVertexLength × the vertex size), more than "
          "the %d a call may hand over",
          vertices, format::kMaxContentBytes);
    }
    return "";
  }
  if (!contents.Has(e.content)) {
    return absl::StrFormat("content id %d is not defined by the trace (it defines %d)", e.content,
                           contents.size() - 1);
  }
  const uint64_t bytes = contents.Token(e.content).size();
  if (bytes != commands + vertices) {
    return absl::StrFormat(
        "its content has %d bytes, but dwCommandLength %d and %d vertex bytes (dwVertexLength × "
        "the vertex size) make %d",
        bytes, commands, vertices, commands + vertices);
  }
  return "";
}

bool SimulateDx6Handles(const Plan& plan, BadInput* bad) {
  // Surface id -> the seq that destroyed it (0 = live); absent = never seen.
  absl::flat_hash_map<uint64_t, uint64_t> surfaces;
  uint64_t previous_end = 0, previous_seq = 0;
  for (uint32_t i : plan.dx6) {
    const Event& e = plan.events[i];
    if (previous_end != 0 && e.seq < previous_end) {
      return FailAt(bad, e,
                    absl::StrFormat("starts before DX6-layer call seq %d returned (at %d); the "
                                    "DX6 runtime makes its calls one at a time",
                                    previous_seq, previous_end));
    }
    previous_seq = e.seq;
    previous_end = e.end;
    const Dx6Fields f = FieldsOf(e.call);
    auto token = [&](uint64_t id) { return std::string(plan.handles->Token(id)); };
    auto use = [&](int field, const char* name) -> std::string {
      const uint64_t id = Arg(e, field);
      if (id == 0) return "";
      auto it = surfaces.find(id);
      if (it == surfaces.end()) {
        return absl::StrFormat(
            "surface %s (%s) is used before a CreateD3DBuffer created it or a "
            "D3dDrawPrimitives2 handed it back",
            token(id), name);
      }
      if (it->second != 0) {
        return absl::StrFormat("surface %s (%s) is used after seq %d destroyed it", token(id), name,
                               it->second);
      }
      return "";
    };
    std::string problem;
    switch (e.call) {
      case CallId::kCreateD3DBuffer: {
        const uint64_t id = Arg(e, f.surface);
        if (id == 0) return FailAt(bad, e, "CreateD3DBuffer of a NULL surface (lpDDSurface)");
        if (auto it = surfaces.find(id); it != surfaces.end() && it->second == 0) {
          return FailAt(bad, e,
                        absl::StrFormat("surface %s (lpDDSurface) is created again while it "
                                        "lives",
                                        token(id)));
        }
        if (static_cast<int32_t>(Arg(e, f.rval)) >= 0) surfaces[id] = 0;
        break;
      }
      case CallId::kLockD3DBuffer:
      case CallId::kUnlockD3DBuffer:
        problem = use(f.surface, "lpDDSurface");
        break;
      case CallId::kDestroyD3DBuffer:
        problem = use(f.surface, "lpDDSurface");
        if (problem.empty()) surfaces[Arg(e, f.surface)] = e.seq;
        break;
      case CallId::kD3dDrawPrimitives2:
        problem = use(f.commands, "lpDDCommands");
        if (problem.empty() && !UserVertices(e, f)) problem = use(f.vertex, "lpDDVertex");
        if (problem.empty()) {
          for (int out : {f.commands_out, f.vertex_out}) {
            if (Arg(e, out) != 0) surfaces[Arg(e, out)] = 0;
          }
        }
        break;
      default:
        break;
    }
    if (!problem.empty()) return FailAt(bad, e, std::move(problem));
  }
  return true;
}

gpu::PlantedBug Dx6BugFromConfig(absl::string_view config, std::string* rest, bool* dx6_items) {
  gpu::PlantedBug bug = gpu::PlantedBug::kNone;
  *dx6_items = false;
  std::vector<std::string> kept;
  for (absl::string_view raw : absl::StrSplit(config, ';', absl::SkipWhitespace())) {
    absl::string_view item = absl::StripAsciiWhitespace(raw);
    absl::string_view value = item;
    if (!absl::ConsumePrefix(&value, "bug=")) {
      kept.emplace_back(item);
      continue;
    }
    std::vector<std::string> rules;
    for (absl::string_view r : absl::StrSplit(value, ',', absl::SkipWhitespace())) {
      r = absl::StripAsciiWhitespace(r);
      const rules::RuleInfo* info = rules::FindRule(r);
      if (info != nullptr && rules::HasPlantedBug(info->rule, rules::BugLayer::kDx6Driver)) {
        bug = gpu::PlantedBugFromRule(info->rule);
        *dx6_items = true;
      } else {
        rules.emplace_back(r);
      }
    }
    if (!rules.empty()) kept.push_back(absl::StrCat("bug=", absl::StrJoin(rules, ",")));
  }
  *rest = absl::StrJoin(kept, ";");
  return bug;
}

absl::Status ReplayDx6(const Plan& plan, const ReplayOptions& options, gpu::PlantedBug bug,
                       ReplayResult* result) {
  if (plan.dx6.empty()) return absl::OkStatus();
  std::unique_ptr<Dx6Driver> driver = options.dx6_driver ? options.dx6_driver(bug) : nullptr;
  if (driver == nullptr) {
    return absl::FailedPreconditionError(
        "the trace has DX6-layer calls and this replay has no DX6 driver to play them into "
        "(ReplayOptions::dx6_driver)");
  }
  Dx6Replayer(plan, options, std::move(driver)).Run(result);
  return absl::OkStatus();
}

}  // namespace cltrace::replay::internal
