#include "cli/dx6_model_driver.h"

#include <memory>

#include "dx6/dx6_driver.h"

namespace cltrace::cli {
namespace {

class ModelDriver : public replay::Dx6Driver {
 public:
  explicit ModelDriver(gpu::PlantedBug bug) : driver_(gpu::Dx6DriverOptions{.bug = bug}) {}
  const DD_D3DBUFCALLBACKS* buffer_callbacks() override { return driver_.buffer_callbacks(); }
  const D3DHAL_CALLBACKS3* hal_callbacks3() override { return driver_.hal_callbacks3(); }
  D3DHAL_HCONTEXT CreateContext() override { return driver_.CreateContext(); }
  absl::Span<uint8_t> BufferMemory(DD_HSURFACE surface) override {
    return driver_.BufferMemory(surface);
  }

 private:
  gpu::Dx6Driver driver_;
};

}  // namespace

replay::Dx6DriverFactory Dx6ModelDriverFactory() {
  return [](gpu::PlantedBug bug) -> std::unique_ptr<replay::Dx6Driver> {
    return std::make_unique<ModelDriver>(bug);
  };
}

}  // namespace cltrace::cli
