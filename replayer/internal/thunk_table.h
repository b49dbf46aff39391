// A C function table whose every slot is a thunk instantiated from a class template over the
// catalog's call ids: ThunkTable<D3DDDI_DEVICECALLBACKS, Thunk>() fills slot k of the table with
// &Thunk<TableTraits<Table>::kCalls[k]>::Fn. Built once per (table, thunk) and never freed
// (drivers may call back after a replay ended).
//
// Thread-safety: safe to call from any thread (function-local static).
#ifndef CLTRACE_REPLAYER_INTERNAL_THUNK_TABLE_H_
#define CLTRACE_REPLAYER_INTERNAL_THUNK_TABLE_H_

#include <cstddef>
#include <utility>

#include "format/call_traits.h"

namespace cltrace::replay::internal {

template <typename Table, template <format::CallId> class Thunk, size_t... I>
const Table* BuildThunkTable(std::index_sequence<I...>) {
  using Traits = format::TableTraits<Table>;
  auto* table = new Table{};
  char* base = reinterpret_cast<char*>(table);
  ((*reinterpret_cast<void**>(base + format::CallTraits<Traits::kCalls[I]>::kSlotOffset) =
        reinterpret_cast<void*>(&Thunk<Traits::kCalls[I]>::Fn)),
   ...);
  return table;
}

template <typename Table, template <format::CallId> class Thunk>
const Table* ThunkTable() {
  static const Table* table = BuildThunkTable<Table, Thunk>(
      std::make_index_sequence<format::TableTraits<Table>::kSlotCount>{});
  return table;
}

}  // namespace cltrace::replay::internal

#endif  // CLTRACE_REPLAYER_INTERNAL_THUNK_TABLE_H_
