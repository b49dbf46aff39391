// catalog_gen: the typed codec's declarations (call_codec_gen.h), its per-call round-trip
// tests (call_codec_roundtrip_test.inc) and the compile-time call traits (call_traits.h), plus
// the signature and line-wrapping helpers call_codec_gen.inc shares with them.
#include <cctype>
#include <cstddef>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "ddi/internal/catalog_gen_model.h"

namespace cltrace::catalog_gen {

namespace {

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

}  // namespace

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

namespace {

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

}  // namespace

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
  return WrapList(
      0, "void Capture" + which + f.name + "(",
      Concat({"ArgVec* args", "HandleIdFn handle_id"}, ParamDecls(c, f, body, all_used)), tail);
}

std::string InvokeSignature(const Fn& f, const std::string& tail) {
  return WrapList(
      0, "absl::StatusOr<int64_t> Invoke" + f.name + "(",
      {f.typedef_name + " pfn", "absl::Span<const uint64_t> args", "const InvokeEnv& env"}, tail);
}

std::string ApplySignature(const Catalog& c, const Fn& f, const std::string& body, bool all_used,
                           const std::string& tail) {
  return WrapList(0, "absl::Status ApplyOutputs" + f.name + "(",
                  Concat({"absl::Span<const uint64_t> args", "const InvokeEnv& env"},
                         ParamDecls(c, f, body, all_used)),
                  tail);
}

namespace {

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

}  // namespace

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
      "args", "env", "e", "d", "i", "n", "call", "layout", "pfn", "handle_id", "result", "s"};
  for (const Decl& p : f.params)
    if (kReserved.count(p.name) || p.name.rfind("room", 0) == 0)
      Die(p.line, f.name + ": parameter name '" + p.name + "' clashes with the codec's locals");
}

std::string EmitCodecHeader(const Catalog& c, const std::vector<CallTree>& trees) {
  std::ostringstream o;
  o << "// Generated by ddi/internal/catalog_gen from ddi/ddi_catalog.txt. Do not edit.\n"
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

// Per call: a capturing implementation with the call's C signature (records what it is given
// and answers with the outputs of the args under test) and a round-trip test. The driver of
// the test (RoundTrip, State) is format/call_codec_test.cc.
std::string EmitCodecTest(const Catalog& c, const std::vector<CallTree>& trees) {
  std::ostringstream o;
  o << "// Generated by ddi/internal/catalog_gen from ddi/ddi_catalog.txt. Do not edit.\n"
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

namespace {

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

}  // namespace

// call_traits.h: for every call, its C function-pointer type, table, slot and typed codec
// functions as a CallTraits<CallId> specialisation, and for every table the list of its calls
// in slot order (an X-macro and TableTraits<Table>). The recorder builds one generic thunk per
// call from these; tests instantiate one case per catalog entry from the same lists.
std::string EmitCallTraits(const Catalog& c) {
  std::ostringstream o;
  o << "// Generated by ddi/internal/catalog_gen from ddi/ddi_catalog.txt. Do not edit.\n"
       "// Compile-time traits of every catalog call (see EmitCallTraits,\n"
       "// ddi/internal/catalog_gen_codec_decls.cc):\n"
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

}  // namespace cltrace::catalog_gen
