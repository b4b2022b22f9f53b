// Variants that fail on purpose, selectable only with ATTNSWEEP_TEST_VARIANTS=1,
// so the reliability tests can show what a crash, a hang and a poisoned CUDA
// context do to a sweep (docs/reliability.md).
#include <ATen/ATen.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "runner/variants/naive_attention.hpp"
#include "runner/variants/variant.hpp"

namespace attnsweep {
namespace {

class TestAbort final : public Variant {
 public:
  std::string name() const override { return "test_abort"; }
  Support check(const AttentionInputs&) const override { return {}; }
  at::Tensor forward(const AttentionInputs&) const override { std::abort(); }
};

class TestHang final : public Variant {
 public:
  std::string name() const override { return "test_hang"; }
  Support check(const AttentionInputs&) const override { return {}; }
  at::Tensor forward(const AttentionInputs&) const override {
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  }
};

// Indexes far past the end: on CUDA a device-side assert, which poisons the
// process's CUDA context; on the CPU an IndexError.
class TestDeviceFault final : public Variant {
 public:
  std::string name() const override { return "test_device_fault"; }
  Support check(const AttentionInputs&) const override { return {}; }
  at::Tensor forward(const AttentionInputs& inputs) const override {
    const at::Tensor flat = inputs.query.flatten();
    const at::Tensor index = at::full({1}, flat.numel() + 1000000, flat.options().dtype(at::kLong));
    at::Tensor gathered = at::index(flat, {index});
    return gathered.sum().expand_as(inputs.query).contiguous();
  }
};

// naive attention that raises PyTorch's own alert for an operation without a
// deterministic implementation (at::Context::alertNotDeterministic, what
// index_add_ on CUDA and others call): unsupported in a deterministic case.
class TestNondeterministic final : public Variant {
 public:
  std::string name() const override { return "test_nondeterministic"; }
  Support check(const AttentionInputs& inputs) const override { return builtin_layout_support(inputs); }
  at::Tensor forward(const AttentionInputs& inputs) const override {
    at::globalContext().alertNotDeterministic("test_nondeterministic's forward");
    return naive_attention(inputs, MaskMode::out_of_place);
  }
};

// The one instance of a test variant, made on first use, that the registry hands out.
template <typename TestVariant>
const Variant& only_instance() {
  static const TestVariant instance;
  return instance;
}

}  // namespace

const Variant& test_nondeterministic_variant() { return only_instance<TestNondeterministic>(); }
const Variant& test_abort_variant() { return only_instance<TestAbort>(); }
const Variant& test_hang_variant() { return only_instance<TestHang>(); }
const Variant& test_device_fault_variant() { return only_instance<TestDeviceFault>(); }

}  // namespace attnsweep
