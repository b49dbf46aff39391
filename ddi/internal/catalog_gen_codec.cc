// catalog_gen: call_codec_gen.inc, the definitions of the typed per-call codec and the CallId
// dispatch table.
#include <cstddef>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "ddi/internal/catalog_gen_model.h"

namespace cltrace::catalog_gen {

// ---- Typed call codec ---------------------------------------------------------------------
//
// For every call: CaptureEntry / CaptureExit (typed parameters -> args), Invoke (args ->
// typed parameters -> a call through the PFN) and ApplyOutputs (recorded outputs -> typed
// out-parameters), plus the CallId dispatch table and a round-trip test per call. The
// semantics are documented in format/call_codec.h; the type-independent work is done by
// format/call_codec_internal.h so the generated code stays a readable list of field moves.

namespace {

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
  // A handle node's raw value at `acc`: the handle struct's member, or `acc` itself where the
  // header declares the handle HANDLE (repr=HANDLE, or a member `as=HANDLE`).
  std::string HandleAcc(const Node& n, const std::string& acc) const {
    if (n.type->bare || n.decl->header_type == "HANDLE") return acc;
    return acc + "." + n.type->member;
  }
  static std::string Member(const std::string& acc, const Node& child, bool through_pointer) {
    return acc + (through_pointer ? "->" : ".") + child.decl->name;
  }
  // The elements of array node n stored at `acc`: through a typed view when the header
  // declares the member untyped (`as=VOID`, e.g. GETCAPS pData).
  std::string Elems(const Node& n, const std::string& acc, bool writable) const {
    if (n.decl->header_type.empty()) return acc;
    return "static_cast<" + std::string(writable ? "" : "const ") + CName(*n.type) + "*>(" + acc +
           ")";
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
    if (!IsHandle(n)) return "e.Set(" + std::to_string(field) + ", " + Plain(value_acc) + ");";
    if (IsHandle(n))
      return "e.SetHandle(" + std::to_string(field) + ", " + HandleAcc(n, value_acc) + ");";
    return "e.Set(" + std::to_string(field) + ", " + value_acc + ");";
  }

  // A structure node's members, each through `walk(member, accessor, ind, out)`: a pointer's
  // inside one null check (written only when some member wrote code), a value's in place.
  template <typename Walk>
  void Members(const Node& n, const std::string& acc, int ind, std::string* o, const Walk& walk) {
    if (n.kind == Node::kStructVal) {
      for (const Node& ch : n.children) walk(ch, Member(acc, ch, false), ind, o);
      return;
    }
    std::string inner;
    for (const Node& ch : n.children) walk(ch, Member(acc, ch, true), ind + 1, &inner);
    if (!inner.empty())
      *o += Ind(ind) + "if (" + acc + " != nullptr) {\n" + inner + Ind(ind) + "}\n";
  }

  // Members() through one of this generator's walks.
  using WalkFn = void (CodecGen::*)(const Node&, const std::string&, int, std::string*);
  void Members(const Node& n, const std::string& acc, int ind, std::string* o, WalkFn walk) {
    Members(n, acc, ind, o,
            [this, walk](const Node& ch, const std::string& a, int i, std::string* out) {
              (this->*walk)(ch, a, i, out);
            });
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
      case Node::kStructPtr:
      case Node::kStructVal:
        if (n.kind == Node::kStructPtr)
          *o += Ind(ind) + "e.Set(" + std::to_string(n.field) + ", " + acc + " != nullptr);\n";
        Members(n, acc, ind, o, &CodecGen::CaptureIn);
        break;
      case Node::kArray:
        break;
    }
  }

  // Exit phase, part 1: output fields and the exit values of in/out fields.
  void CaptureOut(const Node& n, const std::string& acc, int ind, std::string* o) {
    OutputsWalk(n, acc, ind, o, /*set_presence=*/true,
                [this](const Node& l, int field, const std::string& src) {
                  return SetLeaf(l, field, src);
                });
  }

  // The exit-phase walk capture and apply share: one statement per output field (and exit
  // value of an in/out field) from `leaf(node, field, accessor)`, pointers checked for null.
  // `set_presence`: an `out` structure pointer also records whether it is set (capture).
  template <typename LeafFn>
  void OutputsWalk(const Node& n, const std::string& acc, int ind, std::string* o,
                   bool set_presence, const LeafFn& leaf) {
    switch (n.kind) {
      case Node::kLeaf:
        if (n.dir == "out") *o += Ind(ind) + leaf(n, n.field, acc) + "\n";
        if (n.dir == "inout") *o += Ind(ind) + leaf(n, n.field_out, acc) + "\n";
        break;
      case Node::kScalarPtr:
        if (n.dir != "in")
          *o += Ind(ind) + "if (" + acc + " != nullptr) " +
                leaf(n, n.dir == "out" ? n.field : n.field_out, "(*" + acc + ")") + "\n";
        break;
      case Node::kStructPtr:
      case Node::kStructVal:
        // An `out` pointer member is written by the callee (DXGKARG_CREATEDEVICE.pInfo is NULL
        // at entry and the KMD's at exit): its presence is what it is at exit.
        if (n.kind == Node::kStructPtr && set_presence && n.dir == "out")
          *o += Ind(ind) + "e.Set(" + std::to_string(n.field) + ", " + acc + " != nullptr);\n";
        Members(n, acc, ind, o, [&](const Node& ch, const std::string& a, int i, std::string* out) {
          OutputsWalk(ch, a, i, out, set_presence, leaf);
        });
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
          *o += Ind(ind) + "e.AppendHandle(" + HandleAcc(n, acc) + ");\n";
        else
          *o += Ind(ind) + "e.Append(" + acc + ");\n";
        break;
      case Node::kOpaquePtr:
        *o += Ind(ind) + "e.Append(" + acc + ");\n";
        break;
      case Node::kStructVal:
        Members(n, acc, ind, o, &CodecGen::AppendElement);
        break;
      default:
        Die(n.decl->line, "unsupported member inside an array element");
    }
  }

  // Exit phase, part 2: arrays in fixed-field order.
  void CaptureArrays(const Node& n, const std::string& acc, int ind, std::string* o) {
    switch (n.kind) {
      case Node::kStructPtr:
      case Node::kStructVal:
        Members(n, acc, ind, o, &CodecGen::CaptureArrays);
        break;
      case Node::kArray: {
        const Field& f = t.fields[n.field];
        std::string begin = f.count_in_element ? "e.BeginTokenArray(" : "e.BeginArray(";
        *o += Ind(ind) + "for (size_t i = 0, n = " + begin + std::to_string(n.field) + ", " + acc +
              "); i < n; ++i) {\n";
        const Node& first = n.children.front();
        const std::string elems = Elems(n, acc, false);
        if (n.children.size() == 1 && first.decl == n.decl) {
          AppendElement(first, elems + "[i]", ind + 1, o);
        } else {
          for (const Node& ch : n.children)
            AppendElement(ch, elems + "[i]." + ch.decl->name, ind + 1, o);
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
    if (IsHandle(n)) return "d.Handle(" + idx + ", &" + HandleAcc(n, target) + ");";
    if (IsPtrScalar(n)) {
      if (n.in_element)
        return target + " = d.ElementPointer(" + std::to_string(cur_array) + ", " +
               std::to_string(field) + ", " + idx + ");";
      return target + " = d.Pointer(" + idx + ");";
    }
    return Plain(target) + " = d.Get<" + CName(*n.type) + ">(" + idx + ");";
  }

  // Fills the inputs of node n stored at lvalue `acc`.
  void FillIn(const Node& n, const std::string& acc, int ind, std::string* o) {
    switch (n.kind) {
      case Node::kLeaf:
        if (n.dir != "out") *o += Ind(ind) + ReadLeaf(n, n.field, acc) + "\n";
        break;
      case Node::kScalarPtr: {
        std::string v = Temp("value");
        *o += Ind(ind) + "{\n" + Ind(ind + 1) + CName(*n.type) + "* " + v + " = d.New<" +
              CName(*n.type) + ">();\n";
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
        *o += Ind(ind + 1) + CName(*n.type) + "* " + s + " = d.New<" + CName(*n.type) + ">();\n";
        for (const Node& ch : n.children) FillIn(ch, Member(s, ch, true), ind + 1, o);
        *o += Ind(ind + 1) + acc + " = " + s + ";\n" + Ind(ind) + "}\n";
        break;
      }
      case Node::kStructVal:
        Members(n, acc, ind, o, &CodecGen::FillIn);
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
    *o += Ind(ind) + (declare.empty() ? CName(*n.type) + "* " + target : declare) +
          " = d.NewArray<" + CName(*n.type) + ">(" + std::to_string(k) + ");\n";
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
        *o += Ind(ind) + CName(*n.type) + " " + name + "{};\n";
        FillIn(n, name, ind, o);
        break;
      case Node::kScalarPtr:
        *o += Ind(ind) + CName(*n.type) + "* " + name + " = d.New<" + CName(*n.type) + ">();\n";
        if (n.dir != "out") *o += Ind(ind) + ReadLeaf(n, n.field, "(*" + name + ")") + "\n";
        break;
      case Node::kOpaquePtr:
        *o += Ind(ind) + CType(c, *n.decl, false) + " " + name + " = static_cast<" +
              CType(c, *n.decl, false) + ">(d.Pointer(" + std::to_string(n.field) + "));\n";
        break;
      case Node::kStructPtr: {
        *o += Ind(ind) + CName(*n.type) + "* " + name + " = nullptr;\n";
        *o += Ind(ind) + "if (d.Present(" + std::to_string(n.field) + ")) {\n";
        *o += Ind(ind + 1) + name + " = d.New<" + CName(*n.type) + ">();\n";
        for (const Node& ch : n.children) FillIn(ch, Member(name, ch, true), ind + 1, o);
        *o += Ind(ind) + "}\n";
        break;
      }
      case Node::kStructVal:
        *o += Ind(ind) + CName(*n.type) + " " + name + "{};\n";
        FillIn(n, name, ind, o);
        break;
      case Node::kArray:
        FillArray(n, name, ind, o, CName(*n.type) + "* " + name);
        break;
    }
  }

  // ---- apply: write the recorded outputs ----
  std::string WriteLeaf(const Node& n, int field, const std::string& target) {
    return ReadLeaf(n, field, target);
  }

  void ApplyOut(const Node& n, const std::string& acc, int ind, std::string* o) {
    OutputsWalk(n, acc, ind, o, /*set_presence=*/false,
                [this](const Node& l, int field, const std::string& target) {
                  return WriteLeaf(l, field, target);
                });
  }

  void ApplyElementOut(const Node& n, const std::string& acc, int ind, std::string* o) {
    switch (n.kind) {
      case Node::kLeaf:
        if (n.dir == "out") *o += Ind(ind) + WriteLeaf(n, n.field, acc) + "\n";
        break;
      case Node::kStructVal:
        Members(n, acc, ind, o, &CodecGen::ApplyElementOut);
        break;
      default:
        break;
    }
  }

  void ApplyArrays(const Node& n, const std::string& acc, int ind, std::string* o) {
    switch (n.kind) {
      case Node::kStructPtr:
      case Node::kStructVal:
        Members(n, acc, ind, o, &CodecGen::ApplyArrays);
        break;
      case Node::kArray: {
        if (!HasDir(n, true)) break;
        int k = n.array_ordinal;
        int saved = cur_array;
        cur_array = k;
        std::string body;
        const Node& first = n.children.front();
        const std::string elems = Elems(n, acc, true);
        if (n.children.size() == 1 && first.decl == n.decl)
          ApplyElementOut(first, elems + "[i]", ind + 2, &body);
        else
          for (const Node& ch : n.children)
            ApplyElementOut(ch, elems + "[i]." + ch.decl->name, ind + 2, &body);
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
        for (const std::string& g : ac.guards)
          cond += (cond.empty() ? "" : " && ") + g + " != nullptr";
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

}  // namespace

std::string EmitCaptureImpl(const Catalog& c, const std::vector<CallTree>& trees) {
  std::ostringstream o;
  o << "// Generated by ddi/internal/catalog_gen from ddi/ddi_catalog.txt. Do not edit.\n"
       "// Included by format/call_capture.cc: the capture half of the codec, which the\n"
       "// recorder's shim links and which therefore reports nothing through absl::Status.\n"
       "// Each call's functions read top to bottom in field order; e.Set(i, ...) names the\n"
       "// fixed field index i of Fields(call).\n\n"
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
      << "  e.BeginEntry();\n"
      << body << "}\n\n";

    // CaptureExit
    body.clear();
    for (const Node& p : t.params) g.CaptureOut(p, p.decl->name, 1, &body);
    for (const Node& p : t.params) g.CaptureArrays(p, p.decl->name, 1, &body);
    o << CaptureSignature(c, f, "Exit", body, false, " {") << "\n"
      << "  codec_internal::ArgEncoder e(" << id << ", args, handle_id);\n"
      << "  e.BeginExit();\n"
      << body << "}\n\n";
  }
  o << "}  // namespace cltrace::format\n";
  return o.str();
}

std::string EmitCodecImpl(const Catalog& c, const std::vector<CallTree>& trees) {
  std::ostringstream o;
  o << "// Generated by ddi/internal/catalog_gen from ddi/ddi_catalog.txt. Do not edit.\n"
       "// Included by format/call_codec.cc (the capture functions are in\n"
       "// call_capture_gen.inc). Each call's functions read top to bottom in field order;\n"
       "// d.Get<T>(i) names the fixed field index i of Fields(call).\n\n"
       "namespace cltrace::format {\n\n";
  for (const CallTree& t : trees) {
    const Fn& f = *t.fn;
    CodecGen g{c, t};
    std::string id = "CallId::k" + f.name;
    o << CallBanner(t, TableOf(c, f));

    // Invoke
    std::string body;
    for (const Node& p : t.params) g.DeclareParam(p, 1, &body);
    o << InvokeSignature(f, " {") << "\n"
      << "  const CallInfo& call = *GetCall(" << id << ");\n"
      << "  CLTRACE_RETURN_IF_ERROR(codec_internal::CheckEnv(call, env, /*needs_arena=*/true));\n"
      << "  CLTRACE_ASSIGN_OR_RETURN(const codec_internal::ArgLayout layout,\n"
      << "                           codec_internal::ComputeLayout(call, args));\n"
      << "  codec_internal::ArgDecoder d(call, args, env, layout);\n"
      << body << "  if (!d.ok()) return d.status();\n";
    const std::vector<std::string> names = ArgNames(f);
    const std::vector<std::string> capture_args = Concat({"env.actual", "env.handle_id"}, names);
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
       "using InvokeThunk = absl::StatusOr<int64_t> (*)(void* pfn, absl::Span<const uint64_t> "
       "args,\n"
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

}  // namespace cltrace::catalog_gen
