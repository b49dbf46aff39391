// The `--json` documents of the verbs (info, stats, lifecycle, replay): one JSON object on
// standard output, written with RapidJSON (strings escaped, 64-bit integers exact).
//
// Thread-safety: one JsonOut per document, used by one thread.
//
// Example:
//   JsonOut j;
//   j.Begin();
//   j.Field("calls", uint64_t{1275});
//   j.End(out);  // {"calls":1275}\n
#ifndef CLTRACE_CLI_JSON_OUT_H_
#define CLTRACE_CLI_JSON_OUT_H_

#include <cstdint>
#include <ostream>
#include <string>

#include "absl/strings/string_view.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace cltrace::cli {

class JsonOut {
 public:
  using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

  void Begin() { w_.StartObject(); }
  // Closes the top-level object and writes the document and a newline to `out`.
  void End(std::ostream& out) {
    w_.EndObject();
    out << buffer_.GetString() << "\n";
  }
  void Key(absl::string_view key) {
    w_.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
  }
  void Str(absl::string_view s) { w_.String(s.data(), static_cast<rapidjson::SizeType>(s.size())); }
  void Field(absl::string_view key, absl::string_view value) {
    Key(key);
    Str(value);
  }
  void Field(absl::string_view key, const char* value) { Field(key, absl::string_view(value)); }
  void Field(absl::string_view key, const std::string& value) {
    Field(key, absl::string_view(value));
  }
  void Field(absl::string_view key, uint64_t value) {
    Key(key);
    w_.Uint64(value);
  }
  void Field(absl::string_view key, uint32_t value) { Field(key, uint64_t{value}); }
  void Field(absl::string_view key, int64_t value) {
    Key(key);
    w_.Int64(value);
  }
  void Field(absl::string_view key, int value) { Field(key, int64_t{value}); }
  void Field(absl::string_view key, double value) {
    Key(key);
    w_.Double(value);
  }
  void Field(absl::string_view key, bool value) {
    Key(key);
    w_.Bool(value);
  }
  Writer& w() { return w_; }

 private:
  rapidjson::StringBuffer buffer_;
  Writer w_{buffer_};
};

}  // namespace cltrace::cli

#endif  // CLTRACE_CLI_JSON_OUT_H_
