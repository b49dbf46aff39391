// catalog_gen: the catalog parser (ddi_catalog.txt -> Catalog). The grammar is described at
// the top of ddi_catalog.txt; errors name the catalog line.
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "ddi/internal/catalog_gen_model.h"

namespace cltrace::catalog_gen {

[[noreturn]] void Die(int line, const std::string& msg) {
  std::fprintf(stderr, "ddi_catalog.txt:%d: %s\n", line, msg.c_str());
  std::exit(1);
}

bool IsNumber(const std::string& s) {
  if (s.empty()) return false;
  for (char ch : s)
    if (!std::isdigit(static_cast<unsigned char>(ch))) return false;
  return true;
}

namespace {

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
    } else if (t[i].rfind("as=", 0) == 0) {
      d.header_type = t[i].substr(3);
    } else if (t[i] == "alt") {
      d.alt = true;
    } else if (t[i].rfind("union=", 0) == 0) {
      d.union_tag = t[i].substr(6);
    } else if (t[i].rfind("count=", 0) == 0) {
      d.count = t[i].substr(6);
    } else {
      Die(line, "unexpected '" + t[i] + "'");
    }
  }
  return d;
}

// Dies on an attribute `allowed` does not name (a typo would otherwise be ignored).
void CheckKeys(const std::map<std::string, std::string>& a, const std::set<std::string>& allowed,
               const std::string& what, int line) {
  for (const auto& [key, value] : a) {
    if (!allowed.count(key)) Die(line, "unknown " + what + " attribute '" + key + "'");
  }
}

void ParseTable(Catalog& c, const std::vector<std::string>& toks, int line) {
  if (toks.size() < 2) Die(line, "table NAME layer=...");
  Table t;
  t.name = toks[1];
  t.line = line;
  auto a = Attrs(toks, 2, line);
  CheckKeys(a, {"layer", "prefix", "layout"}, "table", line);
  t.layer = a["layer"];
  t.own_layout = a["layout"] == "own";
  if (!a["layout"].empty() && !t.own_layout) Die(line, "table takes layout=own only");
  bool kernel_side = t.layer == "kmd" || t.layer == "dxgkrnl" || t.layer == "dx6";
  if (kernel_side != t.own_layout)
    Die(line, kernel_side ? "a kmd/dxgkrnl/dx6 table is the project's model: say layout=own"
                          : "a user-mode table has Microsoft's layout: no layout=own");
  if (a.count("prefix")) t.prefix = a["prefix"] == "none" ? "" : a["prefix"];
  if (t.layer.empty()) Die(line, "table needs layer=");
  c.tables.push_back(t);
  Type ty;
  ty.kind = Type::kTable;
  ty.name = t.name;
  ty.line = line;
  if (c.types.count(t.name)) Die(line, "duplicate type " + t.name);
  c.types[t.name] = ty;
}

// The per-call traits of a fn line: role=, content=, dc_rule=, group=.
void ParseFnTraits(Fn& f, std::map<std::string, std::string>& a, int line) {
  f.role = a["role"];
  if (f.role.empty()) Die(line, "fn needs role= (see the roles in the grammar above)");
  bool known = false;
  for (const RoleName& r : Roles()) known = known || f.role == r.name;
  if (!known || f.role == "none") Die(line, "unknown role '" + f.role + "'");
  f.content = a["content"];
  if (!f.content.empty() && f.content != "upload" && f.content != "map" && f.content != "unmap" &&
      f.content != "dp2" && f.content != "initial")
    Die(line, "content= is upload, map, unmap, dp2 or initial");
  if (a.count("dc_rule")) {
    const std::string& r = a["dc_rule"];
    if (r.size() < 2 || r[0] != 'R' || !IsNumber(r.substr(1))) Die(line, "dc_rule= is RN");
    f.dc_rule = std::atoi(r.c_str() + 1);
  }
  f.group = a["group"];
}

void ParseFn(Catalog& c, const std::vector<std::string>& toks, int line) {
  if (c.tables.empty()) Die(line, "fn outside a table");
  if (toks.size() < 2) Die(line, "fn NAME ...");
  Table& table = c.tables.back();
  Fn f;
  f.name = toks[1];
  f.line = line;
  f.table = table.name;
  auto a = Attrs(toks, 2, line);
  CheckKeys(a,
            {"ret", "domain", "tables", "typedef", "member", "role", "content", "dc_rule", "group"},
            "fn", line);
  f.ret = a.count("ret") ? a["ret"] : "void";
  f.domain = a.count("domain") ? a["domain"] : "";
  f.typedef_name = a["typedef"];
  if (f.typedef_name.empty()) {
    f.typedef_name = "PFNCLTRACE_";
    for (char ch : f.name)
      f.typedef_name += static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  }
  std::string tables = a["tables"];
  if (table.layer == "device") {
    if (tables.empty()) Die(line, "device-layer fn needs tables=IC|DC|IC,DC");
    f.ic = tables.find("IC") != std::string::npos;
    f.dc = tables.find("DC") != std::string::npos;
  } else if (!tables.empty()) {
    Die(line, "tables= is for device-layer functions only");
  }
  f.member = a.count("member") ? a["member"] : table.prefix + f.name;
  ParseFnTraits(f, a, line);
  for (const Fn& g : c.fns)
    if (g.name == f.name) Die(line, "duplicate fn " + f.name);
  c.fns.push_back(f);
  table.fns.push_back(static_cast<int>(c.fns.size()) - 1);
}

// scalar / handle / enum / flags / struct; returns the type's name.
std::string ParseType(Catalog& c, const std::vector<std::string>& toks, int line) {
  const std::string& kw = toks[0];
  Type t;
  t.name = toks.size() > 1 ? toks[1] : "";
  t.line = line;
  if (t.name.empty()) Die(line, "missing name");
  auto a = Attrs(toks, 2, line);
  if (kw == "scalar") {
    CheckKeys(a, {"ctype", "kind", "names", "win"}, "scalar", line);
    t.kind = Type::kScalar;
    t.ctype = a["ctype"];
    t.field_kind = a["kind"];
    t.names_enum = a["names"];
    if (t.field_kind.empty()) Die(line, "scalar needs kind=");
    if (t.ctype.empty()) Die(line, "scalar needs ctype=");
  } else if (kw == "handle") {
    CheckKeys(a, {"member", "repr", "class", "object", "created"}, "handle", line);
    t.kind = Type::kHandle;
    t.member = a.count("member") ? a["member"] : "pDrvPrivate";
    t.u32 = a["repr"] == "u32";
    t.bare = a["repr"] == "HANDLE";
    if (!a["repr"].empty() && !t.u32 && !t.bare) Die(line, "handle takes repr=u32|HANDLE");
    t.handle_class = a["class"];
    if (t.handle_class != "driver" && t.handle_class != "runtime" && t.handle_class != "kernel" &&
        t.handle_class != "adapter" && t.handle_class != "other")
      Die(line, "handle needs class=driver|runtime|kernel|adapter|other");
    t.object = a["object"];
    t.created = a["created"];
    t.handle_index = static_cast<int>(c.handle_names.size()) + 1;  // 0 = "no type"
    c.handle_names.push_back(t.name);
  } else if (kw == "enum" || kw == "flags") {
    CheckKeys(a, {"win"}, kw, line);
    if (!a["win"].empty() && a["win"] != "sdk") Die(line, kw + " takes win=sdk only");
    t.kind = Type::kEnum;
    t.flags = kw == "flags";
    t.enum_index = static_cast<int>(c.enum_names.size());
    c.enum_names.push_back(t.name);
  } else if (kw == "struct") {
    CheckKeys(a, {"win", "decl"}, "struct", line);
    if (!a["win"].empty() && a["win"] != "sdk") Die(line, "struct takes win=sdk only");
    if (!a["decl"].empty() && a["decl"] != "inline") Die(line, "struct takes decl=inline only");
    t.kind = Type::kStruct;
    t.inline_decl = a["decl"] == "inline";
  } else {
    Die(line, "unknown keyword '" + kw + "'");
  }
  t.win = a["win"];
  if (c.types.count(t.name)) Die(line, "duplicate type " + t.name);
  c.types[t.name] = t;
  c.type_order.push_back(t.name);
  return t.name;
}

// An indented line: a parameter of the open fn, a value of the open enum or a member of the
// open structure.
void ParseIndented(Catalog& c, const std::vector<std::string>& toks, int open_fn,
                   const std::string& open_type, int line) {
  if (open_fn >= 0) {
    Decl d = ParseDecl(toks, line);
    if (d.fixed_len) Die(line, "embedded arrays are for structure members only");
    if (d.alt || !d.union_tag.empty()) Die(line, "alt and union= are for structure members only");
    c.fns[open_fn].params.push_back(d);
  } else if (!open_type.empty() && c.types[open_type].kind == Type::kEnum) {
    EnumVal v;
    v.name = toks[0];
    if (toks.size() != 3 || toks[1] != "=") Die(line, "expected NAME = VALUE");
    v.value = toks[2];
    c.types[open_type].values.push_back(v);
  } else if (!open_type.empty() && c.types[open_type].kind == Type::kStruct) {
    Decl d = ParseDecl(toks, line);
    if (d.alt && d.union_tag.empty()) Die(line, "alt needs union=");
    c.types[open_type].members.push_back(d);
  } else {
    Die(line, "indented line outside enum/struct/fn");
  }
}

// Checks what refers to other declarations once everything is read.
void Resolve(const Catalog& c) {
  for (const auto& [name, t] : c.types) {
    if (t.kind != Type::kHandle) continue;
    if (!t.created.empty() && Lookup(c, t.created, t.line).kind != Type::kHandle)
      Die(t.line, "created= names a handle type");
  }
  for (const Fn& f : c.fns) {
    if (f.group.empty()) continue;
    bool found = false;
    for (const Fn& g : c.fns) found = found || g.name == f.group;
    if (!found) Die(f.line, "group= names no fn: " + f.group);
  }
}

}  // namespace

Catalog Parse(const std::string& path) {
  std::ifstream in(path);
  if (!in) Die(0, "cannot open " + path);
  Catalog c;
  std::string raw;
  int line = 0;
  std::string open_type;  // name of the enum/struct being filled
  int open_fn = -1;
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
    if (raw.rfind("decl ", 0) == 0) {  // verbatim C line among the type declarations
      c.type_order.push_back(std::string(1, kVerbatimMark) + raw.substr(5));
      continue;
    }
    auto hash = raw.find('#');
    auto toks = Split(hash == std::string::npos ? raw : raw.substr(0, hash));
    if (toks.empty()) continue;
    if (raw[0] == ' ' || raw[0] == '\t') {
      ParseIndented(c, toks, open_fn, open_type, line);
      continue;
    }
    open_type.clear();
    open_fn = -1;
    const std::string& kw = toks[0];
    if (kw == "catalog_version") {
      if (toks.size() != 2) Die(line, "catalog_version N");
      c.version = std::atoi(toks[1].c_str());
    } else if (kw == "table") {
      ParseTable(c, toks, line);
    } else if (kw == "opaque") {
      // A structure the header declares but does not define (pointed at, never recorded).
      if (toks.size() != 2) Die(line, "opaque NAME");
      if (c.types.count(toks[1])) Die(line, "duplicate type " + toks[1]);
      Type ty;
      ty.kind = Type::kTable;
      ty.name = toks[1];
      ty.line = line;
      c.types[ty.name] = ty;
      c.opaque.push_back(ty.name);
    } else if (kw == "fn") {
      ParseFn(c, toks, line);
      open_fn = static_cast<int>(c.fns.size()) - 1;
    } else {
      std::string name = ParseType(c, toks, line);
      Type::Kind kind = c.types[name].kind;
      if (kind == Type::kEnum || kind == Type::kStruct) open_type = name;
    }
  }
  if (c.version <= 0) Die(0, "catalog_version missing");
  Resolve(c);
  return c;
}

const Type& Lookup(const Catalog& c, const std::string& name, int line) {
  auto it = c.types.find(name);
  if (it == c.types.end()) Die(line, "unknown type '" + name + "'");
  return it->second;
}

}  // namespace cltrace::catalog_gen
