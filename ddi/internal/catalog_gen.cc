// catalog_gen: turns ddi/ddi_catalog.txt into generated sources (build time only).
//
//   catalog_gen CATALOG OUT_DIR ddi|format
//
// `ddi` writes the DDI vocabulary into OUT_DIR/ddi/:
//   ddi_abi.h            the C ABI: handles, enums, argument structures, PFN typedefs, tables
//   call_ids.h           enum class CallId
//   catalog_data.inc     constant tables of ddi/catalog_types.h (included by catalog.cc)
//   call_traits_gen.h    enum class CallRole (the roles role= accepts)
//   call_traits_data.inc per-call and per-handle traits and field indices (ddi/call_traits.h)
// `format` writes the trace library's per-call codec into OUT_DIR/format/:
//   call_codec_gen.h     typed per-call capture / invoke / apply-outputs declarations
//   call_codec_gen.inc   the invoke / apply-outputs definitions and the CallId dispatch table
//                        (call_codec.cc)
//   call_capture_gen.inc the capture definitions (call_capture.cc: no absl::Status, the
//                        recorder's shim links them)
//   call_codec_roundtrip_test.inc  per-call capturing implementations and round-trip tests
//                        (included by call_codec_test.cc)
//   call_traits.h        compile-time per-call traits (PFN type, table, slot, codec functions)
//                        and per-table call lists, for generic thunks (recorder/)
// The grammar of the catalog is described at the top of ddi_catalog.txt. Errors name the
// catalog line and exit non-zero, which fails the build.
//
// Deliberately dependency-free (only the standard library): it runs before anything else is
// built and must stay trivially portable.
//
// The generator is split by output (see catalog_gen_model.h for the file map); this file
// only reads the catalog, builds every call's tree and writes the outputs.
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ddi/internal/catalog_gen_model.h"

namespace cltrace::catalog_gen {

namespace {

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

int Run(int argc, char** argv) {
  const std::string what = argc == 4 ? argv[3] : "";
  if (what != "ddi" && what != "format") {
    std::fprintf(stderr, "usage: catalog_gen CATALOG OUT_DIR ddi|format\n");
    return 2;
  }
  Catalog c = Parse(argv[1]);
  std::vector<CallTree> trees;
  for (const Fn* f : CallOrder(c)) trees.push_back(BuildTree(c, *f));
  std::string out = argv[2];
  if (what == "ddi") {
    Write(out + "/ddi/ddi_abi.h", EmitHeader(c));
    Write(out + "/ddi/call_ids.h", EmitCallIds(c));
    Write(out + "/ddi/catalog_data.inc", EmitData(c, trees));
    Write(out + "/ddi/call_traits_gen.h", EmitDdiTraitsEnum());
    Write(out + "/ddi/call_traits_data.inc", EmitDdiTraits(c, trees));
    return 0;
  }
  Write(out + "/format/call_codec_gen.h", EmitCodecHeader(c, trees));
  Write(out + "/format/call_codec_gen.inc", EmitCodecImpl(c, trees));
  Write(out + "/format/call_capture_gen.inc", EmitCaptureImpl(c, trees));
  Write(out + "/format/call_codec_roundtrip_test.inc", EmitCodecTest(c, trees));
  Write(out + "/format/call_traits.h", EmitCallTraits(c));
  return 0;
}

}  // namespace cltrace::catalog_gen

int main(int argc, char** argv) { return cltrace::catalog_gen::Run(argc, argv); }
