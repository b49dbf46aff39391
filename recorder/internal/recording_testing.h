// Test support for the recorder's tests (recorder/*_test.cc): recording the fake driver
// (recorder/internal/fake_driver.h) into memory and reading the recording back.
//
// Thread-safety: none (test code).
#ifndef CLTRACE_RECORDER_INTERNAL_RECORDING_TESTING_H_
#define CLTRACE_RECORDER_INTERNAL_RECORDING_TESTING_H_

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "format/testing/trace_bytes.h"
#include "format/trace_writer.h"
#include "gtest/gtest.h"
#include "recorder/internal/fake_driver.h"
#include "recorder/recorder.h"

namespace cltrace::recorder::testing {

// A test that records into bytes_ (unless its options name a sink or a file).
class RecordingTest : public ::testing::Test {
 protected:
  // The started recorder; nullptr (and a test failure) if it does not start.
  std::unique_ptr<Recorder> Start(Options o = Options()) {
    if (o.sink == nullptr && o.output_path.empty()) {
      o.sink = std::make_unique<format::StringSink>(&bytes_);
    }
    auto rec = Recorder::Start(std::move(o));
    EXPECT_TRUE(rec.ok()) << rec.status();
    return rec.ok() ? std::move(*rec) : nullptr;
  }

  std::string bytes_;
};

// Everything a recording holds, its events in seq order; status is the open error if the
// bytes do not open.
inline format::testing::ReadResult ReadRecording(absl::string_view bytes) {
  format::testing::ReadResult r = format::testing::ReadAllBytes(bytes);
  if (!r.open_status.ok()) r.status = r.open_status;
  std::sort(r.events.begin(), r.events.end(),
            [](const format::Event& a, const format::Event& b) { return a.seq < b.seq; });
  return r;
}

}  // namespace cltrace::recorder::testing

#endif  // CLTRACE_RECORDER_INTERNAL_RECORDING_TESTING_H_
