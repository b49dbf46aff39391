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
//
// The generator is split by output (see catalog_gen_model.h for the file map); this file
// only reads the catalog, builds every call's tree and writes the outputs.
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "format/internal/catalog_gen_model.h"

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

}  // namespace cltrace::catalog_gen

int main(int argc, char** argv) { return cltrace::catalog_gen::Run(argc, argv); }
