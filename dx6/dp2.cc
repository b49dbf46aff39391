#include "dx6/dp2.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ddi/ddi_abi.h"

namespace cltrace::gpu {
namespace {

uint16_t ReadU16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }

// Vertices a non-indexed primitive command {u16 wVStart} with `count` primitives spans.
uint64_t RunVertexCount(Dp2Op op, uint16_t count) {
  switch (op) {
    case Dp2Op::kLineList:
      return 2ull * count;
    case Dp2Op::kLineStrip:
      return 1ull + count;
    case Dp2Op::kTriangleList:
      return 3ull * count;
    default:  // kTriangleStrip, kTriangleFan
      return 2ull + count;
  }
}

// Payload size of a known opcode with `count` entries; -1 for unknown opcodes.
int64_t PayloadSize(uint8_t op, uint16_t count) {
  switch (static_cast<Dp2Op>(op)) {
    case Dp2Op::kPoints:
    case Dp2Op::kIndexedLineList:
      return 4 * static_cast<int64_t>(count);
    case Dp2Op::kIndexedTriangleList:
    case Dp2Op::kRenderState:
    case Dp2Op::kTextureStageState:
    case Dp2Op::kWInfo:
      return 8 * static_cast<int64_t>(count);
    case Dp2Op::kViewportInfo:
      return 16 * static_cast<int64_t>(count);
    case Dp2Op::kLineList:
    case Dp2Op::kLineStrip:
    case Dp2Op::kTriangleList:
    case Dp2Op::kTriangleStrip:
    case Dp2Op::kTriangleFan:
      return 2;
  }
  return -1;
}

}  // namespace

std::string Dp2OpName(uint8_t op) {
  switch (static_cast<Dp2Op>(op)) {
    case Dp2Op::kPoints:
      return "POINTS";
    case Dp2Op::kIndexedLineList:
      return "INDEXEDLINELIST";
    case Dp2Op::kIndexedTriangleList:
      return "INDEXEDTRIANGLELIST";
    case Dp2Op::kRenderState:
      return "RENDERSTATE";
    case Dp2Op::kLineList:
      return "LINELIST";
    case Dp2Op::kLineStrip:
      return "LINESTRIP";
    case Dp2Op::kTriangleList:
      return "TRIANGLELIST";
    case Dp2Op::kTriangleStrip:
      return "TRIANGLESTRIP";
    case Dp2Op::kTriangleFan:
      return "TRIANGLEFAN";
    case Dp2Op::kTextureStageState:
      return "TEXTURESTAGESTATE";
    case Dp2Op::kViewportInfo:
      return "VIEWPORTINFO";
    case Dp2Op::kWInfo:
      return "WINFO";
  }
  return absl::StrFormat("DP2OP_%u", op);
}

void Dp2Writer::Run(Dp2Op op, uint16_t vstart, uint16_t count) {
  Header(op, count);
  U16(vstart);
}
void Dp2Writer::Header(Dp2Op op, uint16_t count) {
  bytes_.push_back(static_cast<uint8_t>(op));
  bytes_.push_back(0);
  U16(count);
}
void Dp2Writer::U16(uint16_t v) {
  bytes_.push_back(static_cast<uint8_t>(v));
  bytes_.push_back(static_cast<uint8_t>(v >> 8));
}
void Dp2Writer::U32(uint32_t v) {
  U16(static_cast<uint16_t>(v));
  U16(static_cast<uint16_t>(v >> 16));
}

void Dp2Writer::RenderState(uint32_t state, uint32_t value) {
  Header(Dp2Op::kRenderState, 1);
  U32(state);
  U32(value);
}
void Dp2Writer::TextureStageState(uint16_t stage, uint16_t state, uint32_t value) {
  Header(Dp2Op::kTextureStageState, 1);
  U16(stage);
  U16(state);
  U32(value);
}
void Dp2Writer::Viewport(uint32_t x, uint32_t y, uint32_t width, uint32_t height) {
  Header(Dp2Op::kViewportInfo, 1);
  U32(x);
  U32(y);
  U32(width);
  U32(height);
}
void Dp2Writer::WInfo(float w_near, float w_far) {
  Header(Dp2Op::kWInfo, 1);
  uint32_t a, b;
  std::memcpy(&a, &w_near, 4);
  std::memcpy(&b, &w_far, 4);
  U32(a);
  U32(b);
}
void Dp2Writer::Points(uint16_t count, uint16_t vstart) {
  Header(Dp2Op::kPoints, 1);
  U16(count);
  U16(vstart);
}
void Dp2Writer::LineList(uint16_t vstart, uint16_t count) { Run(Dp2Op::kLineList, vstart, count); }
void Dp2Writer::LineStrip(uint16_t vstart, uint16_t count) {
  Run(Dp2Op::kLineStrip, vstart, count);
}
void Dp2Writer::TriangleList(uint16_t vstart, uint16_t count) {
  Run(Dp2Op::kTriangleList, vstart, count);
}
void Dp2Writer::TriangleStrip(uint16_t vstart, uint16_t count) {
  Run(Dp2Op::kTriangleStrip, vstart, count);
}
void Dp2Writer::TriangleFan(uint16_t vstart, uint16_t count) {
  Run(Dp2Op::kTriangleFan, vstart, count);
}
void Dp2Writer::IndexedTriangleList(absl::Span<const uint16_t> indices) {
  Header(Dp2Op::kIndexedTriangleList, static_cast<uint16_t>(indices.size() / 3));
  for (size_t i = 0; i + 3 <= indices.size(); i += 3) {
    U16(indices[i]);
    U16(indices[i + 1]);
    U16(indices[i + 2]);
    U16(0);  // wFlags
  }
}
void Dp2Writer::IndexedLineList(absl::Span<const uint16_t> indices) {
  Header(Dp2Op::kIndexedLineList, static_cast<uint16_t>(indices.size() / 2));
  for (size_t i = 0; i + 2 <= indices.size(); i += 2) {
    U16(indices[i]);
    U16(indices[i + 1]);
  }
}
void Dp2Writer::Raw(absl::Span<const uint8_t> bytes) {
  bytes_.insert(bytes_.end(), bytes.begin(), bytes.end());
}

Dp2ParseResult ParseDp2(absl::Span<const uint8_t> commands, uint32_t vertex_length,
                        absl::FunctionRef<void(const Dp2Command&)> visit) {
  return ParseDp2(commands, vertex_length, visit,
                  [](uint8_t, uint16_t, absl::Span<const uint8_t>) -> int64_t { return -1; });
}

Dp2ParseResult ParseDp2(
    absl::Span<const uint8_t> commands, uint32_t vertex_length,
    absl::FunctionRef<void(const Dp2Command&)> visit,
    absl::FunctionRef<int64_t(uint8_t, uint16_t, absl::Span<const uint8_t>)> unknown) {
  Dp2ParseResult r;
  size_t pos = 0;
  auto fail = [&](std::string why) {
    r.ok = false;
    r.error_offset = static_cast<uint32_t>(pos);
    r.error = absl::StrCat(why, " at command offset ", pos);
    return r;
  };
  while (pos < commands.size()) {
    if (commands.size() - pos < 4) return fail("truncated command header");
    const uint8_t* h = commands.data() + pos;
    Dp2Command c;
    c.op = h[0];
    c.count = ReadU16(h + 2);
    c.offset = static_cast<uint32_t>(pos);
    const absl::Span<const uint8_t> rest = commands.subspan(pos + 4);
    int64_t payload = PayloadSize(c.op, c.count);
    if (payload < 0) {
      payload = unknown(c.op, c.count, rest);
      if (payload < 0) return fail(absl::StrCat("unknown opcode ", Dp2OpName(c.op)));
    }
    if (static_cast<uint64_t>(payload) > rest.size()) {
      return fail(absl::StrCat(Dp2OpName(c.op), " needs ", payload, " payload bytes, ", rest.size(),
                               " remain in dwCommandLength"));
    }
    c.payload = rest.subspan(0, static_cast<size_t>(payload));
    // Vertex range of primitive commands (R80: stay within dwVertexLength).
    const uint8_t* p = c.payload.data();
    uint64_t lo = UINT64_MAX, hi = 0;
    auto use = [&](uint64_t first, uint64_t end) {
      if (end <= first) return;
      lo = std::min(lo, first);
      hi = std::max(hi, end);
    };
    switch (static_cast<Dp2Op>(c.op)) {
      case Dp2Op::kPoints:
        for (uint16_t i = 0; i < c.count; ++i) {
          uint16_t n = ReadU16(p + 4 * i), vs = ReadU16(p + 4 * i + 2);
          use(vs, static_cast<uint64_t>(vs) + n);
          c.primitive_count += n;
        }
        break;
      case Dp2Op::kIndexedLineList:
      case Dp2Op::kIndexedTriangleList: {
        const bool tri = static_cast<Dp2Op>(c.op) == Dp2Op::kIndexedTriangleList;
        const int per = tri ? 3 : 2, stride = tri ? 8 : 4;
        for (uint16_t i = 0; i < c.count; ++i) {
          for (int k = 0; k < per; ++k) {
            uint16_t v = ReadU16(p + stride * i + 2 * k);
            use(v, static_cast<uint64_t>(v) + 1);
          }
        }
        c.primitive_count = c.count;
        break;
      }
      case Dp2Op::kLineList:
      case Dp2Op::kLineStrip:
      case Dp2Op::kTriangleList:
      case Dp2Op::kTriangleStrip:
      case Dp2Op::kTriangleFan: {
        const uint64_t vstart = ReadU16(p);
        use(vstart, vstart + RunVertexCount(static_cast<Dp2Op>(c.op), c.count));
        c.primitive_count = c.count;
        break;
      }
      default:
        break;
    }
    if (hi > 0) {
      if (hi > vertex_length) {
        return fail(absl::StrCat(Dp2OpName(c.op), " references vertex ", hi - 1,
                                 " beyond dwVertexLength ", vertex_length));
      }
      c.first_vertex = static_cast<uint32_t>(lo);
      c.vertex_end = static_cast<uint32_t>(hi);
    }
    visit(c);
    ++r.commands;
    r.primitives += c.primitive_count;
    pos += 4 + static_cast<size_t>(payload);
  }
  return r;
}

}  // namespace cltrace::gpu
