// catalog_gen: turns format/ddi_catalog.txt into generated sources (build time only).
//
//   catalog_gen CATALOG OUT_DIR
//
// writes OUT_DIR/format/ddi_abi.h (the C ABI: handles, enums, argument structures,
// function-pointer typedefs and tables), OUT_DIR/format/call_ids.h (enum class CallId) and
// OUT_DIR/format/catalog_data.inc (constant tables of format/catalog_types.h).
// The grammar of the catalog is described at the top of ddi_catalog.txt. Errors name the
// catalog line and exit non-zero, which fails the build.
//
// Deliberately dependency-free (only the standard library): it runs before anything else is
// built and must stay trivially portable.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

[[noreturn]] void Die(int line, const std::string& msg) {
  std::fprintf(stderr, "ddi_catalog.txt:%d: %s\n", line, msg.c_str());
  std::exit(1);
}

struct Decl {  // a parameter or a structure member
  std::string dir;  // "", "in", "out", "inout"
  std::string type;
  bool pointer = false;
  std::string name;
  std::string count;  // array element count expression: "4", "NumBuffers", "*pHSizes", "X/4"
  bool opt = false;   // handle may be NULL / absent in JSON
  int line = 0;
};

struct EnumVal {
  std::string name;
  std::string value;  // as written
};

struct Type {
  enum Kind { kScalar, kHandle, kEnum, kStruct, kTable } kind;
  std::string name;
  int line = 0;
  // scalar
  std::string ctype, field_kind, names_enum;
  // handle
  std::string member;
  bool u32 = false;
  int handle_index = -1;
  // enum
  bool flags = false;
  std::vector<EnumVal> values;
  int enum_index = -1;
  // struct
  std::vector<Decl> members;
};

struct Fn {
  std::string name, table, ret, domain, typedef_name, member;
  bool ic = false, dc = false;
  std::vector<Decl> params;
  int line = 0;
};

struct Table {
  std::string name, layer, prefix = "pfn", doc;
  std::vector<int> fns;
  int line = 0;
};

struct Field {
  std::string name, kind, dir;
  bool required = false;
  int type_index = 0;
  std::vector<Field> elems;  // for arrays
};

struct Catalog {
  int version = 0;
  std::map<std::string, Type> types;
  std::vector<std::string> type_order;  // declaration order (for C output)
  std::vector<Fn> fns;
  std::vector<Table> tables;
  std::vector<std::string> handle_names;
  std::vector<std::string> enum_names;
  std::vector<std::string> verbatim;  // `c` lines copied into the header prologue
};

std::vector<std::string> Split(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  std::string tok;
  while (in >> tok) out.push_back(tok);
  return out;
}

std::map<std::string, std::string> Attrs(const std::vector<std::string>& toks, size_t from,
                                         int line) {
  std::map<std::string, std::string> a;
  for (size_t i = from; i < toks.size(); ++i) {
    auto eq = toks[i].find('=');
    if (eq == std::string::npos) Die(line, "expected key=value, got '" + toks[i] + "'");
    a[toks[i].substr(0, eq)] = toks[i].substr(eq + 1);
  }
  return a;
}

Decl ParseDecl(const std::vector<std::string>& t, int line) {
  Decl d;
  d.line = line;
  size_t i = 0;
  if (i < t.size() && (t[i] == "in" || t[i] == "out" || t[i] == "inout")) d.dir = t[i++];
  if (i + 1 >= t.size()) Die(line, "expected TYPE NAME");
  d.type = t[i++];
  if (!d.type.empty() && d.type.back() == '*') {
    d.pointer = true;
    d.type.pop_back();
  }
  d.name = t[i++];
  for (; i < t.size(); ++i) {
    if (t[i] == "opt") {
      d.opt = true;
    } else if (t[i].rfind("count=", 0) == 0) {
      d.count = t[i].substr(6);
    } else {
      Die(line, "unexpected '" + t[i] + "'");
    }
  }
  return d;
}

Catalog Parse(const std::string& path) {
  std::ifstream in(path);
  if (!in) Die(0, "cannot open " + path);
  Catalog c;
  std::string raw;
  int line = 0;
  Type* open_type = nullptr;
  Fn* open_fn = nullptr;
  int cur_table = -1;
  while (std::getline(in, raw)) {
    ++line;
    if (raw.rfind("c ", 0) == 0) {  // verbatim C line for the header prologue
      c.verbatim.push_back(raw.substr(2));
      continue;
    }
    auto hash = raw.find('#');
    std::string s = hash == std::string::npos ? raw : raw.substr(0, hash);
    auto toks = Split(s);
    if (toks.empty()) continue;
    bool indented = raw[0] == ' ' || raw[0] == '\t';
    if (indented) {
      if (open_fn) {
        open_fn->params.push_back(ParseDecl(toks, line));
      } else if (open_type && open_type->kind == Type::kEnum) {
        EnumVal v;
        v.name = toks[0];
        if (toks.size() != 3 || toks[1] != "=") Die(line, "expected NAME = VALUE");
        v.value = toks[2];
        open_type->values.push_back(v);
      } else if (open_type && open_type->kind == Type::kStruct) {
        open_type->members.push_back(ParseDecl(toks, line));
      } else {
        Die(line, "indented line outside enum/struct/fn");
      }
      continue;
    }
    open_type = nullptr;
    open_fn = nullptr;
    const std::string& kw = toks[0];
    if (kw == "catalog_version") {
      if (toks.size() != 2) Die(line, "catalog_version N");
      c.version = std::atoi(toks[1].c_str());
      continue;
    }
    if (kw == "table") {
      if (toks.size() < 2) Die(line, "table NAME layer=...");
      Table t;
      t.name = toks[1];
      t.line = line;
      auto a = Attrs(toks, 2, line);
      t.layer = a["layer"];
      if (a.count("prefix")) t.prefix = a["prefix"] == "none" ? "" : a["prefix"];
      if (t.layer.empty()) Die(line, "table needs layer=");
      c.tables.push_back(t);
      cur_table = static_cast<int>(c.tables.size()) - 1;
      Type ty;
      ty.kind = Type::kTable;
      ty.name = t.name;
      ty.line = line;
      if (c.types.count(t.name)) Die(line, "duplicate type " + t.name);
      c.types[t.name] = ty;
      continue;
    }
    if (kw == "fn") {
      if (cur_table < 0) Die(line, "fn outside a table");
      if (toks.size() < 2) Die(line, "fn NAME ...");
      Fn f;
      f.name = toks[1];
      f.line = line;
      f.table = c.tables[cur_table].name;
      auto a = Attrs(toks, 2, line);
      f.ret = a.count("ret") ? a["ret"] : "void";
      f.domain = a.count("domain") ? a["domain"] : "";
      f.typedef_name = a["typedef"];
      if (f.typedef_name.empty()) {
        f.typedef_name = "PFNCLTRACE_";
        for (char ch : f.name) f.typedef_name += static_cast<char>(std::toupper(ch));
      }
      std::string tables = a["tables"];
      if (c.tables[cur_table].layer == "device") {
        if (tables.empty()) Die(line, "device-layer fn needs tables=IC|DC|IC,DC");
        f.ic = tables.find("IC") != std::string::npos;
        f.dc = tables.find("DC") != std::string::npos;
      }
      f.member = c.tables[cur_table].prefix + f.name;
      for (const Fn& g : c.fns)
        if (g.name == f.name) Die(line, "duplicate fn " + f.name);
      c.fns.push_back(f);
      c.tables[cur_table].fns.push_back(static_cast<int>(c.fns.size()) - 1);
      open_fn = &c.fns.back();
      continue;
    }
    Type t;
    t.name = toks.size() > 1 ? toks[1] : "";
    t.line = line;
    if (t.name.empty()) Die(line, "missing name");
    auto a = Attrs(toks, 2, line);
    if (kw == "scalar") {
      t.kind = Type::kScalar;
      t.ctype = a["ctype"];
      t.field_kind = a["kind"];
      t.names_enum = a["names"];
      if (t.field_kind.empty()) Die(line, "scalar needs kind=");
    } else if (kw == "handle") {
      t.kind = Type::kHandle;
      t.member = a.count("member") ? a["member"] : "pDrvPrivate";
      t.u32 = a["repr"] == "u32";
      t.handle_index = static_cast<int>(c.handle_names.size()) + 1;  // 0 = "no type"
      c.handle_names.push_back(t.name);
    } else if (kw == "enum" || kw == "flags") {
      t.kind = Type::kEnum;
      t.flags = kw == "flags";
      t.enum_index = static_cast<int>(c.enum_names.size());
      c.enum_names.push_back(t.name);
    } else if (kw == "struct") {
      t.kind = Type::kStruct;
    } else {
      Die(line, "unknown keyword '" + kw + "'");
    }
    if (c.types.count(t.name)) Die(line, "duplicate type " + t.name);
    c.types[t.name] = t;
    c.type_order.push_back(t.name);
    if (t.kind == Type::kEnum || t.kind == Type::kStruct) open_type = &c.types[t.name];
  }
  if (c.version <= 0) Die(0, "catalog_version missing");
  return c;
}

const Type& Lookup(const Catalog& c, const std::string& name, int line) {
  auto it = c.types.find(name);
  if (it == c.types.end()) Die(line, "unknown type '" + name + "'");
  return it->second;
}

// ---- Flattening -------------------------------------------------------------------------

std::string ScalarFieldKind(const Catalog& c, const Type& t, int* names, int line) {
  *names = 0;
  if (!t.names_enum.empty()) *names = Lookup(c, t.names_enum, line).enum_index;
  return t.field_kind;
}

void FlattenStruct(const Catalog& c, const Type& st, const std::string& dir_default,
                   std::vector<Field>* out, int depth, const std::string& ctx);

// Appends the fields of one declaration. `dir` is the direction applying to its value.
void FlattenDecl(const Catalog& c, const Decl& d, const std::string& inherited_dir,
                 std::vector<Field>* out, int depth, const std::string& ctx) {
  if (depth > 6) Die(d.line, "structure nesting too deep");
  std::string dir = d.dir.empty() ? inherited_dir : d.dir;
  const Type& t = Lookup(c, d.type, d.line);
  auto leaf = [&](const Type& ty, const std::string& name, const std::string& leaf_dir) {
    Field f;
    f.name = name;
    f.dir = leaf_dir;
    if (ty.kind == Type::kHandle) {
      f.kind = "kHandle";
      f.type_index = ty.handle_index;
      f.required = !d.opt;
    } else if (ty.kind == Type::kEnum) {
      f.kind = ty.flags ? "kFlags" : "kEnum";
      f.type_index = ty.enum_index;
    } else if (ty.kind == Type::kScalar) {
      int names = 0;
      f.kind = ScalarFieldKind(c, ty, &names, d.line);
      f.type_index = names;
    } else {
      Die(d.line, "not a leaf type: " + ty.name);
    }
    return f;
  };
  if (!d.count.empty()) {  // array
    if (!d.pointer) Die(d.line, "count= needs a pointer");
    Field arr;
    arr.name = d.name;
    arr.kind = "kArray";
    arr.dir = dir == "in" ? "in" : "out";
    if (t.kind == Type::kStruct) {
      FlattenStruct(c, t, arr.dir, &arr.elems, depth + 1, ctx);
    } else if (t.kind == Type::kTable) {
      Die(d.line, "array of tables");
    } else {
      Decl e = d;
      e.pointer = false;
      e.count.clear();
      e.dir = arr.dir;
      arr.elems.push_back(leaf(t, d.name, arr.dir));
    }
    out->push_back(arr);
    return;
  }
  if (d.pointer) {
    if (t.kind == Type::kStruct) {
      Field p;
      p.name = d.name;
      p.kind = "kPresent";
      p.dir = "in";
      out->push_back(p);
      FlattenStruct(c, t, dir.empty() ? "in" : dir, out, depth + 1, ctx);
      return;
    }
    if (t.kind == Type::kTable || (t.kind == Type::kScalar && t.field_kind == "kPtr")) {
      Field p;  // pointer value itself
      p.name = d.name;
      p.kind = "kPtr";
      p.dir = "in";
      out->push_back(p);
      return;
    }
    // pointer to a scalar/enum/handle
    if (dir == "inout") {
      out->push_back(leaf(t, d.name, "in"));
      out->push_back(leaf(t, d.name + "Out", "out"));
      out->back().required = false;
    } else if (dir == "out") {
      out->push_back(leaf(t, d.name, "out"));
    } else {
      out->push_back(leaf(t, d.name, "in"));
    }
    return;
  }
  if (t.kind == Type::kStruct) {  // by-value struct member
    FlattenStruct(c, t, dir.empty() ? "in" : dir, out, depth + 1, ctx);
    return;
  }
  if (t.kind == Type::kTable) Die(d.line, "table by value");
  out->push_back(leaf(t, d.name, dir == "out" ? "out" : "in"));
}

void FlattenStruct(const Catalog& c, const Type& st, const std::string& dir_default,
                   std::vector<Field>* out, int depth, const std::string& ctx) {
  // A struct reached through an `out` pointer has all-out members unless they say `in`;
  // one reached through `in` has all-in members unless they say `out`; `inout` lets each
  // member choose (default in).
  std::string def = dir_default == "out" ? "out" : "in";
  for (const Decl& m : st.members) FlattenDecl(c, m, def, out, depth, ctx);
}

std::vector<Field> Flatten(const Catalog& c, const Fn& f) {
  std::vector<Field> out;
  for (const Decl& p : f.params) FlattenDecl(c, p, "in", &out, 0, f.name);
  std::set<std::string> seen;
  for (const Field& x : out) {
    if (!seen.insert(x.name).second) Die(f.line, f.name + ": duplicate field name " + x.name);
  }
  return out;
}

// ---- C header ---------------------------------------------------------------------------

std::string CType(const Catalog& c, const Decl& d, bool in_struct) {
  const Type& t = Lookup(c, d.type, d.line);
  std::string base = t.kind == Type::kTable ? "struct " + t.name : t.name;
  if (!d.pointer) return base;
  bool is_const = (d.dir == "in" || (d.dir.empty() && !in_struct)) && t.kind != Type::kTable;
  if (t.kind == Type::kTable && d.dir == "in") is_const = true;
  return (is_const ? "const " : "") + base + "*";
}

std::string EmitHeader(const Catalog& c) {
  std::ostringstream o;
  o << "/* Generated by format/internal/catalog_gen from format/ddi_catalog.txt. Do not edit.\n"
       " *\n"
       " * cltrace's own C declarations of the Direct3D 11 user-mode DDI subset in scope, modelled\n"
       " * on d3d10umddi.h / d3dumddi.h / d3dkmddi.h (names kept verbatim, layouts our own).\n"
       " * Drivers, the runtime model, the recorder shim and the replayer all compile against it.\n"
       " * catalog_version "
    << c.version
    << " */\n#ifndef CLTRACE_FORMAT_DDI_ABI_H_\n#define CLTRACE_FORMAT_DDI_ABI_H_\n\n"
       "#include <stddef.h>\n#include <stdint.h>\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
    << "#define CLTRACE_CATALOG_VERSION " << c.version << "\n\n";
  for (const auto& v : c.verbatim) o << v << "\n";
  o << "\n";
  // Forward declarations of tables (structures point at them).
  for (const Table& t : c.tables) o << "struct " << t.name << ";\n";
  o << "\n";
  for (const std::string& name : c.type_order) {
    const Type& t = c.types.at(name);
    switch (t.kind) {
      case Type::kScalar:
        if (!t.ctype.empty() && t.ctype != t.name)
          o << "typedef " << t.ctype << " " << t.name << ";\n";
        break;
      case Type::kHandle:
        o << "typedef struct " << t.name << " { " << (t.u32 ? "uint32_t" : "void*") << " "
          << t.member << "; } " << t.name << ";\n";
        break;
      case Type::kEnum:
        o << "typedef uint32_t " << t.name << ";\n";
        for (const EnumVal& v : t.values)
          o << "#define " << v.name << " ((" << t.name << ")" << v.value << ")\n";
        break;
      case Type::kStruct:
        o << "typedef struct " << t.name << " {\n";
        for (const Decl& m : t.members) o << "  " << CType(c, m, true) << " " << m.name << ";\n";
        o << "} " << t.name << ";\n";
        break;
      case Type::kTable:
        break;
    }
  }
  o << "\n/* Function-pointer typedefs. */\n";
  std::set<std::string> emitted;
  for (const Fn& f : c.fns) {
    if (!emitted.insert(f.typedef_name).second) continue;
    const std::string& ret = f.ret;
    if (ret != "void") Lookup(c, ret, f.line);
    o << "typedef " << (ret == "void" ? "void" : ret) << " (APIENTRY* " << f.typedef_name << ")(";
    for (size_t i = 0; i < f.params.size(); ++i) {
      if (i) o << ", ";
      o << CType(c, f.params[i], false) << " " << f.params[i].name;
    }
    if (f.params.empty()) o << "void";
    o << ");\n";
  }
  o << "\n/* Tables. */\n";
  for (const Table& t : c.tables) {
    o << "typedef struct " << t.name << " {\n";
    for (int i : t.fns) o << "  " << c.fns[i].typedef_name << " " << c.fns[i].member << ";\n";
    if (t.fns.empty()) o << "  void* reserved_;  /* no entries in scope yet */\n";
    o << "} " << t.name << ";\n\n";
  }
  o << "#ifdef __cplusplus\n}  /* extern \"C\" */\n#endif\n\n#endif  /* CLTRACE_FORMAT_DDI_ABI_H_ */\n";
  return o.str();
}

// ---- Call ids -----------------------------------------------------------------------------

std::string EmitCallIds(const Catalog& c) {
  std::ostringstream o;
  o << "// Generated from format/ddi_catalog.txt. Do not edit.\n"
       "#ifndef CLTRACE_FORMAT_CALL_IDS_H_\n#define CLTRACE_FORMAT_CALL_IDS_H_\n\n"
       "#include <cstdint>\n\nnamespace cltrace::format {\n\n"
       "// Catalog order; 0 is no call. Stable only within one catalog_version: traces store\n"
       "// the names, readers remap by name.\nenum class CallId : uint16_t {\n  kInvalid = 0,\n";
  int id = 1;
  for (const Table& t : c.tables)
    for (int i : t.fns) o << "  k" << c.fns[i].name << " = " << id++ << ",\n";
  o << "};\n\ninline constexpr int kCallIdCount = " << id << ";\n\n}  // namespace cltrace::format\n\n"
       "#endif  // CLTRACE_FORMAT_CALL_IDS_H_\n";
  return o.str();
}

// ---- Tables ---------------------------------------------------------------------------------

std::string Quote(const std::string& s) { return "\"" + s + "\""; }

std::string EmitData(const Catalog& c) {
  std::ostringstream o;
  o << "// Generated from format/ddi_catalog.txt. Do not edit. Included by format/catalog.cc.\n\n";
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
    o << "    {" << Quote(t.name) << ", " << (t.flags ? "true" : "false") << ", "
      << ranges[i].first << ", " << ranges[i].second << "},\n";
  }
  o << "};\n\nconstexpr HandleTypeInfo kHandleTypes[] = {\n    {\"\", false},\n";
  for (const std::string& h : c.handle_names)
    o << "    {" << Quote(h) << ", " << (c.types.at(h).u32 ? "true" : "false") << "},\n";
  o << "};\n\n";
  // Fields: fixed fields of every call, then element fields appended after.
  std::ostringstream fields;
  int field_n = 0;
  std::vector<std::pair<int, int>> call_ranges;
  struct Pending {
    int index;
    std::vector<Field> elems;
  };
  std::vector<std::string> lines;
  auto field_line = [&](const Field& f, int elem_first, int elem_count) {
    std::ostringstream l;
    l << "    {" << Quote(f.name) << ", FieldKind::" << f.kind << ", FieldDir::"
      << (f.dir == "out" ? "kOut" : "kIn") << ", " << (f.required ? "true" : "false") << ", "
      << f.type_index << ", " << elem_first << ", " << elem_count << "},";
    return l.str();
  };
  std::vector<const Fn*> order;
  for (const Table& t : c.tables)
    for (int i : t.fns) order.push_back(&c.fns[i]);
  // Two passes: reserve fixed fields per call contiguously; element lists go to the end.
  std::vector<std::vector<Field>> flat;
  for (const Fn* f : order) flat.push_back(Flatten(c, *f));
  int total_fixed = 0;
  for (auto& v : flat) total_fixed += static_cast<int>(v.size());
  int elem_cursor = total_fixed;
  std::vector<std::string> elem_lines;
  // Element fields may themselves not contain arrays (checked).
  for (size_t k = 0; k < order.size(); ++k) {
    call_ranges.push_back({field_n, static_cast<int>(flat[k].size())});
    for (const Field& f : flat[k]) {
      if (f.kind == "kArray") {
        for (const Field& e : f.elems) {
          if (e.kind == "kArray") Die(order[k]->line, order[k]->name + ": nested arrays");
          elem_lines.push_back(field_line(e, 0, 0));
        }
        lines.push_back(field_line(f, elem_cursor, static_cast<int>(f.elems.size())));
        elem_cursor += static_cast<int>(f.elems.size());
      } else {
        lines.push_back(field_line(f, 0, 0));
      }
      ++field_n;
    }
  }
  o << "constexpr FieldInfo kFields[] = {\n";
  for (auto& l : lines) o << l << "\n";
  for (auto& l : elem_lines) o << l << "\n";
  if (lines.empty() && elem_lines.empty()) o << "    {\"\", FieldKind::kU32, FieldDir::kIn, false, 0, 0, 0},\n";
  o << "};\n\n";
  const std::map<std::string, std::string> layers = {
      {"adapter", "kAdapter"}, {"device", "kDevice"},     {"dxgi", "kDxgi"},
      {"corelayer", "kCoreLayer"}, {"kernelcb", "kKernelCb"}, {"kmd", "kKmd"},
      {"dxgkrnl", "kDxgkrnl"}, {"dx6", "kDx6"},           {"api", "kApi"}};
  const std::map<std::string, std::string> domains = {
      {"IC", "kIC"}, {"DC", "kDC"}, {"FT", "kFT"}, {"FT!", "kFTAlways"},
      {"CB", "kCallback"}, {"KM", "kKernel"}, {"ANY", "kAny"}};
  o << "constexpr CallInfo kCalls[] = {\n    {\"\", \"\", \"\", \"\", Layer::kApi, Domain::kAny, "
       "ReturnKind::kVoid, kNoEnum, false, false, 0, 0},\n";
  for (size_t k = 0; k < order.size(); ++k) {
    const Fn& f = *order[k];
    const Table* tab = nullptr;
    for (const Table& t : c.tables)
      if (t.name == f.table) tab = &t;
    auto lay = layers.find(tab->layer);
    if (lay == layers.end()) Die(tab->line, "unknown layer " + tab->layer);
    std::string dom = f.domain;
    if (dom.empty()) {
      if (tab->layer == "corelayer" || tab->layer == "kernelcb" || tab->layer == "dxgkrnl")
        dom = "CB";
      else if (tab->layer == "kmd")
        dom = "KM";
      else
        dom = "ANY";
    }
    auto d = domains.find(dom);
    if (d == domains.end()) Die(f.line, "unknown domain " + dom);
    std::string ret = "kVoid";
    std::string ret_enum = "kNoEnum";
    if (f.ret != "void") {
      const Type& rt = Lookup(c, f.ret, f.line);
      if (rt.kind != Type::kScalar) Die(f.line, "return type must be a scalar");
      if (rt.field_kind == "kHresult") ret = f.ret == "NTSTATUS" ? "kNtstatus" : "kHresult";
      else if (rt.field_kind == "kSize") ret = "kSize";
      else if (rt.field_kind == "kBool") ret = "kBool";
      else Die(f.line, "return kind must be HRESULT, NTSTATUS, SIZE_T or BOOL");
      if (!rt.names_enum.empty())
        ret_enum = std::to_string(Lookup(c, rt.names_enum, f.line).enum_index);
    }
    o << "    {" << Quote(f.name) << ", " << Quote(f.table) << ", " << Quote(f.member) << ", "
      << Quote(f.typedef_name) << ", Layer::" << lay->second << ", Domain::" << d->second
      << ", ReturnKind::" << ret << ", " << ret_enum << ", " << (f.ic ? "true" : "false") << ", "
      << (f.dc ? "true" : "false") << ", " << call_ranges[k].first << ", "
      << call_ranges[k].second << "},\n";
  }
  o << "};\n";
  return o.str();
}

void Write(const std::string& path, const std::string& text) {
  // Only rewrite when changed so dependants do not rebuild needlessly.
  std::ifstream old(path);
  if (old) {
    std::stringstream ss;
    ss << old.rdbuf();
    if (ss.str() == text) return;
  }
  std::ofstream out(path);
  out << text;
  if (!out) Die(0, "cannot write " + path);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: catalog_gen CATALOG OUT_DIR\n");
    return 2;
  }
  Catalog c = Parse(argv[1]);
  std::string out = argv[2];
  Write(out + "/format/ddi_abi.h", EmitHeader(c));
  Write(out + "/format/call_ids.h", EmitCallIds(c));
  Write(out + "/format/catalog_data.inc", EmitData(c));
  return 0;
}
