// catalog_gen's internal model, shared by its translation units (build-time tool only; see
// catalog_gen.cc for what it generates):
//   catalog_gen_parse.cc         ddi_catalog.txt -> Catalog
//   catalog_gen_tree.cc          Catalog + Fn -> CallTree (the flattened fields of one call)
//   catalog_gen_abi.cc           ddi_abi.h
//   catalog_gen_tables.cc        call_ids.h, catalog_data.inc
//   catalog_gen_codec.cc         call_codec_gen.inc
//   catalog_gen_codec_decls.cc   call_codec_gen.h, call_codec_roundtrip_test.inc, call_traits.h
//                                and the signature/wrapping helpers the codec shares
//   catalog_gen_traits.cc        ddi/call_traits_gen.h (the roles), ddi/call_traits_data.inc
//                                (per-call and per-handle traits, field indices)
// Deliberately dependency-free (only the standard library).
#ifndef CLTRACE_DDI_INTERNAL_CATALOG_GEN_MODEL_H_
#define CLTRACE_DDI_INTERNAL_CATALOG_GEN_MODEL_H_

#include <map>
#include <string>
#include <vector>

namespace cltrace::catalog_gen {

// Prints "ddi_catalog.txt:LINE: MSG" and exits 1, which fails the build.
[[noreturn]] void Die(int line, const std::string& msg);

// ---- The catalog ------------------------------------------------------------------------

struct Decl {       // a parameter or a structure member
  std::string dir;  // "", "in", "out", "inout"
  std::string type;
  bool pointer = false;
  std::string name;
  int fixed_len = 0;  // `NAME[N]`: array embedded in a structure
  std::string count;  // element count expression: "4", "NumBuffers", "*pHSizes", "X/4", "p[1]",
                      // "A*B"
  bool opt = false;   // handle may be NULL / absent in JSON
  // Structure members only: `union=TAG` groups consecutive members into one anonymous union
  // of the C header; `alt` declares a member in the header only (an alternative of a union
  // that the trace does not record).
  std::string union_tag;
  bool alt = false;
  // `as=T`: the header declares the parameter / member as T (T* for a pointer; VOID: an
  // untyped buffer, UINT: plain flags), the catalog's TYPE is the view the trace records it
  // through (same size and representation).
  std::string header_type;
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
  // win=: how a Windows build gets the type. "sdk": <windows.h> declares it (scalars, structures)
  // or may already define its values (enums: each macro only where absent); another name: the
  // scalar's Windows typedef (e.g. NTSTATUS is LONG there); "" = ours everywhere.
  std::string win;
  // scalar
  std::string ctype, field_kind, names_enum;
  // handle
  std::string member;
  bool u32 = false;
  // repr=HANDLE: the header declares the handle `HANDLE` (Microsoft's type), no struct of its
  // own; the generated code reads and writes the pointer itself.
  bool bare = false;
  int handle_index = -1;
  std::string handle_class;  // class=: driver runtime kernel adapter other
  std::string object;        // object=: D3D11DDI_HANDLETYPE value name, "" if none
  std::string created;       // created=: handle type the value was created as, "" = itself
  // enum
  bool flags = false;
  std::vector<EnumVal> values;
  int enum_index = -1;
  // struct
  std::vector<Decl> members;
  // decl=inline: the header declares the structure where a member uses it, unnamed
  // (`struct { ... } Member;`), as Microsoft does; its catalog name is the trace's view only.
  bool inline_decl = false;
};

// The C type the header and the generated code spell for `t` (HANDLE for a repr=HANDLE
// handle).
inline std::string CName(const Type& t) {
  return t.kind == Type::kHandle && t.bare ? "HANDLE" : t.name;
}

struct Fn {
  std::string name, table, ret, domain, typedef_name, member;
  bool ic = false, dc = false;
  // Per-call traits (ddi/call_traits.h): role=, content=, dc_rule= (rule number), group=.
  std::string role, content, group;
  int dc_rule = 4;
  std::vector<Decl> params;
  int line = 0;
};

struct Table {
  std::string name, layer, prefix = "pfn";
  // layout=own: the project's model of a kernel-side table (KMD, dxgkrnl, DX6 HAL), not
  // Microsoft's layout; required for those layers, refused for the user-mode ones.
  bool own_layout = false;
  std::vector<int> fns;
  int line = 0;
};

inline constexpr char kVerbatimMark = '\x01';

struct Catalog {
  int version = 0;
  std::map<std::string, Type> types;
  // Declaration order (for C output); an entry starting with kVerbatimMark is a `decl` line.
  std::vector<std::string> type_order;
  std::vector<Fn> fns;
  std::vector<Table> tables;
  std::vector<std::string> opaque;  // `opaque NAME`: declared incomplete (struct NAME;)
  std::vector<std::string> handle_names;
  std::vector<std::string> enum_names;
  std::vector<std::string> verbatim;  // `c` lines copied into the header prologue
  std::vector<std::string> epilogue;  // `epilogue` lines copied after the tables
};

// Reads and checks the catalog at `path` (dies on the first error).
Catalog Parse(const std::string& path);
const Type& Lookup(const Catalog& c, const std::string& name, int line);
bool IsNumber(const std::string& s);

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
  int count_factor_field = -1;  // `count=A*B`: B (count_field is A)
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
  std::string count_prefix;  // name prefix used to resolve the count expression
};

struct CallTree {
  const Fn* fn = nullptr;
  std::vector<Node> params;
  std::vector<Field> fields;        // fixed fields
  std::vector<const Node*> arrays;  // in fixed-field order
};

CallTree BuildTree(const Catalog& c, const Fn& f);
// Every call in catalog order (table by table, slot by slot): the CallId order.
std::vector<const Fn*> CallOrder(const Catalog& c);

// ---- Shared emitter helpers ---------------------------------------------------------------

// The C type of a parameter (in_struct false) or structure member, as ddi_abi.h spells it.
std::string CType(const Catalog& c, const Decl& d, bool in_struct);
const Table& TableOf(const Catalog& c, const Fn& f);
// The Layer / Domain enumerator ("kDevice", "kIC") of a table / call (catalog_gen_tables.cc).
std::string LayerEnumerator(const Table& tab);
std::string DomainEnumerator(const Table& tab, const Fn& f);
std::string ReturnEnumerator(const Catalog& c, const Fn& f);  // ReturnKind: "kHresult"

// `head(piece, piece, ...)tail` wrapped at 100 columns with a 4-space continuation indent;
// `indent` spaces precede the head.
std::string WrapList(int indent, const std::string& head, const std::vector<std::string>& pieces,
                     const std::string& tail);
std::vector<std::string> Concat(std::vector<std::string> a, const std::vector<std::string>& b);
std::vector<std::string> ArgNames(const Fn& f);
// The typed codec's function signatures; parameters `body` does not use are written /*name*/
// unless all_used.
std::string CaptureSignature(const Catalog& c, const Fn& f, const std::string& which,
                             const std::string& body, bool all_used, const std::string& tail);
std::string InvokeSignature(const Fn& f, const std::string& tail);
std::string ApplySignature(const Catalog& c, const Fn& f, const std::string& body, bool all_used,
                           const std::string& tail);
// The comment block that opens each call's section of the codec files.
std::string CallBanner(const CallTree& t, const Table& tab);
// Dies when a parameter name would shadow a local of the generated codec.
void CheckParamNames(const Fn& f);

// ---- Emitters (one per generated file) ----------------------------------------------------

std::string EmitHeader(const Catalog& c);                                    // ddi_abi.h
std::string EmitCallIds(const Catalog& c);                                   // call_ids.h
std::string EmitData(const Catalog& c, const std::vector<CallTree>& trees);  // catalog_data.inc
std::string EmitCodecHeader(const Catalog& c,
                            const std::vector<CallTree>& trees);  // call_codec_gen.h
std::string EmitCodecImpl(const Catalog& c,
                          const std::vector<CallTree>& trees);  // call_codec_gen.inc
std::string EmitCaptureImpl(const Catalog& c,
                            const std::vector<CallTree>& trees);  // call_capture_gen.inc
std::string EmitCodecTest(const Catalog& c,
                          const std::vector<CallTree>& trees);  // call_codec_roundtrip_test.inc
std::string EmitCallTraits(const Catalog& c);                   // format/call_traits.h
std::string EmitDdiTraitsEnum();                                // ddi/call_traits_gen.h
std::string EmitDdiTraits(const Catalog& c,
                          const std::vector<CallTree>& trees);  // ddi/call_traits_data.inc

// The call roles role= accepts, in CallRole order (catalog_gen_traits.cc).
struct RoleName {
  const char* name;     // as the catalog spells it
  const char* comment;  // what the role means (copied into the generated enum)
};
const std::vector<RoleName>& Roles();
}  // namespace cltrace::catalog_gen

#endif  // CLTRACE_DDI_INTERNAL_CATALOG_GEN_MODEL_H_
