// Compile-time checks of the generated ABI against Microsoft's published layouts.
//
// Each check is a static_assert, so a translation unit that uses them passes by compiling:
// natively (x86-64 Linux, in ddi_test) and, through scripts/windows_check.sh, with mingw-w64
// for x86_64 and i686 Windows with <windows.h> first. The numbers come from Microsoft's
// declarations (the page is cited where the checks of a structure or table begin): every
// offset and size is given for both Windows ABIs, x64 (LLP64; on x86-64 Linux the same for
// these types, whose longs are the catalog's 32-bit LONG) and x86.
//
// Thread-safety: compile-time only.
//
// Example:
//   // d3d10umddi/ns-d3d10umddi-d3d11ddi_handlesize.md
//   CLTRACE_MS_SIZE(D3D11DDI_HANDLESIZE, 16, 8);
//   CLTRACE_MS_OFFSET(D3D11DDI_HANDLESIZE, DriverPrivateSize, 8, 4);
//   CLTRACE_MS_SLOT(D3D10_2DDI_ADAPTERFUNCS, 4, pfnGetCaps);
#ifndef CLTRACE_DDI_TESTING_MS_LAYOUT_H_
#define CLTRACE_DDI_TESTING_MS_LAYOUT_H_

#ifdef _WIN32
#include <windows.h>  // first, as a Windows driver includes it
#endif

#include <cstddef>
#include <type_traits>

#include "ddi/ddi_abi.h"

namespace cltrace::ddi::ms_layout {

inline constexpr bool kPtr64 = sizeof(void*) == 8;
constexpr size_t Pick(size_t x64, size_t x86) { return kPtr64 ? x64 : x86; }

}  // namespace cltrace::ddi::ms_layout

// sizeof(S) on x64 / x86.
#define CLTRACE_MS_SIZE(S, x64, x86)                                    \
  static_assert(sizeof(S) == ::cltrace::ddi::ms_layout::Pick(x64, x86), \
                "sizeof(" #S ") differs from Microsoft's (" #x64 " on x64, " #x86 " on x86)")

// offsetof(S, m) on x64 / x86.
#define CLTRACE_MS_OFFSET(S, m, x64, x86)                                                   \
  static_assert(offsetof(S, m) == ::cltrace::ddi::ms_layout::Pick(x64, x86),                \
                "offsetof(" #S ", " #m ") differs from Microsoft's (" #x64 " on x64, " #x86 \
                " on x86)")

// A function table's slot `index` (0-based, Microsoft's order) holds member m.
#define CLTRACE_MS_SLOT(T, index, m)                           \
  static_assert(offsetof(T, m) == (index) * sizeof(void*),     \
                #T "." #m " is not Microsoft's slot " #index); \
  static_assert(sizeof(((T*)nullptr)->m) == sizeof(void*), #T "." #m " is not a pointer")

// A function table has exactly n slots.
#define CLTRACE_MS_SLOTS(T, n) \
  static_assert(sizeof(T) == (n) * sizeof(void*), #T " does not have Microsoft's " #n " slots")

// A function-pointer typedef has Microsoft's prototype, calling convention included
// (APIENTRY: __stdcall on x86 Windows, where a mismatch would unbalance the stack).
#define CLTRACE_MS_PROTOTYPE(PFN, RET, ...)                       \
  static_assert(std::is_same_v<PFN, RET(APIENTRY*)(__VA_ARGS__)>, \
                #PFN " differs from Microsoft's prototype or calling convention")

#endif  // CLTRACE_DDI_TESTING_MS_LAYOUT_H_
