// catalog_gen: call_ids.h (enum class CallId) and catalog_data.inc (the constant tables of
// ddi/catalog_types.h: enums, handle types, fields, calls).
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "ddi/internal/catalog_gen_model.h"

namespace cltrace::catalog_gen {

std::string EmitCallIds(const Catalog& c) {
  std::ostringstream o;
  o << "// Generated from ddi/ddi_catalog.txt. Do not edit.\n"
       "#ifndef CLTRACE_DDI_CALL_IDS_H_\n#define CLTRACE_DDI_CALL_IDS_H_\n\n"
       "#include <cstdint>\n\nnamespace cltrace::ddi {\n\n"
       "// Catalog order; 0 is no call. Stable only within one catalog_version: traces store\n"
       "// the names, readers remap by name.\nenum class CallId : uint16_t {\n  kInvalid = 0,\n";
  int id = 1;
  for (const Fn* f : CallOrder(c)) o << "  k" << f->name << " = " << id++ << ",\n";
  o << "};\n\ninline constexpr int kCallIdCount = " << id
    << ";\n\n}  // namespace cltrace::ddi\n\n"
       "// The trace library and its users name the vocabulary format:: too.\n"
       "namespace cltrace::format {\nusing ::cltrace::ddi::CallId;\n"
       "using ::cltrace::ddi::kCallIdCount;\n}  // namespace cltrace::format\n\n"
       "#endif  // CLTRACE_DDI_CALL_IDS_H_\n";
  return o.str();
}

namespace {

std::string Quote(const std::string& s) { return "\"" + s + "\""; }

std::string FieldLine(const Field& f, int elem_first, int elem_count) {
  if (f.kind == "kPresent") elem_count = f.struct_fields;
  std::ostringstream l;
  l << "    {" << Quote(f.name) << ", FieldKind::" << f.kind
    << ", FieldDir::" << (f.dir == "out" ? "kOut" : "kIn") << ", "
    << (f.required ? "true" : "false") << ", " << f.type_index << ", " << elem_first << ", "
    << elem_count;
  // The members added in catalog_version 2 (defaults: see catalog_types.h).
  l << ", " << f.count_field << ", " << f.count_fixed << ", " << f.count_divisor << ", "
    << f.count_in_element << ", " << f.capacity_field << ", " << (f.embedded ? "true" : "false")
    << ", " << f.bits << ", " << f.count_factor_field << "},";
  return l.str();
}

}  // namespace

std::string DomainEnumerator(const Table& tab, const Fn& f) {
  static const std::map<std::string, std::string> kDomains = {
      {"IC", "kIC"},       {"DC", "kDC"},     {"FT", "kFT"},  {"FT!", "kFTAlways"},
      {"CB", "kCallback"}, {"KM", "kKernel"}, {"ANY", "kAny"}};
  std::string dom = f.domain;
  if (dom.empty()) {
    if (tab.layer == "corelayer" || tab.layer == "kernelcb" || tab.layer == "dxgkrnl")
      dom = "CB";
    else if (tab.layer == "kmd")
      dom = "KM";
    else
      dom = "ANY";
  }
  auto d = kDomains.find(dom);
  if (d == kDomains.end()) Die(f.line, "unknown domain " + dom);
  return d->second;
}

std::string ReturnEnumerator(const Catalog& c, const Fn& f) {
  if (f.ret == "void") return "kVoid";
  const Type& rt = Lookup(c, f.ret, f.line);
  if (rt.kind != Type::kScalar) Die(f.line, "return type must be a scalar");
  if (rt.field_kind == "kHresult") return f.ret == "NTSTATUS" ? "kNtstatus" : "kHresult";
  if (rt.field_kind == "kSize") return "kSize";
  if (rt.field_kind == "kBool") return "kBool";
  if (rt.field_kind == "kU32") return "kU32";
  Die(f.line, "return kind must be HRESULT, NTSTATUS, SIZE_T, BOOL or a 32-bit unsigned");
}

std::string LayerEnumerator(const Table& tab) {
  static const std::map<std::string, std::string> kLayers = {
      {"adapter", "kAdapter"},     {"device", "kDevice"},     {"dxgi", "kDxgi"},
      {"corelayer", "kCoreLayer"}, {"kernelcb", "kKernelCb"}, {"kmd", "kKmd"},
      {"dxgkrnl", "kDxgkrnl"},     {"dx6", "kDx6"},           {"api", "kApi"}};
  auto lay = kLayers.find(tab.layer);
  if (lay == kLayers.end()) Die(tab.line, "unknown layer " + tab.layer);
  return lay->second;
}

std::string EmitData(const Catalog& c, const std::vector<CallTree>& trees) {
  std::ostringstream o;
  o << "// Generated from ddi/ddi_catalog.txt. Do not edit. Included by ddi/catalog.cc.\n\n";
  // Enums (index 0..n-1).
  o << "constexpr EnumValueInfo kEnumValues[] = {\n";
  std::vector<std::pair<int, int>> ranges;
  int n = 0;
  for (const std::string& name : c.enum_names) {
    const Type& t = c.types.at(name);
    ranges.push_back({n, static_cast<int>(t.values.size())});
    for (const EnumVal& v : t.values) {
      o << "    {" << Quote(v.name) << ", static_cast<uint64_t>(static_cast<uint32_t>(" << v.value
        << "))},\n";
      ++n;
    }
  }
  if (n == 0) o << "    {\"\", 0},\n";
  o << "};\n\nconstexpr EnumInfo kEnums[] = {\n";
  for (size_t i = 0; i < c.enum_names.size(); ++i) {
    const Type& t = c.types.at(c.enum_names[i]);
    o << "    {" << Quote(t.name) << ", " << (t.flags ? "true" : "false") << ", " << ranges[i].first
      << ", " << ranges[i].second << "},\n";
  }
  o << "};\n\nconstexpr HandleTypeInfo kHandleTypes[] = {\n    {\"\", false},\n";
  for (const std::string& h : c.handle_names)
    o << "    {" << Quote(h) << ", " << (c.types.at(h).u32 ? "true" : "false") << "},\n";
  o << "};\n\n";
  // Fields: fixed fields of every call first (contiguous per call), element fields after.
  std::vector<std::string> lines, elem_lines;
  int total_fixed = 0;
  for (const CallTree& t : trees) total_fixed += static_cast<int>(t.fields.size());
  int elem_cursor = total_fixed;
  std::vector<std::pair<int, int>> call_ranges;
  int field_n = 0;
  for (const CallTree& t : trees) {
    call_ranges.push_back({field_n, static_cast<int>(t.fields.size())});
    for (const Field& f : t.fields) {
      if (f.kind == "kArray") {
        for (const Field& e : f.elems) elem_lines.push_back(FieldLine(e, 0, 0));
        lines.push_back(FieldLine(f, elem_cursor, static_cast<int>(f.elems.size())));
        elem_cursor += static_cast<int>(f.elems.size());
      } else {
        lines.push_back(FieldLine(f, 0, 0));
      }
      ++field_n;
    }
  }
  if (elem_cursor > 65535) Die(0, "too many fields for uint16_t indices");
  o << "constexpr FieldInfo kFields[] = {\n";
  for (auto& l : lines) o << l << "\n";
  for (auto& l : elem_lines) o << l << "\n";
  if (lines.empty() && elem_lines.empty())
    o << "    {\"\", FieldKind::kU32, FieldDir::kIn, false, 0, 0, 0},\n";
  o << "};\n\n";
  o << "constexpr CallInfo kCalls[] = {\n    {\"\", \"\", \"\", \"\", Layer::kApi, Domain::kAny, "
       "ReturnKind::kVoid, kNoEnum, false, false, 0, 0},\n";
  for (size_t k = 0; k < trees.size(); ++k) {
    const Fn& f = *trees[k].fn;
    const Table* tab = nullptr;
    for (const Table& t : c.tables)
      if (t.name == f.table) tab = &t;
    std::string ret = ReturnEnumerator(c, f);
    std::string ret_enum = "kNoEnum";
    if (f.ret != "void") {
      const Type& rt = Lookup(c, f.ret, f.line);
      if (!rt.names_enum.empty())
        ret_enum = std::to_string(Lookup(c, rt.names_enum, f.line).enum_index);
    }
    o << "    {" << Quote(f.name) << ", " << Quote(f.table) << ", " << Quote(f.member) << ", "
      << Quote(f.typedef_name) << ", Layer::" << LayerEnumerator(*tab)
      << ", Domain::" << DomainEnumerator(*tab, f) << ", ReturnKind::" << ret << ", " << ret_enum
      << ", " << (f.ic ? "true" : "false") << ", " << (f.dc ? "true" : "false") << ", "
      << call_ranges[k].first << ", " << call_ranges[k].second << "},\n";
  }
  o << "};\n";
  return o.str();
}

}  // namespace cltrace::catalog_gen
