// One recorded DDI call or callback, as every cltrace component sees it in memory.
//
// Thread-safety: plain values. HandleTable is not thread-safe; the writer guards its own.
//
// Example:
//   Event e;
//   e.call = CallId::kDrawIndexed;
//   e.seq = 41; e.end = 42; e.tid = 7;
//   e.args = {handles.Intern("0x5500"), 36, 0, 0};  // hDevice, IndexCount, Start, Base
#ifndef CLTRACE_FORMAT_EVENT_H_
#define CLTRACE_FORMAT_EVENT_H_

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/hash/hash.h"
#include "absl/strings/string_view.h"
#include "ddi/call_ids.h"

namespace cltrace::format {

struct Event {
  // Positions on the process-wide counter (starting at 1): `seq` when the call was entered,
  // `end` when it returned. Every position is used once. end == 0: never returned
  // (the process died inside the call).
  uint64_t seq = 0;
  uint64_t end = 0;
  // seq of the call this one was made inside (a callback inside a DDI call, a state-refresh
  // DDI call inside a callback); 0 for a top-level call.
  uint64_t parent = 0;
  uint32_t tid = 0;
  CallId call = CallId::kInvalid;
  // Interned content id (TraceReader::contents(), TraceWriter::InternContent), 0 = none: the
  // bytes the application handed the driver with this call, captured by the recorder
  // (FORMAT.md §3.8; which calls carry content: format/content.h).
  uint32_t content = 0;
  // Entry time in nanoseconds since the trace's start.
  int64_t timestamp_ns = 0;
  // Return value: HRESULT/NTSTATUS/BOOL sign-extended, SIZE_T as is, 0 for void.
  int64_t ret = 0;
  // Interned annotation (the API call that caused it), 0 = none. See StringTable.
  uint64_t annotation = 0;
  // The call's flattened fields (ddi/catalog_types.h): the fixed fields in catalog order,
  // then the elements of every array. Handle fields hold handle ids (HandleTable), signed
  // scalars are sign-extended, floats are their bit pattern.
  absl::InlinedVector<uint64_t, 8> args;

  bool operator==(const Event&) const = default;
};

// Interns opaque tokens ("0x1a2b00", "cl1") to small ids; id 0 is the NULL handle / empty
// string. The same token is the same handle.
//
// Memory (a 100 M-call trace defines millions of handles): every token lives in a 16-byte slot
// (up to 15 bytes inline, longer ones in an overflow arena the slot points to); the reverse
// index (token -> id, for Intern / Find and Define's duplicate check) is a hash set of 4-byte
// ids whose hash and equality read the slot. Slots and overflow blocks never move, so a
// Token() view stays valid for the table's life. Past 1 MiB of slots or of overflow text,
// new blocks are mapped from an unlinked temporary file in $TMPDIR (or /tmp) and the pages
// written are given back to the kernel now and then (MADV_DONTNEED on the shared mapping: they
// stay in the file's page cache, which the kernel can write back and reclaim), so resident
// memory is the index plus a bounded window, about 10 bytes per id (on a tmpfs $TMPDIR the
// pages stay in RAM, outside the process). Without a usable temporary file everything stays in
// memory (about 26 bytes per id).
//
// At most 2^32 - 1 ids: beyond that Define fails and Intern / InternValue return 0. Not
// thread-safe for writes; concurrent const calls are fine. A table shared with a fork()ed child
// through its file mapping must not be written by both.
class TokenTable {
 public:
  TokenTable();
  ~TokenTable();
  TokenTable(TokenTable&& other) noexcept;
  TokenTable& operator=(TokenTable&& other) noexcept;
  // A copy defines the same tokens under the same ids (its own storage).
  TokenTable(const TokenTable& other);
  TokenTable& operator=(const TokenTable& other);

  // Returns the id of `token`, adding it if new. The empty token and "0x0"/"0" map to 0
  // only for handle tables that call InternValue; Intern itself treats only "" as 0.
  uint64_t Intern(absl::string_view token);
  // Interns a raw 64-bit value seen by the process, spelled "0x<hex>"; 0 maps to id 0. The
  // same id as Intern of that spelling. Recent values are answered from a 256 KiB cache.
  uint64_t InternValue(uint64_t value);
  // Defines `id` as `token` (a reader replaying the file's definitions). Returns false if
  // id is already defined differently, is out of sequence, or `token` already has another id.
  bool Define(uint64_t id, absl::string_view token);
  // nullptr-free: "" for unknown ids. The view stays valid for the table's life.
  absl::string_view Token(uint64_t id) const {
    return id < size_ ? slots_->View(id) : absl::string_view();
  }
  bool Has(uint64_t id) const { return id < size_; }
  // Id of an existing token, or -1.
  int64_t Find(absl::string_view token) const;
  size_t size() const { return size_; }

  // Resident memory the table accounts for: the index, the in-memory slots and overflow
  // blocks, and the file-backed pages written since they were last given back (pages only read
  // through Token() since the last Trim() are not counted).
  size_t bytes_used() const;
  // Bytes of the temporary file (0 when everything is in memory).
  size_t file_bytes() const;
  bool file_backed() const;
  // Gives back the resident pages of the file-backed part (views stay valid: the next access
  // reads them back from the page cache). Cheap; Define / Intern call it every MiB they write,
  // a verb that reads many tokens and defines none may call it now and then.
  void Trim();

 private:
  static constexpr size_t kSlotBytes = 16;
  static constexpr int kSegments = 27;  // ids < 2^32: segment s >= 1 holds [64 << (s-1), 64 << s)
  static constexpr uint64_t kMaxIds = uint64_t{1} << 32;

  // Where the slots are: segment s's slot for `id` is at base[s] + id * kSlotBytes (base[s] is
  // pre-offset by the segment's first id, modulo 2^64). Heap-allocated so moving the table
  // keeps the index's hash functors pointing at it.
  struct Store;
  struct Slots {
    std::array<uintptr_t, kSegments> base{};
    int fp_bits = 0;  // the index's fingerprint width
    static int SegmentOf(uint64_t id) { return std::bit_width(id | 63) - 6; }
    const char* Slot(uint64_t id) const {
      return reinterpret_cast<const char*>(base[SegmentOf(id)] + id * kSlotBytes);
    }
    absl::string_view View(uint64_t id) const {
      const char* s = Slot(id);
      const uint8_t n = static_cast<uint8_t>(s[0]);
      if (n < kSlotBytes) return absl::string_view(s + 1, n);
      // Long token: byte 0 = 0xff, bytes 1..7 its length, bytes 8..15 its address.
      uint64_t head, where;
      std::memcpy(&head, s, sizeof(head));
      std::memcpy(&where, s + 8, sizeof(where));
      return absl::string_view(reinterpret_cast<const char*>(where), head >> 8);
    }
  };
  // The index holds (id << fp_bits) | fingerprint: the spare high bits of a 4-byte entry keep
  // bits of the token's hash, so a probe reads a slot (perhaps a page of the file) only when
  // 7 bits of absl's control byte and the fingerprint both match. Rebuilt as it grows, so
  // fp_bits = 32 - bit_width(the largest id it can hold).
  struct Probe {
    absl::string_view text;
    size_t hash;
  };
  struct IdHash {
    using is_transparent = void;
    const Slots* slots;
    const int* fp_bits;
    size_t operator()(uint32_t entry) const {
      return absl::Hash<absl::string_view>()(slots->View(entry >> *fp_bits));
    }
    size_t operator()(const Probe& p) const { return p.hash; }
  };
  struct IdEq {
    using is_transparent = void;
    const Slots* slots;
    const int* fp_bits;
    uint32_t Fingerprint(uint32_t entry) const { return entry & ((uint32_t{1} << *fp_bits) - 1); }
    bool operator()(uint32_t a, uint32_t b) const {
      return Fingerprint(a) == Fingerprint(b) &&
             slots->View(a >> *fp_bits) == slots->View(b >> *fp_bits);
    }
    bool operator()(uint32_t a, const Probe& p) const {
      return Fingerprint(a) == FingerprintOf(p.hash, *fp_bits) &&
             slots->View(a >> *fp_bits) == p.text;
    }
    bool operator()(const Probe& p, uint32_t a) const { return (*this)(a, p); }
  };
  static uint32_t FingerprintOf(size_t hash, int fp_bits) {
    return fp_bits == 0 ? 0 : static_cast<uint32_t>(static_cast<uint64_t>(hash) >> (64 - fp_bits));
  }
  // Large index arrays straight from mmap: freeing one (the index rebuilt larger) gives it
  // back to the kernel at once, where malloc could keep it (its mmap threshold grows to 32 MiB).
  static void* AllocatePages(size_t bytes);
  static void FreePages(void* p, size_t bytes);
  template <typename T>
  struct PageAllocator {
    using value_type = T;
    PageAllocator() = default;
    template <typename U>
    PageAllocator(const PageAllocator<U>&) {}  // NOLINT: allocators convert implicitly
    T* allocate(size_t n) { return static_cast<T*>(AllocatePages(n * sizeof(T))); }
    void deallocate(T* p, size_t n) { FreePages(p, n * sizeof(T)); }
    template <typename U>
    bool operator==(const PageAllocator<U>&) const {
      return true;
    }
  };
  using Index = absl::flat_hash_set<uint32_t, IdHash, IdEq, PageAllocator<uint32_t>>;

  // Writes `token` into the slot of id size_ (allocating its segment / overflow space).
  // Returns false when the table is full.
  bool WriteSlot(absl::string_view token);
  // Makes room in the index for id size_ without a rehash of its own (which would read every
  // slot in random order): rebuilds it twice as large, reading the slots in id order.
  void ReserveOne();
  Index MakeIndex() const;
  // Adds id size_ (its slot written) to the index; false if its token is already there.
  bool AddToIndex(absl::string_view token, size_t hash);

  uint64_t size_ = 0;
  std::unique_ptr<Store> store_;
  const Slots* slots_ = nullptr;  // store_'s
  Index index_;
  size_t index_limit_ = 0;  // index_ takes this many ids without rehashing
  // InternValue's cache of recent values (a writer's; readers never allocate it).
  struct Recent {
    uint64_t value = 0;
    uint64_t id = 0;
  };
  static constexpr int kRecentBits = 14;
  static constexpr size_t kRecent = size_t{1} << kRecentBits;
  std::unique_ptr<std::array<Recent, kRecent>> recent_;
};

}  // namespace cltrace::format

#endif  // CLTRACE_FORMAT_EVENT_H_
