#include "corpus/workloads/util.h"

namespace cltrace::workloads {

using runtime::Device;

absl::StatusOr<runtime::Resource*> MakeBuffer(Device* d, uint32_t bytes,
                                              D3D10_DDI_RESOURCE_USAGE usage, uint32_t bind) {
  runtime::ResourceDesc desc;
  desc.dimension = D3D10DDIRESOURCE_BUFFER;
  desc.usage = usage;
  desc.bind_flags = bind;
  desc.width = bytes;
  runtime::Resource* r = nullptr;
  if (HRESULT hr = d->CreateResource(desc, &r); hr != S_OK) return Failed("CreateResource", hr);
  return r;
}

absl::StatusOr<runtime::Resource*> MakeTexture(Device* d, uint32_t w, uint32_t h, uint32_t bind,
                                               uint32_t misc, bool primary) {
  runtime::ResourceDesc desc;
  desc.primary = primary;
  desc.dimension = D3D10DDIRESOURCE_TEXTURE2D;
  desc.bind_flags = bind;
  desc.misc_flags = misc;
  desc.format = 28;  // R8G8B8A8_UNORM
  desc.width = w;
  desc.height = h;
  runtime::Resource* r = nullptr;
  if (HRESULT hr = d->CreateResource(desc, &r); hr != S_OK) return Failed("CreateResource", hr);
  return r;
}

absl::StatusOr<runtime::View*> MakeView(Device* d, runtime::ViewKind kind, runtime::Resource* r) {
  runtime::ViewDesc desc;
  desc.format = r->desc().format;
  desc.dimension = r->desc().dimension;
  desc.num_elements = r->desc().width;
  runtime::View* v = nullptr;
  if (HRESULT hr = d->CreateView(kind, r, desc, &v); hr != S_OK) return Failed("CreateView", hr);
  return v;
}

absl::StatusOr<runtime::Shader*> MakeShader(Device* d, runtime::Stage stage, uint32_t tokens) {
  std::vector<uint32_t> code(tokens < 2 ? 2 : tokens, 0);
  code[0] = 0x00050000u | static_cast<uint32_t>(stage);  // version token
  code[1] = static_cast<uint32_t>(code.size());
  for (size_t i = 2; i < code.size(); ++i) code[i] = static_cast<uint32_t>(i * 2654435761u);
  runtime::Shader* s = nullptr;
  if (HRESULT hr = d->CreateShader(stage, code.data(), &s); hr != S_OK) {
    return Failed("CreateShader", hr);
  }
  return s;
}

void ListQueue::Push(runtime::CommandList* cl) {
  std::unique_lock<std::mutex> lock(mu_);
  changed_.wait(lock, [this] { return items_.size() < capacity_; });
  items_.push_back(cl);
  changed_.notify_all();
}

size_t ListQueue::Size() {
  std::lock_guard<std::mutex> lock(mu_);
  return items_.size();
}

bool Turns::OnlyLeft(int party) {
  if (!enabled_) return false;
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t p = 0; p < left_.size(); ++p) {
    if (static_cast<int>(p) != party && !left_[p]) return false;
  }
  return true;
}

void Turns::Begin(int party) {
  if (!enabled_) return;
  std::unique_lock<std::mutex> lock(mu_);
  changed_.wait(lock, [&] { return turn_ == party; });
}

void Turns::End(int party) {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mu_);
  PassLocked(party);
}

void Turns::Leave(int party) {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mu_);
  left_[party] = true;
  if (turn_ == party) PassLocked(party);
}

void Turns::PassLocked(int party) {
  const int n = static_cast<int>(left_.size());
  for (int k = 1; k <= n; ++k) {
    const int next = (party + k) % n;
    if (!left_[next]) {
      turn_ = next;
      changed_.notify_all();
      return;
    }
  }
  turn_ = -1;  // everyone left
  changed_.notify_all();
}

runtime::CommandList* ListQueue::Pop() {
  std::unique_lock<std::mutex> lock(mu_);
  changed_.wait(lock, [this] { return !items_.empty(); });
  runtime::CommandList* cl = items_.front();
  items_.pop_front();
  changed_.notify_all();
  return cl;
}

}  // namespace cltrace::workloads
