#include "format/event.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <new>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace cltrace::format {
namespace {

// Slot segments and overflow blocks at least this large come from the temporary file.
constexpr size_t kFileMinBytes = size_t{1} << 20;
// File-backed bytes written between two Trim()s: the resident window of a growing table.
constexpr size_t kTrimBytes = size_t{1} << 20;
constexpr size_t kPageBytes = 4096;
constexpr size_t kOverflowMinBlock = size_t{64} << 10;
constexpr size_t kOverflowMaxBlock = size_t{64} << 20;

uint64_t FirstId(int segment) { return segment == 0 ? 0 : uint64_t{64} << (segment - 1); }
uint64_t SegmentIds(int segment) { return segment == 0 ? 64 : uint64_t{64} << (segment - 1); }

// An unlinked temporary file in $TMPDIR (or /tmp), or -1.
int OpenTempFile() {
  const char* dir = std::getenv("TMPDIR");
  if (dir == nullptr || *dir == '\0') dir = "/tmp";
  int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0) return fd;
  std::string path = absl::StrCat(dir, "/cltrace-tokens-XXXXXX");
  fd = mkostemp(path.data(), O_CLOEXEC);
  if (fd >= 0) unlink(path.c_str());
  return fd;
}

}  // namespace

// The slots' and long tokens' storage: blocks that never move, in memory or mapped (shared)
// from the table's temporary file.
struct TokenTable::Store : TokenTable::Slots {
  struct Block {
    char* p;
    size_t len;
    bool file;
  };

  Store() { base[0] = reinterpret_cast<uintptr_t>(seg0); }
  ~Store() {
    for (const Block& b : blocks) {
      if (b.file) {
        munmap(b.p, b.len);
      } else {
        delete[] b.p;
      }
    }
    if (fd >= 0) close(fd);
  }
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // `len` bytes that never move; from the file when `want_file` and a file can be had.
  Block Allocate(size_t len, bool want_file) {
    if (want_file && !file_failed) {
      if (fd < 0) fd = OpenTempFile();
      const size_t n = (len + kPageBytes - 1) / kPageBytes * kPageBytes;
      // fallocate reserves the blocks, so a full disk fails here and not as SIGBUS on a write.
      if (fd >= 0 && fallocate(fd, 0, static_cast<off_t>(file_size), static_cast<off_t>(n)) == 0) {
        void* p =
            mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, static_cast<off_t>(file_size));
        if (p != MAP_FAILED) {
          file_size += n;
          blocks.push_back({static_cast<char*>(p), n, true});
          return blocks.back();
        }
      }
      file_failed = true;  // no temporary file, a full disk, no address space: the rest in memory
    }
    blocks.push_back({new char[len], len, false});
    heap_bytes += len;
    return blocks.back();
  }

  // Copies a long token into the overflow arena; returns its address.
  const char* AppendLong(absl::string_view token) {
    if (over_cap - over_used < token.size()) {
      const size_t want =
          std::max(token.size(), std::clamp(over_total, kOverflowMinBlock, kOverflowMaxBlock));
      Block b = Allocate(want, want >= kFileMinBytes);
      over = b.p;
      over_used = 0;
      over_cap = b.len;
      over_file = b.file;
      over_total += b.len;
    }
    char* where = over + over_used;
    std::memcpy(where, token.data(), token.size());
    over_used += token.size();
    if (over_file) written_since_trim += token.size();
    return where;
  }
  // Takes back the last AppendLong (a token Define rejected), when it is still the last.
  void UnappendLong(const char* where, size_t len) {
    if (where + len == over + over_used) over_used -= len;
  }

  void Trim() {
    for (const Block& b : blocks) {
      if (b.file) madvise(b.p, b.len, MADV_DONTNEED);
    }
    written_since_trim = 0;
  }

  alignas(16) char seg0[64 * kSlotBytes] = {};
  std::array<bool, kSegments> seg_file{};
  std::vector<Block> blocks;
  int fd = -1;
  bool file_failed = false;
  uint64_t file_size = 0;
  size_t heap_bytes = 0;
  size_t written_since_trim = 0;
  // The overflow block being filled.
  char* over = nullptr;
  size_t over_used = 0;
  size_t over_cap = 0;
  bool over_file = false;
  size_t over_total = 0;
};

void* TokenTable::AllocatePages(size_t bytes) {
  if (bytes < kFileMinBytes) return ::operator new(bytes);
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();  // as operator new would
  return p;
}

void TokenTable::FreePages(void* p, size_t bytes) {
  if (bytes < kFileMinBytes) {
    ::operator delete(p);
  } else {
    munmap(p, bytes);
  }
}

TokenTable::TokenTable()
    : size_(1), store_(std::make_unique<Store>()), slots_(store_.get()), index_(MakeIndex()) {}

TokenTable::~TokenTable() = default;

TokenTable::TokenTable(TokenTable&& other) noexcept
    : size_(std::exchange(other.size_, 0)),
      store_(std::move(other.store_)),
      slots_(std::exchange(other.slots_, nullptr)),
      index_(std::move(other.index_)),
      index_limit_(std::exchange(other.index_limit_, 0)),
      recent_(std::move(other.recent_)) {}

TokenTable& TokenTable::operator=(TokenTable&& other) noexcept {
  if (this != &other) {
    size_ = std::exchange(other.size_, 0);
    index_ = std::move(other.index_);  // before store_: the old index hashes through the old store
    store_ = std::move(other.store_);
    slots_ = std::exchange(other.slots_, nullptr);
    index_limit_ = std::exchange(other.index_limit_, 0);
    recent_ = std::move(other.recent_);
  }
  return *this;
}

TokenTable::TokenTable(const TokenTable& other) : TokenTable() {
  for (uint64_t id = 1; id < other.size(); ++id) Define(id, other.Token(id));
}

TokenTable& TokenTable::operator=(const TokenTable& other) {
  if (this != &other) *this = TokenTable(other);
  return *this;
}

TokenTable::Index TokenTable::MakeIndex() const {
  return Index(0, IdHash{slots_, &slots_->fp_bits}, IdEq{slots_, &slots_->fp_bits});
}

bool TokenTable::AddToIndex(absl::string_view token, size_t hash) {
  const int fp_bits = slots_->fp_bits;
  const uint32_t entry = static_cast<uint32_t>(size_ << fp_bits) | FingerprintOf(hash, fp_bits);
  bool added = false;
  index_.lazy_emplace(Probe{token, hash}, [&](const Index::constructor& ctor) {
    ctor(entry);
    added = true;
  });
  return added;
}

bool TokenTable::WriteSlot(absl::string_view token) {
  if (store_ == nullptr) {  // moved from: start over
    *this = TokenTable();
  }
  if (size_ >= kMaxIds) return false;
  const uint64_t id = size_;
  Store& st = *store_;
  const int s = Slots::SegmentOf(id);
  if (s > 0 && id == FirstId(s)) {
    const size_t len = SegmentIds(s) * kSlotBytes;
    Store::Block b = st.Allocate(len, len >= kFileMinBytes);
    st.base[s] = reinterpret_cast<uintptr_t>(b.p) - FirstId(s) * kSlotBytes;
    st.seg_file[s] = b.file;
  }
  char* slot = const_cast<char*>(st.Slot(id));
  if (token.size() < kSlotBytes) {
    slot[0] = static_cast<char>(token.size());
    std::memcpy(slot + 1, token.data(), token.size());
  } else {
    const uint64_t head = 0xff | (static_cast<uint64_t>(token.size()) << 8);
    const uint64_t where = reinterpret_cast<uintptr_t>(st.AppendLong(token));
    std::memcpy(slot, &head, sizeof(head));
    std::memcpy(slot + 8, &where, sizeof(where));
  }
  if (st.seg_file[s]) st.written_since_trim += kSlotBytes;
  return true;
}

void TokenTable::ReserveOne() {
  if (index_.size() < index_limit_) return;
  const size_t target = std::max<size_t>(64, index_.size() * 2);
  index_ = MakeIndex();  // give the old one back first: the peak is the new one alone
  index_.reserve(target);
  // absl's flat_hash_set grows past 7/8 of its capacity; stay at or below that.
  index_limit_ = std::max(index_.capacity() / 8 * 7, target);
  store_->fp_bits = 32 - std::min(32, static_cast<int>(std::bit_width(index_limit_)));
  const bool file = store_->file_size != 0;
  const uint64_t next = size_;
  for (size_ = 1; size_ < next; ++size_) {
    const absl::string_view token = slots_->View(size_);
    AddToIndex(token, absl::Hash<absl::string_view>()(token));
    if (file && size_ % (kTrimBytes / kSlotBytes) == 0) store_->Trim();
  }
}

uint64_t TokenTable::Intern(absl::string_view token) {
  if (token.empty()) return 0;
  const size_t hash = absl::Hash<absl::string_view>()(token);
  if (auto it = index_.find(Probe{token, hash}); it != index_.end()) return *it >> slots_->fp_bits;
  if (!WriteSlot(token)) return 0;
  ReserveOne();
  const uint64_t id = size_;
  AddToIndex(token, hash);
  ++size_;
  if (store_->written_since_trim >= kTrimBytes) store_->Trim();
  return id;
}

uint64_t TokenTable::InternValue(uint64_t value) {
  if (value == 0) return 0;
  // The values a writer sees again and again (a device, its contexts, recent resources) hit a
  // small direct-mapped cache; the rest go through the index like any token.
  if (recent_ == nullptr) recent_ = std::make_unique<std::array<Recent, kRecent>>();
  Recent& r = (*recent_)[(value * 0x9e3779b97f4a7c15) >> (64 - kRecentBits)];
  if (r.value == value) return r.id;
  char text[2 + 16];
  char* end = text + sizeof(text);
  char* p = end;
  for (uint64_t v = value; v != 0; v >>= 4) *--p = "0123456789abcdef"[v & 0xf];
  *--p = 'x';
  *--p = '0';
  const uint64_t id = Intern(absl::string_view(p, static_cast<size_t>(end - p)));
  if (id != 0) r = {value, id};
  return id;
}

bool TokenTable::Define(uint64_t id, absl::string_view token) {
  if (id == 0) return false;
  if (id < size_) return Token(id) == token;
  if (id != size_) return false;
  if (!WriteSlot(token)) return false;
  ReserveOne();
  if (!AddToIndex(token, absl::Hash<absl::string_view>()(token))) {  // one token, one id
    if (token.size() >= kSlotBytes) {
      uint64_t where;
      std::memcpy(&where, store_->Slot(id) + 8, sizeof(where));
      store_->UnappendLong(reinterpret_cast<const char*>(where), token.size());
    }
    return false;
  }
  ++size_;
  if (store_->written_since_trim >= kTrimBytes) store_->Trim();
  return true;
}

int64_t TokenTable::Find(absl::string_view token) const {
  if (token.empty()) return 0;
  auto it = index_.find(Probe{token, absl::Hash<absl::string_view>()(token)});
  return it == index_.end() ? -1 : static_cast<int64_t>(*it >> slots_->fp_bits);
}

size_t TokenTable::bytes_used() const {
  size_t n = sizeof(*this) + index_.capacity() * (sizeof(uint32_t) + 1) +
             (recent_ == nullptr ? 0 : sizeof(*recent_));
  if (store_ != nullptr) {
    n += sizeof(Store) + store_->blocks.capacity() * sizeof(Store::Block) + store_->heap_bytes +
         store_->written_since_trim;
  }
  return n;
}

size_t TokenTable::file_bytes() const { return store_ == nullptr ? 0 : store_->file_size; }

bool TokenTable::file_backed() const { return file_bytes() != 0; }

void TokenTable::Trim() {
  if (store_ != nullptr && store_->file_size != 0) store_->Trim();
}

}  // namespace cltrace::format
