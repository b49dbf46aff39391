// catalog_gen: turns format/ddi_catalog.txt into generated sources (build time only).
//
//   catalog_gen CATALOG OUT_DIR
//
// writes into OUT_DIR/format/:
//   ddi_abi.h            the C ABI: handles, enums, argument structures, PFN typedefs, tables
//   call_ids.h           enum class CallId
//   catalog_data.inc     constant tables of format/catalog_types.h (included by catalog.cc)
//   call_codec_gen.h     typed per-call capture / invoke / apply-outputs declarations
//   call_codec_gen.inc   their definitions and the CallId dispatch table (call_codec.cc)
//   call_codec_roundtrip_test.inc  per-call capturing implementations and round-trip tests
//                        (included by call_codec_test.cc)
//   call_traits.h        compile-time per-call traits (PFN type, table, slot, codec functions)
//                        and per-table call lists, for generic thunks (recorder/)
// The grammar of the catalog is described at the top of ddi_catalog.txt. Errors name the
// catalog line and exit non-zero, which fails the build.
//
// Deliberately dependency-free (only the standard library): it runs before anything else is
// built and must stay trivially portable.
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
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
  int fixed_len = 0;  // `NAME[N]`: array embedded in a structure
  std::string count;  // element count expression: "4", "NumBuffers", "*pHSizes", "X/4", "p[1]"
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
  std::string name, layer, prefix = "pfn";
  std::vector<int> fns;
  int line = 0;
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
  std::vector<std::string> epilogue;  // `epilogue` lines copied after the tables
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

bool IsNumber(const std::string& s) {
  if (s.empty()) return false;
  for (char ch : s)
    if (!std::isdigit(static_cast<unsigned char>(ch))) return false;
  return true;
}

Decl ParseDecl(const std::vector<std::string>& t, int line) {
  Decl d;
  d.line = line;
  size_t i = 0;
  if (i < t.size() && (t[i] == "in" || t[i] == "out" || t[i] == "inout")) d.dir = t[i++];
  if (t.size() < i + 2) Die(line, "expected TYPE NAME");
  d.type = t[i++];
  if (!d.type.empty() && d.type.back() == '*') {
    d.pointer = true;
    d.type.pop_back();
  }
  d.name = t[i++];
  auto bracket = d.name.find('[');
  if (bracket != std::string::npos) {
    std::string n = d.name.substr(bracket + 1);
    if (n.empty() || n.back() != ']' || !IsNumber(n.substr(0, n.size() - 1)))
      Die(line, "expected NAME[N] with a number N");
    d.fixed_len = std::atoi(n.c_str());
    d.name = d.name.substr(0, bracket);
    if (d.fixed_len <= 0 || d.fixed_len > 4096) Die(line, "embedded array length out of range");
    if (d.pointer) Die(line, "an embedded array cannot be a pointer");
  }
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
  std::string open_type;  // name of the enum/struct being filled
  int open_fn = -1;
  int cur_table = -1;
  while (std::getline(in, raw)) {
    ++line;
    if (raw.rfind("c ", 0) == 0) {  // verbatim C line for the header prologue
      c.verbatim.push_back(raw.substr(2));
      continue;
    }
    if (raw.rfind("epilogue ", 0) == 0) {  // verbatim C line after the tables
      c.epilogue.push_back(raw.substr(9));
      continue;
    }
    auto hash = raw.find('#');
    std::string s = hash == std::string::npos ? raw : raw.substr(0, hash);
    auto toks = Split(s);
    if (toks.empty()) continue;
    bool indented = raw[0] == ' ' || raw[0] == '\t';
    if (indented) {
      if (open_fn >= 0) {
        Decl d = ParseDecl(toks, line);
        if (d.fixed_len) Die(line, "embedded arrays are for structure members only");
        c.fns[open_fn].params.push_back(d);
      } else if (!open_type.empty() && c.types[open_type].kind == Type::kEnum) {
        EnumVal v;
        v.name = toks[0];
        if (toks.size() != 3 || toks[1] != "=") Die(line, "expected NAME = VALUE");
        v.value = toks[2];
        c.types[open_type].values.push_back(v);
      } else if (!open_type.empty() && c.types[open_type].kind == Type::kStruct) {
        c.types[open_type].members.push_back(ParseDecl(toks, line));
      } else {
        Die(line, "indented line outside enum/struct/fn");
      }
      continue;
    }
    open_type.clear();
    open_fn = -1;
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
        for (char ch : f.name)
          f.typedef_name += static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      }
      std::string tables = a["tables"];
      if (c.tables[cur_table].layer == "device") {
        if (tables.empty()) Die(line, "device-layer fn needs tables=IC|DC|IC,DC");
        f.ic = tables.find("IC") != std::string::npos;
        f.dc = tables.find("DC") != std::string::npos;
      } else if (!tables.empty()) {
        Die(line, "tables= is for device-layer functions only");
      }
      f.member = a.count("member") ? a["member"] : c.tables[cur_table].prefix + f.name;
      for (const Fn& g : c.fns)
        if (g.name == f.name) Die(line, "duplicate fn " + f.name);
      c.fns.push_back(f);
      c.tables[cur_table].fns.push_back(static_cast<int>(c.fns.size()) - 1);
      open_fn = static_cast<int>(c.fns.size()) - 1;
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
      if (t.ctype.empty()) Die(line, "scalar needs ctype=");
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
    if (t.kind == Type::kEnum || t.kind == Type::kStruct) open_type = t.name;
  }
  if (c.version <= 0) Die(0, "catalog_version missing");
  return c;
}

const Type& Lookup(const Catalog& c, const std::string& name, int line) {
  auto it = c.types.find(name);
  if (it == c.types.end()) Die(line, "unknown type '" + name + "'");
  return it->second;
}

// ---- The call tree ----------------------------------------------------------------------
//
// Every call is turned into a tree of Nodes (one per parameter / member) that knows which
// flattened field(s) each node owns. The field tables, the C header and every codec emitter
// walk this one tree, so they cannot disagree about the field order.

struct Field {
  std::string name, kind, dir;
  bool required = false;
  int type_index = 0;
  int bits = 0;
  // kPresent: fixed fields of the pointed-to structure that follow this one (emitted as
  // FieldInfo::elem_count).
  int struct_fields = 0;
  // kArray:
  std::vector<Field> elems;
  bool embedded = false;
  int count_field = -1, capacity_field = -1, count_fixed = 0, count_divisor = 1,
      count_in_element = 0;
};

struct Node {
  enum Kind {
    kLeaf,       // by-value handle/scalar/enum: field (and field_out when inout)
    kScalarPtr,  // pointer to a handle/scalar/enum: in (field), out (field), inout (both)
    kOpaquePtr,  // pointer to a function table, or PVOID*: one kPtr field
    kStructPtr,  // pointer to an argument structure: kPresent field + members
    kStructVal,  // structure by value: members (names prefixed "name.")
    kArray,      // pointer array or embedded array: kArray field + element fields
  } kind;
  const Decl* decl = nullptr;
  const Type* type = nullptr;  // value / pointee / element type
  std::string name;            // field name (prefixed)
  std::string dir;             // effective direction: in / out / inout
  int field = -1;              // fixed-field index, or element position inside an array
  int field_out = -1;          // the exit value of an inout leaf / scalar pointer
  bool in_element = false;     // node lies inside an array element
  std::vector<Node> children;  // structure members / array element members
  // kArray:
  int array_ordinal = -1;
  std::string count_prefix;    // name prefix used to resolve the count expression
};

struct CallTree {
  const Fn* fn = nullptr;
  std::vector<Node> params;
  std::vector<Field> fields;         // fixed fields
  std::vector<const Node*> arrays;   // in fixed-field order
};

struct Builder {
  const Catalog& c;
  const Fn& f;
  CallTree* tree;

  Field Leaf(const Type& ty, const std::string& name, const std::string& dir, bool opt,
             int line) {
    Field fl;
    fl.name = name;
    fl.dir = dir;
    if (ty.kind == Type::kHandle) {
      fl.kind = "kHandle";
      fl.type_index = ty.handle_index;
      fl.required = !opt;
    } else if (ty.kind == Type::kEnum) {
      fl.kind = ty.flags ? "kFlags" : "kEnum";
      fl.type_index = ty.enum_index;
      fl.bits = 32;
    } else if (ty.kind == Type::kScalar) {
      fl.kind = ty.field_kind;
      if (!ty.names_enum.empty()) fl.type_index = Lookup(c, ty.names_enum, line).enum_index;
      static const std::map<std::string, int> kBits = {
          {"uint8_t", 8},   {"int8_t", 8},    {"uint16_t", 16}, {"int16_t", 16},
          {"uint32_t", 32}, {"int32_t", 32},  {"float", 32},    {"uint64_t", 64},
          {"int64_t", 64},  {"size_t", 64},   {"void*", 64}};
      auto b = kBits.find(ty.ctype);
      if (b == kBits.end()) Die(line, "unsupported ctype " + ty.ctype);
      fl.bits = b->second;
    } else {
      Die(line, "not a leaf type: " + ty.name);
    }
    return fl;
  }

  // Adds a field to the sink (fixed list or an array's element list); returns its index.
  int Add(std::vector<Field>* sink, Field fl) {
    sink->push_back(std::move(fl));
    return static_cast<int>(sink->size()) - 1;
  }

  Node Build(const Decl& d, const std::string& inherited, const std::string& prefix,
             std::vector<Field>* sink, bool in_element, int depth) {
    if (depth > 6) Die(d.line, "structure nesting too deep");
    std::string dir = d.dir.empty() ? inherited : d.dir;
    const Type& t = Lookup(c, d.type, d.line);
    Node n;
    n.decl = &d;
    n.type = &t;
    n.name = prefix + d.name;
    n.dir = dir.empty() ? "in" : dir;
    n.in_element = in_element;
    if (!d.count.empty() || d.fixed_len > 0) {  // array
      if (!d.pointer && d.fixed_len == 0) Die(d.line, "count= needs a pointer or NAME[N]");
      if (in_element) Die(d.line, f.name + ": arrays inside array elements are not supported");
      if (t.kind == Type::kTable) Die(d.line, "array of tables");
      n.kind = Node::kArray;
      n.count_prefix = prefix;
      Field arr;
      arr.name = n.name;
      arr.kind = "kArray";
      arr.dir = dir == "in" || dir.empty() ? "in" : "out";
      arr.embedded = d.fixed_len > 0;
      arr.count_fixed = d.fixed_len;
      // Elements of an inout array of structures are inputs unless marked `out`.
      std::string elem_dir = dir == "inout" ? "in" : arr.dir;
      if (t.kind == Type::kStruct) {
        for (const Decl& m : t.members)
          n.children.push_back(Build(m, elem_dir, "", &arr.elems, true, depth + 1));
      } else {
        Node e;
        e.kind = Node::kLeaf;
        e.decl = &d;
        e.type = &t;
        e.name = d.name;
        e.dir = arr.dir;
        e.in_element = true;
        e.field = Add(&arr.elems, Leaf(t, d.name, arr.dir, d.opt, d.line));
        n.children.push_back(e);
      }
      n.field = Add(sink, arr);
      return n;
    }
    if (d.pointer) {
      if (t.kind == Type::kStruct) {
        if (in_element) Die(d.line, "pointers to structures inside array elements");
        n.kind = Node::kStructPtr;
        Field p;
        p.name = n.name;
        p.kind = "kPresent";
        p.dir = "in";
        n.field = Add(sink, p);
        std::string def = dir == "out" ? "out" : "in";
        // Members of a parameter's structure keep their plain names (the documented JSON
        // names); a structure reached through a member pointer prefixes them ("pInfo.X").
        std::string member_prefix = depth == 0 ? "" : n.name + ".";
        for (const Decl& m : t.members)
          n.children.push_back(Build(m, def, member_prefix, sink, in_element, depth + 1));
        (*sink)[n.field].struct_fields = static_cast<int>(sink->size()) - n.field - 1;
        return n;
      }
      if (t.kind == Type::kTable || (t.kind == Type::kScalar && t.field_kind == "kPtr")) {
        n.kind = Node::kOpaquePtr;
        Field p;
        p.name = n.name;
        p.kind = "kPtr";
        p.dir = "in";
        p.bits = 64;
        n.field = Add(sink, p);
        return n;
      }
      if (in_element) Die(d.line, "pointers inside array elements");
      n.kind = Node::kScalarPtr;
      if (dir == "inout") {
        n.field = Add(sink, Leaf(t, n.name, "in", d.opt, d.line));
        Field o = Leaf(t, n.name + "Out", "out", d.opt, d.line);
        o.required = false;
        n.field_out = Add(sink, o);
      } else {
        n.field = Add(sink, Leaf(t, n.name, dir == "out" ? "out" : "in", d.opt, d.line));
      }
      return n;
    }
    if (t.kind == Type::kStruct) {
      n.kind = Node::kStructVal;
      std::string def = dir == "out" ? "out" : "in";
      for (const Decl& m : t.members)
        n.children.push_back(Build(m, def, n.name + ".", sink, in_element, depth + 1));
      return n;
    }
    if (t.kind == Type::kTable) Die(d.line, "table by value");
    n.kind = Node::kLeaf;
    if (dir == "inout") {
      n.field = Add(sink, Leaf(t, n.name, "in", d.opt, d.line));
      Field o = Leaf(t, n.name + "Out", "out", d.opt, d.line);
      o.required = false;
      n.field_out = Add(sink, o);
    } else {
      n.field = Add(sink, Leaf(t, n.name, dir == "out" ? "out" : "in", d.opt, d.line));
    }
    return n;
  }
};

int FindField(const CallTree& t, const std::string& name) {
  for (size_t i = 0; i < t.fields.size(); ++i)
    if (t.fields[i].name == name) return static_cast<int>(i);
  return -1;
}

void CollectArrays(const Node& n, std::vector<const Node*>* out) {
  if (n.kind == Node::kArray) {
    out->push_back(&n);
    return;
  }
  for (const Node& ch : n.children) CollectArrays(ch, out);
}

// Resolves an array's count= expression into its Field.
void ResolveCount(CallTree* t, const Node& n) {
  const Decl& d = *n.decl;
  Field& arr = t->fields[n.field];
  const std::string& e = d.count;
  auto field_named = [&](const std::string& name) {
    int i = FindField(*t, n.count_prefix + name);
    if (i < 0) i = FindField(*t, name);
    if (i < 0) Die(d.line, t->fn->name + ": count= names unknown field '" + name + "'");
    const Field& cf = t->fields[i];
    if (cf.kind != "kU32" && cf.kind != "kU64" && cf.kind != "kSize")
      Die(d.line, t->fn->name + ": count field '" + name + "' is not an unsigned integer");
    return i;
  };
  if (e.empty()) {
    if (!arr.embedded) Die(d.line, "array without count=");
  } else if (IsNumber(e)) {
    if (arr.embedded) Die(d.line, "embedded arrays take count=NAME only");
    arr.count_fixed = std::atoi(e.c_str());
    if (arr.count_fixed <= 0) Die(d.line, "count must be positive");
  } else if (e[0] == '*') {
    std::string p = e.substr(1);
    int out = FindField(*t, n.count_prefix + p + "Out");
    if (out < 0) out = FindField(*t, p + "Out");
    if (out >= 0) {
      arr.count_field = out;
      arr.capacity_field = field_named(p);
    } else {
      arr.count_field = field_named(p);
    }
  } else if (e.find('[') != std::string::npos) {
    std::string p = e.substr(0, e.find('['));
    std::string idx = e.substr(e.find('[') + 1);
    if (p != d.name || idx.empty() || idx.back() != ']' || !IsNumber(idx.substr(0, idx.size() - 1)))
      Die(d.line, "count=P[i] must index the array itself");
    arr.count_in_element = std::atoi(idx.c_str());
    if (arr.count_in_element <= 0 || arr.elems.size() != 1 || arr.elems[0].kind != "kU32")
      Die(d.line, "count=P[i] needs i > 0 and an array of UINT");
  } else if (e.find('/') != std::string::npos) {
    arr.count_field = field_named(e.substr(0, e.find('/')));
    std::string div = e.substr(e.find('/') + 1);
    if (!IsNumber(div) || std::atoi(div.c_str()) <= 0 || std::atoi(div.c_str()) > 255)
      Die(d.line, "count=NAME/D needs 0 < D < 256");
    arr.count_divisor = std::atoi(div.c_str());
  } else {
    arr.count_field = field_named(e);
  }
  if (arr.count_field >= 0) {
    const Field& cf = t->fields[arr.count_field];
    if (arr.dir == "in" && cf.dir != "in")
      Die(d.line, t->fn->name + ": input array counted by an output field");
    if (arr.dir == "out" && arr.capacity_field < 0 && cf.dir == "in")
      arr.capacity_field = arr.count_field;
  }
}

CallTree BuildTree(const Catalog& c, const Fn& f) {
  CallTree t;
  t.fn = &f;
  Builder b{c, f, &t};
  t.params.reserve(f.params.size());
  for (const Decl& p : f.params) t.params.push_back(b.Build(p, "in", "", &t.fields, false, 0));
  std::set<std::string> seen;
  for (const Field& x : t.fields)
    if (!seen.insert(x.name).second) Die(f.line, f.name + ": duplicate field name " + x.name);
  for (const Node& p : t.params) CollectArrays(p, &t.arrays);
  for (size_t k = 0; k < t.arrays.size(); ++k) {
    const_cast<Node*>(t.arrays[k])->array_ordinal = static_cast<int>(k);
    ResolveCount(&t, *t.arrays[k]);
  }
  return t;
}

std::vector<const Fn*> CallOrder(const Catalog& c) {
  std::vector<const Fn*> order;
  for (const Table& t : c.tables)
    for (int i : t.fns) order.push_back(&c.fns[i]);
  return order;
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
        if (t.ctype != t.name) o << "typedef " << t.ctype << " " << t.name << ";\n";
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
        for (const Decl& m : t.members) {
          o << "  " << CType(c, m, true) << " " << m.name;
          if (m.fixed_len) o << "[" << m.fixed_len << "]";
          o << ";\n";
        }
        o << "} " << t.name << ";\n";
        break;
      case Type::kTable:
        break;
    }
  }
  o << "\n/* Function-pointer typedefs. */\n";
  std::map<std::string, const Fn*> emitted;
  for (const Fn& f : c.fns) {
    // One typedef may serve several slots (e.g. PFND3D10DDI_SETSHADER); they must agree.
    auto it = emitted.find(f.typedef_name);
    if (it != emitted.end()) {
      const Fn& g = *it->second;
      bool same = g.ret == f.ret && g.params.size() == f.params.size();
      for (size_t i = 0; same && i < f.params.size(); ++i)
        same = CType(c, f.params[i], false) == CType(c, g.params[i], false);
      if (!same) Die(f.line, f.name + ": typedef " + f.typedef_name + " used with another shape");
      continue;
    }
    emitted[f.typedef_name] = &f;
    const std::string& ret = f.ret;
    if (ret != "void") Lookup(c, ret, f.line);
    o << "typedef " << ret << " (APIENTRY* " << f.typedef_name << ")(";
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
  for (const auto& v : c.epilogue) o << v << "\n";
  o << "\n#ifdef __cplusplus\n}  /* extern \"C\" */\n#endif\n\n#endif  /* CLTRACE_FORMAT_DDI_ABI_H_ */\n";
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
  for (const Fn* f : CallOrder(c)) o << "  k" << f->name << " = " << id++ << ",\n";
  o << "};\n\ninline constexpr int kCallIdCount = " << id << ";\n\n}  // namespace cltrace::format\n\n"
       "#endif  // CLTRACE_FORMAT_CALL_IDS_H_\n";
  return o.str();
}

// ---- Tables ---------------------------------------------------------------------------------

std::string Quote(const std::string& s) { return "\"" + s + "\""; }

std::string FieldLine(const Field& f, int elem_first, int elem_count) {
  if (f.kind == "kPresent") elem_count = f.struct_fields;
  std::ostringstream l;
  l << "    {" << Quote(f.name) << ", FieldKind::" << f.kind << ", FieldDir::"
    << (f.dir == "out" ? "kOut" : "kIn") << ", " << (f.required ? "true" : "false") << ", "
    << f.type_index << ", " << elem_first << ", " << elem_count;
  // The members added in catalog_version 2 (defaults: see catalog_types.h).
  l << ", " << f.count_field << ", " << f.count_fixed << ", " << f.count_divisor << ", "
    << f.count_in_element << ", " << f.capacity_field << ", " << (f.embedded ? "true" : "false")
    << ", " << f.bits << "},";
  return l.str();
}

std::string EmitData(const Catalog& c, const std::vector<CallTree>& trees) {
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
  const std::map<std::string, std::string> layers = {
      {"adapter", "kAdapter"}, {"device", "kDevice"},     {"dxgi", "kDxgi"},
      {"corelayer", "kCoreLayer"}, {"kernelcb", "kKernelCb"}, {"kmd", "kKmd"},
      {"dxgkrnl", "kDxgkrnl"}, {"dx6", "kDx6"},           {"api", "kApi"}};
  const std::map<std::string, std::string> domains = {
      {"IC", "kIC"}, {"DC", "kDC"}, {"FT", "kFT"}, {"FT!", "kFTAlways"},
      {"CB", "kCallback"}, {"KM", "kKernel"}, {"ANY", "kAny"}};
  o << "constexpr CallInfo kCalls[] = {\n    {\"\", \"\", \"\", \"\", Layer::kApi, Domain::kAny, "
       "ReturnKind::kVoid, kNoEnum, false, false, 0, 0},\n";
  for (size_t k = 0; k < trees.size(); ++k) {
    const Fn& f = *trees[k].fn;
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
      else if (rt.field_kind == "kU32") ret = "kU32";
      else Die(f.line, "return kind must be HRESULT, NTSTATUS, SIZE_T, BOOL or a 32-bit unsigned");
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

// ---- Typed call codec ---------------------------------------------------------------------
//
// For every call: CaptureEntry / CaptureExit (typed parameters -> args), Invoke (args ->
// typed parameters -> a call through the PFN) and ApplyOutputs (recorded outputs -> typed
// out-parameters), plus the CallId dispatch table and a round-trip test per call. The
// semantics are documented in format/call_codec.h; the type-independent work is done by
// format/call_codec_internal.h so the generated code stays a readable list of field moves.

std::string Ind(int n) { return std::string(2 * n, ' '); }

struct CodecGen {
  const Catalog& c;
  const CallTree& t;
  int temp = 0;

  std::string Temp(const std::string& base) { return base + std::to_string(++temp); }

  bool IsHandle(const Node& n) const { return n.type->kind == Type::kHandle; }
  bool IsPtrScalar(const Node& n) const {
    return n.type->kind == Type::kScalar && n.type->field_kind == "kPtr";
  }
  std::string HandleMember(const Node& n) const { return n.type->member; }
  static std::string Member(const std::string& acc, const Node& child, bool through_pointer) {
    return acc + (through_pointer ? "->" : ".") + child.decl->name;
  }
  // args index of a node's field: a fixed index, or an element position of array k.
  static std::string Index(const Node& n, int field, int array) {
    if (!n.in_element) return std::to_string(field);
    return "d.Element(" + std::to_string(array) + ", i, " + std::to_string(field) + ")";
  }
  // The array whose element a node lies in (for Index); -1 outside arrays.
  int cur_array = -1;

  // ---- capture ----
  // "(*p)" is only needed to reach a handle's member.
  static std::string Plain(const std::string& acc) {
    if (acc.size() > 3 && acc.compare(0, 2, "(*") == 0 && acc.back() == ')')
      return acc.substr(1, acc.size() - 2);
    return acc;
  }
  std::string SetLeaf(const Node& n, int field, const std::string& value_acc) const {
    if (!IsHandle(n))
      return "e.Set(" + std::to_string(field) + ", " + Plain(value_acc) + ");";
    if (IsHandle(n))
      return "e.SetHandle(" + std::to_string(field) + ", " + value_acc + "." + HandleMember(n) +
             ");";
    return "e.Set(" + std::to_string(field) + ", " + value_acc + ");";
  }

  // Entry phase: input fields.
  void CaptureIn(const Node& n, const std::string& acc, int ind, std::string* o) {
    switch (n.kind) {
      case Node::kLeaf:
        if (n.dir != "out") *o += Ind(ind) + SetLeaf(n, n.field, acc) + "\n";
        break;
      case Node::kScalarPtr:
        if (n.dir != "out")
          *o += Ind(ind) + "if (" + acc + " != nullptr) " + SetLeaf(n, n.field, "(*" + acc + ")") +
                "\n";
        break;
      case Node::kOpaquePtr:
        *o += Ind(ind) + "e.Set(" + std::to_string(n.field) + ", " + acc + ");\n";
        break;
      case Node::kStructPtr: {
        *o += Ind(ind) + "e.Set(" + std::to_string(n.field) + ", " + acc + " != nullptr);\n";
        std::string inner;
        for (const Node& ch : n.children) CaptureIn(ch, Member(acc, ch, true), ind + 1, &inner);
        if (!inner.empty()) *o += Ind(ind) + "if (" + acc + " != nullptr) {\n" + inner + Ind(ind) + "}\n";
        break;
      }
      case Node::kStructVal:
        for (const Node& ch : n.children) CaptureIn(ch, Member(acc, ch, false), ind, o);
        break;
      case Node::kArray:
        break;
    }
  }

  // Exit phase, part 1: output fields and the exit values of in/out fields.
  void CaptureOut(const Node& n, const std::string& acc, int ind, std::string* o) {
    switch (n.kind) {
      case Node::kLeaf:
        if (n.dir == "out") *o += Ind(ind) + SetLeaf(n, n.field, acc) + "\n";
        if (n.dir == "inout") *o += Ind(ind) + SetLeaf(n, n.field_out, acc) + "\n";
        break;
      case Node::kScalarPtr:
        if (n.dir == "out" || n.dir == "inout")
          *o += Ind(ind) + "if (" + acc + " != nullptr) " +
                SetLeaf(n, n.dir == "out" ? n.field : n.field_out, "(*" + acc + ")") + "\n";
        break;
      case Node::kStructPtr: {
        std::string inner;
        for (const Node& ch : n.children) CaptureOut(ch, Member(acc, ch, true), ind + 1, &inner);
        if (!inner.empty()) *o += Ind(ind) + "if (" + acc + " != nullptr) {\n" + inner + Ind(ind) + "}\n";
        break;
      }
      case Node::kStructVal:
        for (const Node& ch : n.children) CaptureOut(ch, Member(acc, ch, false), ind, o);
        break;
      default:
        break;
    }
  }

  // Element fields of one array element, appended in element-field order.
  void AppendElement(const Node& n, const std::string& acc, int ind, std::string* o) {
    switch (n.kind) {
      case Node::kLeaf:
        if (n.dir == "inout") Die(n.decl->line, "in/out members inside array elements");
        if (IsHandle(n))
          *o += Ind(ind) + "e.AppendHandle(" + acc + "." + HandleMember(n) + ");\n";
        else
          *o += Ind(ind) + "e.Append(" + acc + ");\n";
        break;
      case Node::kOpaquePtr:
        *o += Ind(ind) + "e.Append(" + acc + ");\n";
        break;
      case Node::kStructVal:
        for (const Node& ch : n.children) AppendElement(ch, Member(acc, ch, false), ind, o);
        break;
      default:
        Die(n.decl->line, "unsupported member inside an array element");
    }
  }

  // Exit phase, part 2: arrays in fixed-field order.
  void CaptureArrays(const Node& n, const std::string& acc, int ind, std::string* o) {
    switch (n.kind) {
      case Node::kStructPtr: {
        std::string inner;
        for (const Node& ch : n.children) CaptureArrays(ch, Member(acc, ch, true), ind + 1, &inner);
        if (!inner.empty()) *o += Ind(ind) + "if (" + acc + " != nullptr) {\n" + inner + Ind(ind) + "}\n";
        break;
      }
      case Node::kStructVal:
        for (const Node& ch : n.children) CaptureArrays(ch, Member(acc, ch, false), ind, o);
        break;
      case Node::kArray: {
        const Field& f = t.fields[n.field];
        std::string begin = f.count_in_element ? "e.BeginTokenArray(" : "e.BeginArray(";
        *o += Ind(ind) + "for (size_t i = 0, n = " + begin + std::to_string(n.field) + ", " + acc +
              "); i < n; ++i) {\n";
        const Node& first = n.children.front();
        if (n.children.size() == 1 && first.decl == n.decl) {
          AppendElement(first, acc + "[i]", ind + 1, o);
        } else {
          for (const Node& ch : n.children) AppendElement(ch, acc + "[i]." + ch.decl->name, ind + 1, o);
        }
        *o += Ind(ind) + "}\n";
        break;
      }
      default:
        break;
    }
  }

  // ---- invoke: rebuild the inputs ----
  bool HasDir(const Node& n, bool want_out) const {
    switch (n.kind) {
      case Node::kLeaf:
      case Node::kScalarPtr:
        return want_out ? n.dir != "in" : n.dir != "out";
      case Node::kOpaquePtr:
      case Node::kStructPtr:
        if (!want_out) return true;
        for (const Node& ch : n.children)
          if (HasDir(ch, want_out)) return true;
        return false;
      case Node::kStructVal:
      case Node::kArray:
        for (const Node& ch : n.children)
          if (HasDir(ch, want_out)) return true;
        return false;
    }
    return false;
  }

  std::string ReadLeaf(const Node& n, int field, const std::string& target) {
    std::string idx = Index(n, field, cur_array);
    if (IsHandle(n)) return "d.Handle(" + idx + ", &" + target + "." + HandleMember(n) + ");";
    if (IsPtrScalar(n)) {
      if (n.in_element)
        return target + " = d.ElementPointer(" + std::to_string(cur_array) + ", " +
               std::to_string(field) + ", " + idx + ");";
      return target + " = d.Pointer(" + idx + ");";
    }
    return Plain(target) + " = d.Get<" + n.type->name + ">(" + idx + ");";
  }

  // Fills the inputs of node n stored at lvalue `acc`.
  void FillIn(const Node& n, const std::string& acc, int ind, std::string* o) {
    switch (n.kind) {
      case Node::kLeaf:
        if (n.dir != "out") *o += Ind(ind) + ReadLeaf(n, n.field, acc) + "\n";
        break;
      case Node::kScalarPtr: {
        std::string v = Temp("value");
        *o += Ind(ind) + "{\n" + Ind(ind + 1) + n.type->name + "* " + v + " = d.New<" +
              n.type->name + ">();\n";
        if (n.dir != "out") *o += Ind(ind + 1) + ReadLeaf(n, n.field, "(*" + v + ")") + "\n";
        *o += Ind(ind + 1) + acc + " = " + v + ";\n" + Ind(ind) + "}\n";
        break;
      }
      case Node::kOpaquePtr:
        *o += Ind(ind) + acc + " = static_cast<" + CType(c, *n.decl, true) + ">(d.Pointer(" +
              std::to_string(n.field) + "));\n";
        break;
      case Node::kStructPtr: {
        std::string s = Temp("st");
        *o += Ind(ind) + "if (d.Present(" + std::to_string(n.field) + ")) {\n";
        *o += Ind(ind + 1) + n.type->name + "* " + s + " = d.New<" + n.type->name + ">();\n";
        for (const Node& ch : n.children) FillIn(ch, Member(s, ch, true), ind + 1, o);
        *o += Ind(ind + 1) + acc + " = " + s + ";\n" + Ind(ind) + "}\n";
        break;
      }
      case Node::kStructVal:
        for (const Node& ch : n.children) FillIn(ch, Member(acc, ch, false), ind, o);
        break;
      case Node::kArray:
        FillArray(n, acc, ind, o, /*declare=*/"");
        break;
    }
  }

  void FillElements(const Node& n, const std::string& elem, int ind, std::string* o) {
    const Node& first = n.children.front();
    if (n.children.size() == 1 && first.decl == n.decl) {
      FillIn(first, elem, ind, o);
    } else {
      for (const Node& ch : n.children) FillIn(ch, elem + "." + ch.decl->name, ind, o);
    }
  }

  // `declare` non-empty: a top-level array parameter declared here.
  void FillArray(const Node& n, const std::string& acc, int ind, std::string* o,
                 const std::string& declare) {
    const Field& f = t.fields[n.field];
    int k = n.array_ordinal;
    int saved = cur_array;
    cur_array = k;
    // Element inputs (all of an input array, the `in` members of an in/out array).
    const bool inputs = HasDir(n, false);
    if (f.embedded) {
      if (inputs) {
        std::string body;
        FillElements(n, acc + "[i]", ind + 1, &body);
        *o += Ind(ind) + "for (size_t i = 0; i < d.Length(" + std::to_string(k) + "); ++i) {\n" +
              body + Ind(ind) + "}\n";
      }
      cur_array = saved;
      return;
    }
    std::string target = declare.empty() ? Temp("array") : acc;
    *o += Ind(ind) + (declare.empty() ? n.type->name + "* " + target : declare) + " = d.NewArray<" +
          n.type->name + ">(" + std::to_string(k) + ");\n";
    if (inputs) {
      std::string body;
      FillElements(n, target + "[i]", ind + 2, &body);
      *o += Ind(ind) + "if (" + target + " != nullptr) {\n" + Ind(ind + 1) +
            "for (size_t i = 0; i < d.Length(" + std::to_string(k) + "); ++i) {\n" + body +
            Ind(ind + 1) + "}\n" + Ind(ind) + "}\n";
    }
    if (declare.empty()) *o += Ind(ind) + acc + " = " + target + ";\n";
    cur_array = saved;
  }

  // Declares and fills top-level parameter p.
  void DeclareParam(const Node& n, int ind, std::string* o) {
    const std::string& name = n.decl->name;
    switch (n.kind) {
      case Node::kLeaf:
        *o += Ind(ind) + n.type->name + " " + name + "{};\n";
        FillIn(n, name, ind, o);
        break;
      case Node::kScalarPtr:
        *o += Ind(ind) + n.type->name + "* " + name + " = d.New<" + n.type->name + ">();\n";
        if (n.dir != "out") *o += Ind(ind) + ReadLeaf(n, n.field, "(*" + name + ")") + "\n";
        break;
      case Node::kOpaquePtr:
        *o += Ind(ind) + CType(c, *n.decl, false) + " " + name + " = static_cast<" +
              CType(c, *n.decl, false) + ">(d.Pointer(" + std::to_string(n.field) + "));\n";
        break;
      case Node::kStructPtr: {
        *o += Ind(ind) + n.type->name + "* " + name + " = nullptr;\n";
        *o += Ind(ind) + "if (d.Present(" + std::to_string(n.field) + ")) {\n";
        *o += Ind(ind + 1) + name + " = d.New<" + n.type->name + ">();\n";
        for (const Node& ch : n.children) FillIn(ch, Member(name, ch, true), ind + 1, o);
        *o += Ind(ind) + "}\n";
        break;
      }
      case Node::kStructVal:
        *o += Ind(ind) + n.type->name + " " + name + "{};\n";
        FillIn(n, name, ind, o);
        break;
      case Node::kArray:
        FillArray(n, name, ind, o, n.type->name + "* " + name);
        break;
    }
  }

  // ---- apply: write the recorded outputs ----
  std::string WriteLeaf(const Node& n, int field, const std::string& target) {
    return ReadLeaf(n, field, target);
  }

  void ApplyOut(const Node& n, const std::string& acc, int ind, std::string* o) {
    switch (n.kind) {
      case Node::kLeaf:
        if (n.dir == "out") *o += Ind(ind) + WriteLeaf(n, n.field, acc) + "\n";
        if (n.dir == "inout") *o += Ind(ind) + WriteLeaf(n, n.field_out, acc) + "\n";
        break;
      case Node::kScalarPtr:
        if (n.dir != "in")
          *o += Ind(ind) + "if (" + acc + " != nullptr) " +
                WriteLeaf(n, n.dir == "out" ? n.field : n.field_out, "(*" + acc + ")") + "\n";
        break;
      case Node::kStructPtr: {
        std::string inner;
        for (const Node& ch : n.children) ApplyOut(ch, Member(acc, ch, true), ind + 1, &inner);
        if (!inner.empty()) *o += Ind(ind) + "if (" + acc + " != nullptr) {\n" + inner + Ind(ind) + "}\n";
        break;
      }
      case Node::kStructVal:
        for (const Node& ch : n.children) ApplyOut(ch, Member(acc, ch, false), ind, o);
        break;
      default:
        break;
    }
  }

  void ApplyElementOut(const Node& n, const std::string& acc, int ind, std::string* o) {
    switch (n.kind) {
      case Node::kLeaf:
        if (n.dir == "out") *o += Ind(ind) + WriteLeaf(n, n.field, acc) + "\n";
        break;
      case Node::kStructVal:
        for (const Node& ch : n.children) ApplyElementOut(ch, Member(acc, ch, false), ind, o);
        break;
      default:
        break;
    }
  }

  void ApplyArrays(const Node& n, const std::string& acc, int ind, std::string* o) {
    switch (n.kind) {
      case Node::kStructPtr: {
        std::string inner;
        for (const Node& ch : n.children) ApplyArrays(ch, Member(acc, ch, true), ind + 1, &inner);
        if (!inner.empty()) *o += Ind(ind) + "if (" + acc + " != nullptr) {\n" + inner + Ind(ind) + "}\n";
        break;
      }
      case Node::kStructVal:
        for (const Node& ch : n.children) ApplyArrays(ch, Member(acc, ch, false), ind, o);
        break;
      case Node::kArray: {
        if (!HasDir(n, true)) break;
        int k = n.array_ordinal;
        int saved = cur_array;
        cur_array = k;
        std::string body;
        const Node& first = n.children.front();
        if (n.children.size() == 1 && first.decl == n.decl)
          ApplyElementOut(first, acc + "[i]", ind + 2, &body);
        else
          for (const Node& ch : n.children)
            ApplyElementOut(ch, acc + "[i]." + ch.decl->name, ind + 2, &body);
        std::string ks = std::to_string(k);
        std::string cond = t.fields[n.field].embedded ? "" : acc + " != nullptr && ";
        *o += Ind(ind) + "if (" + cond + "d.OutputFits(" + ks + ", room" + ks + ")) {\n" +
              Ind(ind + 1) + "for (size_t i = 0; i < d.Length(" + ks + "); ++i) {\n" + body +
              Ind(ind + 1) + "}\n" + Ind(ind) + "}\n";
        cur_array = saved;
        break;
      }
      default:
        break;
    }
  }

  // C expression (and the pointers it goes through) of every fixed field's storage.
  struct Access {
    std::string expr;
    std::vector<std::string> guards;
  };
  void FieldAccess(const Node& n, const std::string& acc, std::vector<std::string> guards,
                   std::map<int, Access>* out) {
    switch (n.kind) {
      case Node::kLeaf:
      case Node::kOpaquePtr:
        (*out)[n.field] = {acc, guards};
        if (n.field_out >= 0) (*out)[n.field_out] = {acc, guards};
        break;
      case Node::kScalarPtr: {
        auto g = guards;
        g.push_back(acc);
        (*out)[n.field] = {"*" + acc, g};
        if (n.field_out >= 0) (*out)[n.field_out] = {"*" + acc, g};
        break;
      }
      case Node::kStructPtr: {
        auto g = guards;
        g.push_back(acc);
        for (const Node& ch : n.children) FieldAccess(ch, Member(acc, ch, true), g, out);
        break;
      }
      case Node::kStructVal:
        for (const Node& ch : n.children) FieldAccess(ch, Member(acc, ch, false), guards, out);
        break;
      case Node::kArray:
        break;
    }
  }

  // Room the caller gave the callee for each output array, from the typed parameters.
  std::string Rooms(int ind) {
    std::map<int, Access> access;
    for (const Node& p : t.params) FieldAccess(p, p.decl->name, {}, &access);
    std::string o;
    for (const Node* a : t.arrays) {
      if (!HasDir(*a, true)) continue;
      const Field& f = t.fields[a->field];
      std::string room;
      if (f.capacity_field >= 0) {
        const Access& ac = access.at(f.capacity_field);
        room = "static_cast<uint64_t>(" + ac.expr + ")";
        if (f.count_divisor != 1) room += " / " + std::to_string(f.count_divisor);
        std::string cond;
        for (const std::string& g : ac.guards) cond += (cond.empty() ? "" : " && ") + g + " != nullptr";
        if (!cond.empty()) room = "(" + cond + ") ? " + room + " : 0";
      } else {
        room = std::to_string(f.count_fixed);
      }
      o += Ind(ind) + "// Room for " + f.name + ", read before any output is written.\n" +
           Ind(ind) + "const uint64_t room" + std::to_string(a->array_ordinal) + " = " + room +
           ";\n";
    }
    return o;
  }
};

// Whether `name` occurs in `body` as an identifier.
bool Uses(const std::string& body, const std::string& name) {
  auto ident = [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; };
  for (size_t at = body.find(name); at != std::string::npos; at = body.find(name, at + 1)) {
    bool left = at == 0 || !ident(body[at - 1]);
    bool right = at + name.size() >= body.size() || !ident(body[at + name.size()]);
    if (left && right) return true;
  }
  return false;
}

// `head(piece, piece, ...)tail` wrapped at 100 columns with a 4-space continuation indent;
// `indent` spaces precede the head.
std::string WrapList(int indent, const std::string& head, const std::vector<std::string>& pieces,
                     const std::string& tail) {
  std::string out = std::string(indent, ' ') + head;
  size_t width = out.size();
  const std::string cont(indent + 4, ' ');
  for (size_t i = 0; i < pieces.size(); ++i) {
    std::string piece = pieces[i] + (i + 1 < pieces.size() ? "," : ")" + tail);
    if (i > 0 && width + 1 + piece.size() > 100) {
      out += "\n" + cont;
      width = cont.size();
    } else if (i > 0) {
      out += " ";
      ++width;
    } else if (width + piece.size() > 100) {
      out += "\n" + cont;
      width = cont.size();
    }
    out += piece;
    width += piece.size();
  }
  if (pieces.empty()) out += ")" + tail;
  return out;
}

// "TYPE name" per parameter; parameters the body does not use are written /*name*/.
std::vector<std::string> ParamDecls(const Catalog& c, const Fn& f, const std::string& body,
                                    bool all_used) {
  std::vector<std::string> out;
  for (const Decl& p : f.params) {
    bool used = all_used || Uses(body, p.name);
    out.push_back(CType(c, p, false) + " " + (used ? p.name : "/*" + p.name + "*/"));
  }
  return out;
}

std::vector<std::string> Concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::vector<std::string> ArgNames(const Fn& f) {
  std::vector<std::string> out;
  for (const Decl& p : f.params) out.push_back(p.name);
  return out;
}

std::string CaptureSignature(const Catalog& c, const Fn& f, const std::string& which,
                             const std::string& body, bool all_used, const std::string& tail) {
  return WrapList(0, "void Capture" + which + f.name + "(",
                  Concat({"ArgVec* args", "HandleIdFn handle_id"}, ParamDecls(c, f, body, all_used)),
                  tail);
}

std::string InvokeSignature(const Fn& f, const std::string& tail) {
  return WrapList(0, "absl::StatusOr<int64_t> Invoke" + f.name + "(",
                  {f.typedef_name + " pfn", "absl::Span<const uint64_t> args",
                   "const InvokeEnv& env"},
                  tail);
}

std::string ApplySignature(const Catalog& c, const Fn& f, const std::string& body,
                           bool all_used, const std::string& tail) {
  return WrapList(0, "absl::Status ApplyOutputs" + f.name + "(",
                  Concat({"absl::Span<const uint64_t> args", "const InvokeEnv& env"},
                         ParamDecls(c, f, body, all_used)),
                  tail);
}

std::string FieldSummary(const CallTree& t) {
  std::string s = "// Fields:";
  size_t width = s.size();
  for (size_t i = 0; i < t.fields.size(); ++i) {
    const Field& f = t.fields[i];
    std::string piece = " [" + std::to_string(i) + "] " + f.name;
    if (f.kind == "kArray") piece += "[]";
    if (f.dir == "out") piece += " (out)";
    if (width + piece.size() > 100) {
      s += "\n//        ";
      width = 10;
    }
    s += piece;
    width += piece.size();
  }
  return s;
}

std::string CallBanner(const CallTree& t, const Table& tab) {
  const Fn& f = *t.fn;
  std::string s = "// ---- " + f.name + " ";
  s += std::string(s.size() < 98 ? 98 - s.size() : 2, '-') + "\n";
  std::string where = "// " + tab.name + "::" + f.member + " (" + f.typedef_name + "),";
  std::string layer = "layer " + tab.layer + ".";
  s += where + (where.size() + 1 + layer.size() > 100 ? "\n// " : " ") + layer + "\n";
  s += FieldSummary(t) + "\n";
  return s;
}

const Table& TableOf(const Catalog& c, const Fn& f) {
  for (const Table& t : c.tables)
    if (t.name == f.table) return t;
  Die(f.line, "no table");
}

void CheckParamNames(const Fn& f) {
  static const std::set<std::string> kReserved = {
      "args", "env", "e", "d", "i", "n", "call", "layout", "pfn", "handle_id", "result",
      "s"};
  for (const Decl& p : f.params)
    if (kReserved.count(p.name) || p.name.rfind("room", 0) == 0)
      Die(p.line, f.name + ": parameter name '" + p.name + "' clashes with the codec's locals");
}

std::string EmitCodecHeader(const Catalog& c, const std::vector<CallTree>& trees) {
  std::ostringstream o;
  o << "// Generated by format/internal/catalog_gen from format/ddi_catalog.txt. Do not edit.\n"
       "// Typed per-call codec; see format/call_codec.h (which includes this file) for the\n"
       "// meaning of CaptureEntry*/CaptureExit*/Invoke*/ApplyOutputs*.\n"
       "#ifndef CLTRACE_FORMAT_CALL_CODEC_GEN_H_\n#define CLTRACE_FORMAT_CALL_CODEC_GEN_H_\n\n"
       "namespace cltrace::format {\n\n";
  for (const CallTree& t : trees) {
    const Fn& f = *t.fn;
    o << CallBanner(t, TableOf(c, f));
    o << CaptureSignature(c, f, "Entry", "", true, ";") << "\n";
    o << CaptureSignature(c, f, "Exit", "", true, ";") << "\n";
    o << InvokeSignature(f, ";") << "\n";
    o << ApplySignature(c, f, "", true, ";") << "\n\n";
  }
  o << "}  // namespace cltrace::format\n\n#endif  // CLTRACE_FORMAT_CALL_CODEC_GEN_H_\n";
  return o.str();
}

std::string EmitCodecImpl(const Catalog& c, const std::vector<CallTree>& trees) {
  std::ostringstream o;
  o << "// Generated by format/internal/catalog_gen from format/ddi_catalog.txt. Do not edit.\n"
       "// Included by format/call_codec.cc. Each call's functions read top to bottom in field\n"
       "// order; e.Set(i, ...) / d.Get<T>(i) name the fixed field index i of Fields(call).\n\n"
       "namespace cltrace::format {\n\n";
  for (const CallTree& t : trees) {
    const Fn& f = *t.fn;
    CheckParamNames(f);
    CodecGen g{c, t};
    std::string id = "CallId::k" + f.name;
    o << CallBanner(t, TableOf(c, f));

    // CaptureEntry
    std::string body;
    for (const Node& p : t.params) g.CaptureIn(p, p.decl->name, 1, &body);
    o << CaptureSignature(c, f, "Entry", body, false, " {") << "\n"
      << "  codec_internal::ArgEncoder e(" << id << ", args, handle_id);\n"
      << "  e.BeginEntry();\n" << body << "}\n\n";

    // CaptureExit
    body.clear();
    for (const Node& p : t.params) g.CaptureOut(p, p.decl->name, 1, &body);
    for (const Node& p : t.params) g.CaptureArrays(p, p.decl->name, 1, &body);
    o << CaptureSignature(c, f, "Exit", body, false, " {") << "\n"
      << "  codec_internal::ArgEncoder e(" << id << ", args, handle_id);\n"
      << "  e.BeginExit();\n" << body << "}\n\n";

    // Invoke
    body.clear();
    for (const Node& p : t.params) g.DeclareParam(p, 1, &body);
    o << InvokeSignature(f, " {") << "\n"
      << "  const CallInfo& call = *GetCall(" << id << ");\n"
      << "  CLTRACE_RETURN_IF_ERROR(codec_internal::CheckEnv(call, env, /*needs_arena=*/true));\n"
      << "  CLTRACE_ASSIGN_OR_RETURN(const codec_internal::ArgLayout layout,\n"
      << "                           codec_internal::ComputeLayout(call, args));\n"
      << "  codec_internal::ArgDecoder d(call, args, env, layout);\n"
      << body << "  if (!d.ok()) return d.status();\n";
    const std::vector<std::string> names = ArgNames(f);
    const std::vector<std::string> capture_args =
        Concat({"env.actual", "env.handle_id"}, names);
    o << "  if (env.actual != nullptr) {\n"
      << WrapList(4, "CaptureEntry" + f.name + "(", capture_args, ";") << "\n  }\n";
    if (f.ret == "void")
      o << WrapList(2, "pfn(", names, ";") << "\n";
    else
      o << WrapList(2, "const " + f.ret + " result = pfn(", names, ";") << "\n";
    o << "  if (env.actual != nullptr) {\n"
      << WrapList(4, "CaptureExit" + f.name + "(", capture_args, ";") << "\n  }\n";
    o << (f.ret == "void" ? "  return int64_t{0};\n" : "  return static_cast<int64_t>(result);\n")
      << "}\n\n";

    // ApplyOutputs
    body = g.Rooms(1);
    for (const Node& p : t.params) g.ApplyOut(p, p.decl->name, 1, &body);
    for (const Node& p : t.params) g.ApplyArrays(p, p.decl->name, 1, &body);
    o << ApplySignature(c, f, body, false, " {") << "\n"
      << "  const CallInfo& call = *GetCall(" << id << ");\n"
      << "  CLTRACE_RETURN_IF_ERROR(codec_internal::CheckEnv(call, env, /*needs_arena=*/false));\n"
      << "  CLTRACE_ASSIGN_OR_RETURN(const codec_internal::ArgLayout layout,\n"
      << "                           codec_internal::ComputeLayout(call, args));\n"
      << "  codec_internal::ArgDecoder d(call, args, env, layout);\n"
      << body << "  return d.status();\n}\n\n";
  }
  // Dispatch table.
  o << "namespace codec_internal {\nnamespace {\n\n"
       "using InvokeThunk = absl::StatusOr<int64_t> (*)(void* pfn, absl::Span<const uint64_t> args,\n"
       "                                                const InvokeEnv& env);\n\n";
  for (const CallTree& t : trees) {
    const Fn& f = *t.fn;
    o << WrapList(0, "absl::StatusOr<int64_t> Thunk" + f.name + "(",
                  {"void* pfn", "absl::Span<const uint64_t> args", "const InvokeEnv& env"}, " {")
      << "\n"
      << WrapList(2, "return Invoke" + f.name + "(",
                  {"reinterpret_cast<" + f.typedef_name + ">(pfn)", "args", "env"}, ";")
      << "\n}\n";
  }
  o << "\n}  // namespace\n\n// Indexed by CallId; entry 0 (kInvalid) is never called.\n"
       "constexpr InvokeThunk kInvokeThunks[kCallIdCount] = {\n    nullptr,\n";
  for (const CallTree& t : trees) o << "    &Thunk" << t.fn->name << ",\n";
  o << "};\n\n}  // namespace codec_internal\n}  // namespace cltrace::format\n";
  return o.str();
}

// Per call: a capturing implementation with the call's C signature (records what it is given
// and answers with the outputs of the args under test) and a round-trip test. The driver of
// the test (RoundTrip, State) is format/call_codec_test.cc.
std::string EmitCodecTest(const Catalog& c, const std::vector<CallTree>& trees) {
  std::ostringstream o;
  o << "// Generated by format/internal/catalog_gen from format/ddi_catalog.txt. Do not edit.\n"
       "// Included by format/call_codec_test.cc.\n\n";
  for (const CallTree& t : trees) {
    const Fn& f = *t.fn;
    const std::vector<std::string> names = ArgNames(f);
    const std::string ret = f.ret == "void" ? std::string("void") : f.ret;
    o << WrapList(0, ret + " APIENTRY Capturing" + f.name + "(", ParamDecls(c, f, "", true), " {")
      << "\n  RoundTripState& s = State();\n"
      << WrapList(2, "CaptureEntry" + f.name + "(", Concat({"&s.captured", "TestHandleId"}, names),
                  ";")
      << "\n"
      << WrapList(2, "s.apply_status = ApplyOutputs" + f.name + "(",
                  Concat({"s.expected", "s.env"}, names), ";")
      << "\n"
      << WrapList(2, "CaptureExit" + f.name + "(", Concat({"&s.captured", "TestHandleId"}, names),
                  ";")
      << "\n";
    if (f.ret != "void") o << "  return static_cast<" << f.ret << ">(s.ret);\n";
    o << "}\n\nTEST(CallCodecRoundTrip, " << f.name << ") {\n  RoundTrip(CallId::k" << f.name
      << ", reinterpret_cast<void*>(&Capturing" << f.name << "));\n}\n\n";
  }
  return o.str();
}

// ---- Per-call traits (compile-time, for generic thunks) ----------------------------------

std::string LayerEnumerator(const std::string& layer) {
  static const std::map<std::string, std::string> kNames = {
      {"adapter", "kAdapter"},     {"device", "kDevice"},     {"dxgi", "kDxgi"},
      {"corelayer", "kCoreLayer"}, {"kernelcb", "kKernelCb"}, {"kmd", "kKmd"},
      {"dxgkrnl", "kDxgkrnl"},     {"dx6", "kDx6"},           {"api", "kApi"}};
  auto it = kNames.find(layer);
  if (it == kNames.end()) Die(0, "unknown layer " + layer);
  return it->second;
}

bool IsFlat(const Catalog& c, const Fn& f) {
  for (const Decl& p : f.params) {
    if (p.pointer || !p.dir.empty() || p.fixed_len != 0) return false;
    const Type& t = Lookup(c, p.type, p.line);
    if (t.kind != Type::kScalar && t.kind != Type::kHandle && t.kind != Type::kEnum) return false;
  }
  return true;
}

// call_traits.h: for every call, its C function-pointer type, table, slot and typed codec
// functions as a CallTraits<CallId> specialisation, and for every table the list of its calls
// in slot order (an X-macro and TableTraits<Table>). The recorder builds one generic thunk per
// call from these; tests instantiate one case per catalog entry from the same lists.
std::string EmitCallTraits(const Catalog& c) {
  std::ostringstream o;
  o << "// Generated by format/internal/catalog_gen from format/ddi_catalog.txt. Do not edit.\n"
       "// Compile-time traits of every catalog call (see EmitCallTraits in catalog_gen.cc):\n"
       "//   CallTraits<CallId::kX>::Pfn / Table / kSlotOffset / kSlotIndex / kMember /\n"
       "//     kLayer / kFlat / CaptureEntry / CaptureExit / ApplyOutputs / Invoke\n"
       "//   CLTRACE_CALLS_<TABLE>(X)   X(Name) for every slot of TABLE, in slot order\n"
       "//   TableTraits<TABLE>::kName / kLayer / kSlotCount / kCalls[]\n"
       "#ifndef CLTRACE_FORMAT_CALL_TRAITS_H_\n#define CLTRACE_FORMAT_CALL_TRAITS_H_\n\n"
       "#include <cstddef>\n\n#include \"format/call_codec.h\"\n\n"
       "namespace cltrace::format {\n\n"
       "template <CallId kCall>\nstruct CallTraits;\n\ntemplate <typename TableT>\n"
       "struct TableTraits;\n\n";
  for (const Table& t : c.tables) {
    for (size_t slot = 0; slot < t.fns.size(); ++slot) {
      const Fn& f = c.fns[t.fns[slot]];
      o << "template <>\nstruct CallTraits<CallId::k" << f.name << "> {\n"
        << "  using Pfn = " << f.typedef_name << ";\n"
        << "  using Table = " << t.name << ";\n"
        << "  static constexpr CallId kId = CallId::k" << f.name << ";\n"
        << "  static constexpr Layer kLayer = Layer::" << LayerEnumerator(t.layer) << ";\n"
        << "  static constexpr size_t kSlotOffset = offsetof(" << t.name << ", " << f.member
        << ");\n"
        << "  static constexpr size_t kSlotIndex = " << slot << ";\n"
        << "  static constexpr const char* kName = \"" << f.name << "\";\n"
        << "  static constexpr const char* kMember = \"" << f.member << "\";\n"
        << "  // Every parameter is one by-value handle or scalar: the fixed fields are the\n"
        << "  // parameters in order and nothing is captured at exit.\n"
        << "  static constexpr bool kFlat = " << (IsFlat(c, f) ? "true" : "false") << ";\n"
        << "  static constexpr auto CaptureEntry = &CaptureEntry" << f.name << ";\n"
        << "  static constexpr auto CaptureExit = &CaptureExit" << f.name << ";\n"
        << "  static constexpr auto ApplyOutputs = &ApplyOutputs" << f.name << ";\n"
        << "  static constexpr auto Invoke = &Invoke" << f.name << ";\n"
        << "};\n\n";
    }
  }
  for (const Table& t : c.tables) {
    o << "#define CLTRACE_CALLS_" << t.name << "(X)";
    for (int i : t.fns) o << " \\\n  X(" << c.fns[i].name << ")";
    o << "\n\n";
    o << "template <>\nstruct TableTraits<" << t.name << "> {\n"
      << "  static constexpr const char* kName = \"" << t.name << "\";\n"
      << "  static constexpr Layer kLayer = Layer::" << LayerEnumerator(t.layer) << ";\n"
      << "  static constexpr size_t kSlotCount = " << t.fns.size() << ";\n";
    if (!t.fns.empty()) {
      o << "  static constexpr CallId kCalls[kSlotCount] = {";
      for (size_t i = 0; i < t.fns.size(); ++i)
        o << (i % 3 == 0 ? "\n      " : " ") << "CallId::k" << c.fns[t.fns[i]].name << ",";
      o << "\n  };\n";
      o << "  static_assert(sizeof(" << t.name << ") == kSlotCount * sizeof(void*));\n";
    }
    o << "};\n\n";
  }
  o << "}  // namespace cltrace::format\n\n#endif  // CLTRACE_FORMAT_CALL_TRAITS_H_\n";
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
  std::vector<CallTree> trees;
  for (const Fn* f : CallOrder(c)) trees.push_back(BuildTree(c, *f));
  std::string out = argv[2];
  Write(out + "/format/ddi_abi.h", EmitHeader(c));
  Write(out + "/format/call_ids.h", EmitCallIds(c));
  Write(out + "/format/catalog_data.inc", EmitData(c, trees));
  Write(out + "/format/call_codec_gen.h", EmitCodecHeader(c, trees));
  Write(out + "/format/call_codec_gen.inc", EmitCodecImpl(c, trees));
  Write(out + "/format/call_codec_roundtrip_test.inc", EmitCodecTest(c, trees));
  Write(out + "/format/call_traits.h", EmitCallTraits(c));
  return 0;
}
