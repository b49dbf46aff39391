// catalog_gen: the call tree (Catalog + Fn -> CallTree), i.e. the flattened fields of every
// call that the field tables and the codec emitters share.
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ddi/internal/catalog_gen_model.h"

namespace cltrace::catalog_gen {

namespace {

struct Builder {
  const Catalog& c;
  const Fn& f;
  CallTree* tree;

  Field Leaf(const Type& ty, const std::string& name, const std::string& dir, bool opt, int line) {
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
          {"uint8_t", 8},   {"int8_t", 8},    {"char", 8},     {"uint16_t", 16},
          {"int16_t", 16},  {"uint32_t", 32}, {"int32_t", 32}, {"float", 32},
          {"uint64_t", 64}, {"int64_t", 64},  {"size_t", 64},  {"void*", 64}};
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

  // The field(s) of a scalar (by value or through a pointer) named n->name: one, or for an
  // `inout` scalar an input and an optional "<name>Out" output.
  void AddScalar(const Decl& d, const Type& t, const std::string& dir, std::vector<Field>* sink,
                 Node* n) {
    if (dir == "inout") {
      n->field = Add(sink, Leaf(t, n->name, "in", d.opt, d.line));
      Field o = Leaf(t, n->name + "Out", "out", d.opt, d.line);
      o.required = false;
      n->field_out = Add(sink, o);
    } else {
      n->field = Add(sink, Leaf(t, n->name, dir == "out" ? "out" : "in", d.opt, d.line));
    }
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
        for (const Decl& m : t.members) {
          if (!m.alt) n.children.push_back(Build(m, elem_dir, "", &arr.elems, true, depth + 1));
        }
      } else {
        Node e;
        e.kind = Node::kLeaf;
        e.decl = &d;
        e.type = &t;
        // A member named like its parameter (pData.pData) keeps the array's name, so that JSONL
        // reads it as an array of values.
        const std::string elem_name = prefix == d.name + "." ? n.name : d.name;
        e.name = elem_name;
        e.dir = arr.dir;
        e.in_element = true;
        e.field = Add(&arr.elems, Leaf(t, elem_name, arr.dir, d.opt, d.line));
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
        // A member named like its parameter (LockCb's pData->pData) is prefixed too.
        for (const Decl& m : t.members) {
          std::string member_prefix = depth == 0 && m.name != d.name ? "" : n.name + ".";
          if (!m.alt)
            n.children.push_back(Build(m, def, member_prefix, sink, in_element, depth + 1));
        }
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
      AddScalar(d, t, dir, sink, &n);
      return n;
    }
    if (t.kind == Type::kStruct) {
      n.kind = Node::kStructVal;
      std::string def = dir == "out" ? "out" : "in";
      for (const Decl& m : t.members) {
        if (!m.alt) n.children.push_back(Build(m, def, n.name + ".", sink, in_element, depth + 1));
      }
      return n;
    }
    if (t.kind == Type::kTable) Die(d.line, "table by value");
    n.kind = Node::kLeaf;
    AddScalar(d, t, dir, sink, &n);
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
  } else if (e.find('*') != std::string::npos) {
    // A product of two fields (MipLevels*ArraySize: one element per subresource).
    arr.count_field = field_named(e.substr(0, e.find('*')));
    arr.count_factor_field = field_named(e.substr(e.find('*') + 1));
    if (arr.dir != "in") Die(d.line, "count=A*B is for input arrays only");
    if (t->fields[arr.count_field].kind != "kU32" ||
        t->fields[arr.count_factor_field].kind != "kU32")
      Die(d.line, "count=A*B needs two 32-bit fields");
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
    if (arr.count_factor_field >= 0 && t->fields[arr.count_factor_field].dir != "in")
      Die(d.line, t->fn->name + ": input array counted by an output field");
    if (arr.dir == "out" && arr.capacity_field < 0 && cf.dir == "in")
      arr.capacity_field = arr.count_field;
  }
}

}  // namespace

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

}  // namespace cltrace::catalog_gen
