#include "wddm/content_model.h"

#include <algorithm>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "wddm/digest.h"

namespace cltrace::gpu {

uint64_t ZeroDigest(uint64_t size) { return DigestCombine(kDigestTagZero, size); }

namespace {

// One allocation's share of CombinedDigest.
uint64_t EntryTerm(AllocationId id, uint64_t size, uint64_t digest) {
  return DigestCombineAll(id, {size, digest});
}

}  // namespace

void ContentModel::SetDigest(AllocationId id, Entry& e, uint64_t digest) {
  sum_ += EntryTerm(id, e.size, digest) - EntryTerm(id, e.size, e.digest);
  e.digest = digest;
}

absl::StatusOr<ContentModel::Entry*> ContentModel::Find(AllocationId id, const char* what) {
  auto it = entries_.find(id);
  if (it == entries_.end()) {
    return absl::NotFoundError(absl::StrCat(what, ": unknown allocation ", id));
  }
  return &it->second;
}

absl::Status ContentModel::Create(AllocationId id, uint64_t size) {
  auto [it, inserted] = entries_.try_emplace(id);
  if (!inserted) return absl::AlreadyExistsError(absl::StrCat("allocation ", id, " exists"));
  it->second.size = size;
  it->second.digest = ZeroDigest(size);
  sum_ += EntryTerm(id, size, it->second.digest);
  return absl::OkStatus();
}

absl::Status ContentModel::Destroy(AllocationId id) {
  auto it = entries_.find(id);
  if (it == entries_.end()) {
    return absl::NotFoundError(absl::StrCat("destroy: unknown allocation ", id));
  }
  sum_ -= EntryTerm(id, it->second.size, it->second.digest);
  entries_.erase(it);
  return absl::OkStatus();
}

absl::Status ContentModel::Clear(AllocationId dst, uint64_t value) {
  auto e = Find(dst, "clear");
  if (!e.ok()) return e.status();
  SetDigest(dst, **e, DigestCombineAll(kDigestTagClear, {(*e)->size, value}));
  return absl::OkStatus();
}

absl::Status ContentModel::Update(AllocationId dst, uint64_t offset, uint64_t size,
                                  uint64_t data_digest) {
  auto e = Find(dst, "update");
  if (!e.ok()) return e.status();
  Entry& d = **e;
  if (offset > d.size || size > d.size - offset) {
    return absl::OutOfRangeError(absl::StrCat("update of allocation ", dst, ": [", offset, ", +",
                                              size, ") exceeds its ", d.size, " bytes"));
  }
  uint64_t prev = (offset == 0 && size == d.size) ? 0 : d.digest;
  SetDigest(dst, d, DigestCombineAll(kDigestTagUpdate, {prev, d.size, offset, size, data_digest}));
  return absl::OkStatus();
}

absl::Status ContentModel::Copy(AllocationId dst, AllocationId src) {
  auto d = Find(dst, "copy dst");
  if (!d.ok()) return d.status();
  auto s = Find(src, "copy src");
  if (!s.ok()) return s.status();
  if ((*d)->size == (*s)->size) {
    SetDigest(dst, **d, (*s)->digest);
    return absl::OkStatus();
  }
  return CopyRegion(dst, 0, src, 0, std::min((*d)->size, (*s)->size));
}

absl::Status ContentModel::CopyRegion(AllocationId dst, uint64_t dst_offset, AllocationId src,
                                      uint64_t src_offset, uint64_t size) {
  auto d = Find(dst, "copy-region dst");
  if (!d.ok()) return d.status();
  auto s = Find(src, "copy-region src");
  if (!s.ok()) return s.status();
  Entry& de = **d;
  const Entry& se = **s;
  if (dst_offset > de.size || size > de.size - dst_offset || src_offset > se.size ||
      size > se.size - src_offset) {
    return absl::OutOfRangeError(absl::StrCat("copy-region ", src, "+", src_offset, " -> ", dst,
                                              "+", dst_offset, " of ", size,
                                              " bytes is out of range"));
  }
  if (dst_offset == 0 && src_offset == 0 && size == de.size && size == se.size) {
    SetDigest(dst, de, se.digest);
    return absl::OkStatus();
  }
  SetDigest(dst, de,
            DigestCombineAll(kDigestTagCopyRegion,
                             {de.digest, de.size, dst_offset, se.digest, src_offset, size}));
  return absl::OkStatus();
}

absl::Status ContentModel::Draw(AllocationId target, uint64_t state, uint32_t vertex_count,
                                uint32_t start_vertex, uint32_t instance_count,
                                absl::Span<const AllocationId> inputs) {
  auto t = Find(target, "draw target");
  if (!t.ok()) return t.status();
  uint64_t h = DigestCombineAll(kDigestTagDraw, {(*t)->digest, (*t)->size, state, vertex_count,
                                                 start_vertex, instance_count, inputs.size()});
  for (AllocationId in : inputs) {
    auto e = Find(in, "draw input");
    if (!e.ok()) return e.status();
    h = DigestCombine(h, (*e)->digest);
  }
  SetDigest(target, **t, h);
  return absl::OkStatus();
}

std::optional<uint64_t> ContentModel::Digest(AllocationId id) const {
  auto it = entries_.find(id);
  if (it == entries_.end()) return std::nullopt;
  return it->second.digest;
}

std::optional<uint64_t> ContentModel::Size(AllocationId id) const {
  auto it = entries_.find(id);
  if (it == entries_.end()) return std::nullopt;
  return it->second.size;
}

uint64_t ContentModel::CombinedDigest() const {
  // Sum of per-entry terms: independent of hash-map iteration order, so it can be kept up to
  // date change by change (SetDigest, Create, Destroy).
  return DigestCombine(sum_, entries_.size());
}

uint64_t ContentModel::SubsetDigest(absl::Span<const AllocationId> ids) const {
  absl::InlinedVector<AllocationId, 8> unique(ids.begin(), ids.end());
  std::sort(unique.begin(), unique.end());
  unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
  uint64_t sum = 0;
  uint64_t n = 0;
  for (AllocationId id : unique) {
    auto it = entries_.find(id);
    if (it == entries_.end()) continue;
    sum += EntryTerm(id, it->second.size, it->second.digest);
    ++n;
  }
  return DigestCombine(sum, n);
}

}  // namespace cltrace::gpu
