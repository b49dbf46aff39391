#include "format/stable_names.h"

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "format/jsonl.h"
#include "format/normalize.h"

namespace cltrace::format {
namespace {

std::string Abbreviate(const std::string& kind) {
  static const auto* kShort = new absl::flat_hash_map<std::string, std::string>{
      {"commandlist", "cl"},
      {"device", "dev"},
      {"resource", "res"},
      {"shaderresourceview", "srv"},
      {"rendertargetview", "rtv"},
      {"depthstencilview", "dsv"},
      {"unorderedaccessview", "uav"},
      {"depthstencilstate", "dss"},
      {"rasterizerstate", "rs"},
      {"blendstate", "blend"},
      {"elementlayout", "layout"},
      {"corelayer", "core"},
  };
  auto it = kShort->find(kind);
  return it == kShort->end() ? kind : it->second;
}

}  // namespace

void ForEachField(Event* event, const std::function<void(const FieldInfo&, uint64_t*)>& visit) {
  const CallInfo* call = GetCall(event->call);
  if (call == nullptr) return;
  auto fields = Fields(*call);
  size_t tail = fields.size();
  for (size_t i = 0; i < fields.size() && i < event->args.size(); ++i) {
    visit(fields[i], &event->args[i]);
    if (fields[i].kind != FieldKind::kArray || event->args[i] == 0) continue;
    auto elems = ElementFields(fields[i]);
    for (uint64_t k = 0; k + 1 < event->args[i]; ++k) {
      for (const FieldInfo& ef : elems) {
        if (tail < event->args.size()) visit(ef, &event->args[tail]);
        ++tail;
      }
    }
  }
}

std::string HandleKind(const CallInfo& call, const FieldInfo& field) {
  // A deferred context is a device handle; the fields that name one as such say so.
  (void)call;
  if (absl::string_view(field.name) == "hDrvContext" ||
      absl::string_view(field.name) == "hDeferredContext")
    return "dc";
  auto types = HandleTypes();
  if (field.type_index >= types.size()) return "h";
  std::string type = types[field.type_index].name;
  const size_t h = type.find("_H");
  std::string kind = absl::AsciiStrToLower(h == std::string::npos ? type : type.substr(h + 2));
  if (absl::StartsWith(kind, "rt") && kind != "rtdevicehandle")
    return absl::StrCat("rt", Abbreviate(kind.substr(2)));
  return Abbreviate(kind);
}

void Normalizer::Rewrite(Event* e, const TokenTable& handles) {
  auto [t, new_thread] = threads_.try_emplace(e->tid, threads_.size() + 1);
  (void)new_thread;
  e->tid = t->second;
  // Times and annotations (which may name raw addresses, R5 notes) differ between two
  // recordings of one workload: the normalized form leaves them out.
  e->timestamp_ns = 0;
  e->annotation = 0;
  if (!CheckEventLayout(*e).ok()) return;
  const CallInfo* call = GetCall(e->call);
  ForEachField(e, [&](const FieldInfo& f, uint64_t* v) {
    if (*v == 0) return;
    if (f.kind == FieldKind::kHandle) {
      auto it = handle_ids_.find(*v);
      if (it == handle_ids_.end()) {
        const std::string kind = HandleKind(*call, f);
        const uint64_t n = ++per_kind_[kind];
        it = handle_ids_.emplace(*v, names_.Intern(absl::StrCat(kind, "#", n))).first;
      }
      (void)handles;
      *v = it->second;
    } else if (f.kind == FieldKind::kPtr && *v > 0xffffffffull) {
      auto [it, inserted] = addresses_.try_emplace(
          *v, kNormalizedAddressBase + addresses_.size() * kNormalizedAddressStride);
      (void)inserted;
      *v = it->second;
    }
  });
}

absl::string_view Normalizer::NameOf(uint64_t handle) const {
  auto it = handle_ids_.find(handle);
  return it == handle_ids_.end() ? absl::string_view() : names_.Token(it->second);
}

uint32_t Normalizer::ThreadOf(uint32_t tid) const {
  auto it = threads_.find(tid);
  return it == threads_.end() ? 0 : it->second;
}

}  // namespace cltrace::format
