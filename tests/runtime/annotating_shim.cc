// A test-only driver shim: forwards OpenAdapter10_2 to the reference driver (loaded RTLD_LOCAL
// from $CLTRACE_SHIM_TARGET) and exports the annotation hooks of runtime/annotation.h, recording
// every API-call name it is given. Used by annotation_test.cc.
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "ddi/ddi_abi.h"

namespace {

std::mutex g_mu;
std::string* g_log = new std::string();
int g_depth = 0;  // begin/end must nest

PFND3D10DDI_OPENADAPTER Target() {
  static PFND3D10DDI_OPENADAPTER open = [] {
    const char* path = std::getenv("CLTRACE_SHIM_TARGET");
    void* h = path != nullptr ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : nullptr;
    return h != nullptr ? reinterpret_cast<PFND3D10DDI_OPENADAPTER>(dlsym(h, "OpenAdapter10_2"))
                        : nullptr;
  }();
  return open;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) HRESULT APIENTRY
OpenAdapter10_2(D3D10DDIARG_OPENADAPTER* args) {
  PFND3D10DDI_OPENADAPTER open = Target();
  return open != nullptr ? open(args) : static_cast<HRESULT>(E_FAIL);
}

extern "C" __attribute__((visibility("default"))) void CltraceAnnotateBegin(const char* api) {
  std::lock_guard<std::mutex> lock(g_mu);
  ++g_depth;
  *g_log += api;
  *g_log += '\n';
}

extern "C" __attribute__((visibility("default"))) void CltraceAnnotateEnd(void) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (--g_depth < 0) *g_log += "UNBALANCED\n";
}

// The recorded names, '\n'-separated.
extern "C" __attribute__((visibility("default"))) size_t CltraceTestShimLog(char* buf, size_t cap) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (cap > 0) {
    size_t n = std::min(cap - 1, g_log->size());
    std::memcpy(buf, g_log->data(), n);
    buf[n] = '\0';
  }
  return g_log->size();
}
