// Over 600 lines, kept whole: loading (dlopen, the hub build's choice), the check of the
// config's mapping against the op's schema and the boxed call share the loaded library's
// registry; a split would pass it between files (tests/rules/file_size_test.sh holds the list).
#include "runner/variants/op_library.hpp"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <sys/utsname.h>
#include <torch/version.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>

#include "runner/common/errors.hpp"
#include "runner/common/text.hpp"
#include "runner/variants/build_variant.hpp"
#include "runner/variants/variant.hpp"

// Hub kernels and wheels are built as Python extension modules: their .so
// refers to PyModule_Create2 (the module's init function, which attnsweep never
// calls). A weak definition here, exported from the executable (CMake
// ENABLE_EXPORTS), lets dlopen resolve it without a Python; the operators
// register themselves from static initializers.
extern "C" __attribute__((weak, visibility("default"))) void* PyModule_Create2(void*, int) { return nullptr; }

namespace attnsweep {
namespace {

namespace fs = std::filesystem;

// Refusals of the library, op or mapping name the config's variants entry, as
// the loader's own errors do, though they are found only once the op is loaded.
[[noreturn]] void refuse(const OpLibrarySpec& spec, const std::string& message) {
  const std::string text = "op library variant '" + spec.name + "': " + message + " (docs/op-libraries.md)";
  if (spec.config_file.empty()) throw BadInputError(text);
  throw ConfigError(spec.config_file, spec.where, "", text);
}

BuildTarget this_build() {
  BuildTarget target;
  target.torch_major = TORCH_VERSION_MAJOR;
  target.torch_minor = TORCH_VERSION_MINOR;
  int runtime = 0;
  if (cudaRuntimeGetVersion(&runtime) == cudaSuccess && runtime > 0) {
    target.cuda_major = runtime / 1000;
    target.cuda_minor = (runtime % 1000) / 10;
  }
  utsname system{};
  if (uname(&system) == 0) target.cpu = system.machine;
  return target;
}

std::vector<std::string> shared_objects_under(const fs::path& folder) {
  std::vector<std::string> files;
  std::error_code error;
  for (fs::recursive_directory_iterator it(folder, error), end; !error && it != end; it.increment(error)) {
    if (it.depth() > 3) it.disable_recursion_pending();
    if (it->is_regular_file() && it->path().extension() == ".so") files.push_back(it->path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// One process-wide record per library path: dlopen'ed once, with the operators it added.
struct LoadedLibrary {
  std::vector<c10::OperatorName> added;  // operators registered while it loaded
};
std::mutex& loading_mutex() {
  static std::mutex mutex;
  return mutex;
}
std::map<std::string, LoadedLibrary>& loaded_libraries() {
  static std::map<std::string, LoadedLibrary> libraries;
  return libraries;
}

const LoadedLibrary& load_files(const OpLibrarySpec& spec) {
  auto& libraries = loaded_libraries();
  const auto found = libraries.find(spec.library);
  if (found != libraries.end()) return found->second;
  const std::vector<std::string> files = op_library_files(spec);
  auto& dispatcher = c10::Dispatcher::singleton();
  std::set<std::string> before;
  for (const auto& name : dispatcher.getAllOpNames()) before.insert(toString(name));
  for (const auto& file : files) {
    if (!dlopen(file.c_str(), RTLD_NOW | RTLD_GLOBAL)) {
      const char* why = dlerror();
      refuse(spec, "cannot load " + file + ": " + (why ? why : "unknown dlopen error") +
                       " (an undefined symbol means it was built for another torch or CUDA)");
    }
  }
  LoadedLibrary library;
  for (const auto& name : dispatcher.getAllOpNames()) {
    if (!before.count(toString(name))) library.added.push_back(name);
  }
  return libraries.emplace(spec.library, std::move(library)).first->second;
}

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& name : names) text += (text.empty() ? "" : ", ") + name;
  return text.empty() ? "none" : text;
}

c10::OperatorHandle find_operator(const OpLibrarySpec& spec, const LoadedLibrary& library) {
  auto& dispatcher = c10::Dispatcher::singleton();
  std::vector<std::string> added;
  for (const auto& name : library.added) added.push_back(toString(name));
  std::string op = spec.op, overload;
  const auto dot = op.find('.');
  if (dot != std::string::npos) {
    overload = op.substr(dot + 1);
    op = op.substr(0, dot);
  }
  if (op.find("::") == std::string::npos) {
    // `op` alone: the one operator of that name the library registered (a hub
    // kernel's namespace carries a hash of its source, _flash_attn2_<hash>).
    std::vector<std::string> matches;
    for (const auto& name : library.added) {
      const std::string& full = name.name;
      if (full.size() > op.size() + 2 && full.compare(full.size() - op.size() - 2, std::string::npos, "::" + op) == 0 &&
          name.overload_name == overload) {
        matches.push_back(full);
      }
    }
    if (matches.size() != 1) {
      refuse(spec, "op '" + spec.op + "' " + (matches.empty() ? "is not among" : "is ambiguous among") +
                       " the operators the library registered: " + joined(added) + "; give namespace::op");
    }
    op = matches.front();
  }
  const auto handle = dispatcher.findSchema({op, overload});
  if (!handle) refuse(spec, "no operator " + spec.op + " after loading; the library registered: " + joined(added));
  return *handle;
}

// A value written under `fixed:` as the argument's type wants it.
c10::IValue fixed_value(const OpLibrarySpec& spec, const c10::Argument& argument, const std::string& text) {
  const c10::TypePtr& type = argument.type();
  const c10::TypePtr base = type->kind() == c10::TypeKind::OptionalType ? type->castRaw<c10::OptionalType>()->getElementType() : type;
  const auto bad = [&](const std::string& wanted) -> c10::IValue {
    refuse(spec, "fixed." + argument.name() + ": '" + text + "' is not " + wanted + " (the schema says " +
                     type->str() + ")");
  };
  if (text == "none" || text == "None" || text == "null" || text == "~") {
    if (type->kind() != c10::TypeKind::OptionalType) return bad("allowed: it is not optional");
    return c10::IValue();
  }
  try {
    std::size_t used = 0;
    switch (base->kind()) {
      case c10::TypeKind::BoolType:
        if (text == "true" || text == "True") return true;
        if (text == "false" || text == "False") return false;
        return bad("true or false");
      case c10::TypeKind::IntType: {
        const long long value = std::stoll(text, &used);
        return used == text.size() ? c10::IValue(static_cast<int64_t>(value)) : bad("an integer");
      }
      case c10::TypeKind::FloatType: {
        const double value = std::stod(text, &used);
        return used == text.size() ? c10::IValue(value) : bad("a number");
      }
      case c10::TypeKind::StringType:
        return c10::IValue(text);
      default:
        return bad("a value attnsweep can give (bool, int, float, str or none)");
    }
  } catch (const BadInputError&) {
    throw;
  } catch (const std::exception&) {
    return bad(base->kind() == c10::TypeKind::IntType ? "an integer" : "a number");
  }
}

bool takes(const c10::Argument& argument, c10::TypeKind kind) {
  const c10::TypePtr& type = argument.type();
  if (type->kind() == kind) return true;
  return type->kind() == c10::TypeKind::OptionalType &&
         type->castRaw<c10::OptionalType>()->getElementType()->kind() == kind;
}

// What an op threw that is not a std::exception (`throw 42`), carried on as one.
struct NonStandardException : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class OpLibraryVariant final : public Variant {
 public:
  OpLibraryVariant(OpLibrarySpec spec, c10::OperatorHandle op) : spec_(std::move(spec)), op_(std::move(op)) {
    check_mapping();
  }

  std::string name() const override { return spec_.name; }

  // The op is the judge of what it supports: one call, its refusal is the reason.
  // Ops refuse with a c10::Error (TORCH_CHECK) or, through the torch stable ABI
  // (FlashAttention-3's wheel), with a plain std::exception: both are refusals.
  // Anything else thrown is not a refusal but a defect of the op: an error.
  Support check(const AttentionInputs& inputs) const override {
    if (Support layout = layout_support(inputs); !layout.supported) return layout;
    if (Support mask = mask_support(inputs); !mask.supported) return mask;
    if (inputs.scores.softcap && !generates("softcap")) {
      return {false, "soft-capping (softcap " + softcap_text(*inputs.scores.softcap) +
                         "): the variant's arguments: mapping gives the op no softcap (FlashAttention's float "
                         "softcap, 0 for none; docs/op-libraries.md)"};
    }
    if (inputs.alibi_slopes.defined() && !generates("alibi_slopes")) {
      return {false, "ALiBi: the variant's arguments: mapping gives the op no alibi_slopes (FlashAttention's float32 "
                     "slopes, one per query head; docs/op-libraries.md)"};
    }
    if (inputs.quantized && !(generates("descale_q") && generates("descale_k") && generates("descale_v"))) {
      return {false, "fp8: the variant's arguments: mapping gives the op no descale_q, descale_k and descale_v (float32 "
                     "(batch, kv_heads), FlashAttention-3's; without them it would read the quantised values unscaled; "
                     "docs/op-libraries.md)"};
    }
    if (inputs.sinks.defined() && !generates("sinks")) {
      return {false, "attention sinks: the variant's arguments: mapping gives the op no sinks (a float32 logit per "
                     "query head, e.g. vLLM FlashAttention's s_aux; docs/op-libraries.md)"};
    }
    try {
      (void)forward(inputs);
      return {};
    } catch (const c10::Error& error) {
      return {false, refusal_text(text::first_line(error.what_without_backtrace()))};
    } catch (const NonStandardException&) {
      throw;
    } catch (const std::exception& error) {
      return {false, refusal_text(error.what())};
    }
  }

  // The laid-out copies belong to the case that made them. The op worked on
  // them, not on the shared inputs: compared with a fresh layout of those, they
  // say whether it wrote into its inputs (the case runner checks the shared ones).
  std::string end_case() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    std::string changed;
    try {
      for (const LaidOut& tensor : prepared_.copies) {
        if (!at::equal(tensor.source, tensor.copy)) changed += (changed.empty() ? "" : ", ") + tensor.name;
      }
    } catch (const std::exception& error) {
      changed = std::string("unknown: the copies could not be read back (") + text::first_line(error.what()) + ")";
    }
    prepared_ = {};
    return changed;
  }

  // Differentiable when autograd reaches a kernel that differentiates: the op's
  // own Autograd kernel (for every device, or this device's AutogradCPU or
  // AutogradCUDA), or a CompositeImplicitAutograd one, whose ATen ops autograd
  // differentiates; but the dispatcher takes the composite kernel for autograd
  // only where no backend kernel (this device's, or CompositeExplicitAutograd)
  // is registered. Anything else meets PyTorch's autograd fallback, which has no
  // derivative.
  std::string backward_refusal(const AttentionInputs& inputs) const override {
    using c10::DispatchKey;
    const bool cuda = inputs.query.is_cuda();
    const DispatchKey device_autograd = cuda ? DispatchKey::AutogradCUDA : DispatchKey::AutogradCPU;
    const DispatchKey device_backend = cuda ? DispatchKey::CUDA : DispatchKey::CPU;
    if (op_.hasKernelForDispatchKey(DispatchKey::Autograd) || op_.hasKernelForDispatchKey(device_autograd)) return "";
    const bool backend_kernel = op_.hasKernelForDispatchKey(device_backend) ||
                                op_.hasKernelForDispatchKey(DispatchKey::CompositeExplicitAutograd);
    const bool composite = op_.hasKernelForDispatchKey(DispatchKey::CompositeImplicitAutograd);
    if (composite && !backend_kernel) return "";
    return "op " + spec_.op + " has no autograd kernel (no Autograd or " + std::string(c10::toString(device_autograd)) +
           " registration" +
           (composite ? "; its CompositeImplicitAutograd kernel is not used beside its " +
                            std::string(c10::toString(device_backend)) + " or CompositeExplicitAutograd one"
                      : ", nor a CompositeImplicitAutograd one") +
           "), so it has no backward: a forward-only op";
  }

  at::Tensor forward(const AttentionInputs& inputs) const override {
    // The arguments were put together once for these inputs: a timed forward only copies them.
    torch::jit::Stack stack = prepare(inputs).arguments;
    try {
      op_.callBoxed(&stack);
    } catch (const std::exception&) {
      throw;
    } catch (...) {
      throw NonStandardException(non_standard_exception_message());
    }
    const at::Tensor& out = stack.at(static_cast<std::size_t>(spec_.output)).toTensor();
    // A packed batch's output stays packed, (total_q, heads, head_dim); else back
    // to [batch, heads, seq, head_dim] as a view: no kernel.
    if (inputs.packed) return out;
    return spec_.layout == OpLayout::bshd ? out.transpose(1, 2) : out;
  }

 private:
  // A tensor the op gets, made in its layout from the shared inputs, and the
  // shared tensor it was made from in that layout (a view, not a copy):
  // equal after the case unless the op wrote into its input.
  struct LaidOut {
    std::string name;
    at::Tensor copy, source;
  };
  struct Prepared {
    std::uint64_t draw_id = 0;   // the inputs the tensors were laid out from (AttentionInputs::draw_id)
    std::vector<LaidOut> copies;  // query, key, value
    torch::jit::Stack arguments;  // every argument of a call, in the schema's order
  };

  // A refusal on one line, up to a length a table can show. c10::Error's first
  // line is the message; a stable-ABI exception (FA3's) starts with
  // "function, file:line" and says why on the next line, so all its lines are kept.
  static std::string refusal_text(const std::string& message) {
    constexpr std::size_t kLongest = 400;
    std::string line = text::one_line(message);
    if (line.size() > kLongest) line = line.substr(0, kLongest) + "...";
    return line;
  }

  std::string non_standard_exception_message() const {
    return "op " + spec_.op + " threw a C++ exception that is not a std::exception (the op's defect, not a refusal)";
  }

  // The op's layout is made once per case, outside every timed forward, so the
  // counts and times are the op's alone. Kept for one draw of inputs only
  // (never keyed on an address: a new case's tensors may reuse freed memory);
  // inputs without a draw id are laid out anew on every call.
  // q, k and v as the op takes them: [batch, heads, seq, head_dim] or [batch,
  // seq, heads, head_dim]; a variable-length batch's packed rows (total, heads,
  // head_dim); a paged cache's pages (pages, page_size, kv_heads, head_dim) for k and v.
  const Prepared& prepare(const AttentionInputs& inputs) const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (inputs.draw_id == 0 || prepared_.draw_id != inputs.draw_id || prepared_.copies.empty()) {
      const auto layout = [&](const at::Tensor& t) { return spec_.layout == OpLayout::bshd ? t.transpose(1, 2) : t; };
      at::Tensor sources[] = {layout(inputs.query), layout(inputs.key), layout(inputs.value)};
      if (inputs.packed) sources[0] = inputs.packed->query;
      if (inputs.paged) {
        sources[1] = inputs.paged->key;
        sources[2] = inputs.paged->value;
      } else if (inputs.packed) {
        sources[1] = inputs.packed->key;
        sources[2] = inputs.packed->value;
      }
      prepared_ = {};  // free the previous case's copies before making these
      prepared_.draw_id = inputs.draw_id;
      const char* names[] = {"query", "key", "value"};
      for (int i = 0; i < 3; ++i) {
        // q, k, v already in the op's layout are handed over as they are (the
        // case runner's input guard sees a write into them); a transposed view
        // is copied once; packed rows and pages are copied too, so that a write
        // into them is seen here, against the shared tensors.
        const bool shared_inputs = (i == 0 && !inputs.packed) || (i > 0 && !inputs.packed && !inputs.paged);
        const at::Tensor copy = shared_inputs && sources[i].is_contiguous()
                                    ? sources[i]
                                    : sources[i].clone(at::MemoryFormat::Contiguous);
        prepared_.copies.push_back({names[i], copy, sources[i]});
      }
      prepared_.arguments = arguments_for(inputs, prepared_.copies);
    }
    return prepared_;
  }

  // q, k, v as laid out first; then the mapped causal flag and scale, the
  // generated arguments, the fixed values, and every other argument's default.
  torch::jit::Stack arguments_for(const AttentionInputs& inputs, const std::vector<LaidOut>& copies) const {
    torch::jit::Stack stack;
    const auto& arguments = op_.schema().arguments();
    stack.reserve(arguments.size());
    for (std::size_t i = 0; i < arguments.size(); ++i) {
      const c10::Argument& argument = arguments[i];
      if (i < 3) {
        stack.emplace_back(copies[i].copy);
      } else if (argument.name() == spec_.causal_argument) {
        stack.emplace_back(inputs.mask.is_causal());
      } else if (argument.name() == spec_.scale_argument) {
        stack.emplace_back(inputs.scale);
      } else if (const auto generated = spec_.generated.find(argument.name()); generated != spec_.generated.end()) {
        stack.push_back(generated_value(generated->second, inputs));
      } else if (const auto fixed = fixed_.find(argument.name()); fixed != fixed_.end()) {
        stack.push_back(fixed->second);
      } else if (argument.default_value()) {
        stack.push_back(*argument.default_value());
      } else {
        stack.emplace_back();  // optional without a default: None (checked in check_mapping)
      }
    }
    return stack;
  }

  bool generates(const std::string& what) const {
    return std::any_of(spec_.generated.begin(), spec_.generated.end(),
                       [&](const auto& entry) { return entry.second == what; });
  }

  // What `arguments:` hands the op for this case (op_library_spec.hpp); None where the case has none.
  static c10::IValue generated_value(const std::string& what, const AttentionInputs& inputs) {
    const Mask& mask = inputs.mask;
    if (what == "window_left") return static_cast<std::int64_t>(mask.window_left.value_or(-1));
    if (what == "softcap") return inputs.scores.softcap.value_or(0.0);  // FlashAttention's 0: no soft-capping
    if (what == "alibi_slopes") return inputs.alibi_slopes.defined() ? c10::IValue(inputs.alibi_slopes) : c10::IValue();
    if (what == "sinks") return inputs.sinks.defined() ? c10::IValue(inputs.sinks) : c10::IValue();
    if (what == "descale_q" || what == "descale_k" || what == "descale_v") {
      if (!inputs.quantized) return c10::IValue();
      const AttentionInputs::Quantized& q = *inputs.quantized;
      const at::Tensor& descale = what == "descale_q" ? q.descale_q : what == "descale_k" ? q.descale_k : q.descale_v;
      const std::int64_t batch = inputs.packed ? static_cast<std::int64_t>(inputs.packed->q_lens.size()) : inputs.query.size(0);
      return descale.expand({batch, inputs.key.size(1)}).contiguous();
    }
    if (what == "window_right") {
      return static_cast<std::int64_t>(mask.is_causal() ? 0 : mask.window_right.value_or(-1));
    }
    if (what == "page_table") return inputs.paged ? c10::IValue(inputs.paged->page_table) : c10::IValue();
    if (what == "seqused_k") return inputs.paged ? c10::IValue(inputs.paged->seqused_k) : c10::IValue();
    if (!inputs.packed) return c10::IValue();
    if (what == "cu_seqlens_q") return inputs.packed->cu_seqlens_q;
    if (what == "max_seqlen_q") return inputs.packed->max_q;
    // A paged cache's keys are found through the page table and seqused_k, not packed.
    if (inputs.paged) return c10::IValue();
    if (what == "cu_seqlens_k") return inputs.packed->cu_seqlens_k;
    if (what == "max_seqlen_k") return inputs.packed->max_kv;
    return c10::IValue();
  }

  // A packed batch or a paged cache needs the arguments that describe it.
  Support layout_support(const AttentionInputs& inputs) const {
    std::vector<std::string> missing;
    if (inputs.packed || inputs.paged) {
      if (spec_.layout != OpLayout::bshd) {
        return {false, std::string(inputs.packed ? "a variable-length batch" : "a paged KV cache") +
                           ": attnsweep hands those to ops of layout bshd only (FlashAttention's)"};
      }
    }
    if (inputs.packed) {
      for (const char* what : {"cu_seqlens_q", "max_seqlen_q"}) {
        if (!generates(what)) missing.push_back(what);
      }
      if (!inputs.paged) {
        for (const char* what : {"cu_seqlens_k", "max_seqlen_k"}) {
          if (!generates(what)) missing.push_back(what);
        }
      }
    }
    if (inputs.paged) {
      for (const char* what : {"page_table", "seqused_k"}) {
        if (!generates(what)) missing.push_back(what);
      }
    }
    if (missing.empty()) return {};
    return {false, std::string(inputs.paged ? "a paged KV cache" : "a variable-length batch") +
                       ": the variant's arguments: mapping gives the op no " + text::join(missing, ", ") +
                       " (docs/op-libraries.md)"};
  }

  // The op's causal flag means the mapping's causal_alignment; a window needs
  // window_left and window_right. Where a mask's alignment is not the op's, it
  // is still the same mask when every sequence has as many queries as keys.
  Support mask_support(const AttentionInputs& inputs) const {
    const Mask& mask = inputs.mask;
    if (!mask.any()) return {};
    if (mask.windowed() && !(generates("window_left") && generates("window_right"))) {
      return {false, "the mask '" + mask.label() + "' cannot be passed: the variant's arguments: mapping gives the "
                     "op no window_left and window_right"};
    }
    // A window without a causal mask sits on the bottom-right diagonal (FlashAttention's).
    const CausalAlignment wanted = mask.is_causal() ? mask.causal : CausalAlignment::bottom_right;
    if (wanted == spec_.causal_alignment) return {};
    bool square = inputs.query.size(2) == inputs.key.size(2);
    if (inputs.packed) square = inputs.packed->q_lens == inputs.packed->kv_lens;
    if (square) return {};
    const char* const ours = spec_.causal_alignment == CausalAlignment::top_left ? "top left" : "bottom right";
    return {false, "the mask '" + mask.label() + "' cannot be passed: the op's causal flag is aligned to the " + ours +
                       " (causal_alignment in its mapping), this mask to the " +
                       (wanted == CausalAlignment::top_left ? "top left" : "bottom right") +
                       ", and they differ where seq_len_q != seq_len_kv"};
  }

  void check_mapping() {
    const c10::FunctionSchema& schema = op_.schema();
    const auto& arguments = schema.arguments();
    const std::string shown = toString(schema);
    if (arguments.size() < 3) refuse(spec_, "op " + shown + " takes fewer than three arguments (q, k, v)");
    for (std::size_t i = 0; i < 3; ++i) {
      if (arguments[i].type()->kind() != c10::TypeKind::TensorType) {
        refuse(spec_, "argument " + std::to_string(i) + " (" + arguments[i].name() + ") of " + shown +
                          " is not a Tensor; attnsweep passes q, k, v first");
      }
    }
    std::set<std::string> names;
    for (const auto& argument : arguments) names.insert(argument.name());
    const auto require = [&](const std::string& key, const std::string& name, c10::TypeKind kind, const char* what) {
      if (name.empty()) return;
      const auto it = std::find_if(arguments.begin(), arguments.end(),
                                   [&](const c10::Argument& a) { return a.name() == name; });
      if (it == arguments.end()) refuse(spec_, key + ": no argument '" + name + "' in " + shown);
      if (!takes(*it, kind)) refuse(spec_, key + ": argument '" + name + "' of " + shown + " is not " + what);
    };
    require("causal", spec_.causal_argument, c10::TypeKind::BoolType, "a bool");
    require("scale", spec_.scale_argument, c10::TypeKind::FloatType, "a float");
    for (const auto& [name, what] : spec_.generated) {
      if (what == "softcap") {
        require("arguments." + name, name, c10::TypeKind::FloatType, "a float");
        continue;
      }
      const bool window = what == "window_left" || what == "window_right";
      const bool number = window || what == "max_seqlen_q" || what == "max_seqlen_k";
      require("arguments." + name, name, number ? c10::TypeKind::IntType : c10::TypeKind::TensorType,
              number ? "an int" : "a Tensor");
      const auto it = std::find_if(arguments.begin(), arguments.end(), [&](const c10::Argument& a) { return a.name() == name; });
      if (!window && it->type()->kind() != c10::TypeKind::OptionalType) {
        refuse(spec_, "arguments." + name + ": argument '" + name + "' of " + shown + " is not optional (" +
                          (number ? "int?" : "Tensor?") + "): attnsweep passes None where a case has no " + what);
      }
    }
    for (const auto& [name, text] : spec_.fixed) {
      const auto it = std::find_if(arguments.begin(), arguments.end(),
                                   [&](const c10::Argument& a) { return a.name() == name; });
      if (it == arguments.end()) refuse(spec_, "fixed." + name + ": no such argument in " + shown);
      fixed_[name] = fixed_value(spec_, *it, text);
    }
    for (std::size_t i = 3; i < arguments.size(); ++i) {
      const c10::Argument& argument = arguments[i];
      const bool mapped = argument.name() == spec_.causal_argument || argument.name() == spec_.scale_argument ||
                          fixed_.count(argument.name()) || spec_.generated.count(argument.name());
      if (!mapped && !argument.default_value() && argument.type()->kind() != c10::TypeKind::OptionalType) {
        refuse(spec_, "argument '" + argument.name() + "' of " + shown +
                          " has no default; give its value under fixed:");
      }
    }
    const auto& returns = schema.returns();
    if (static_cast<std::size_t>(spec_.output) >= returns.size()) {
      refuse(spec_, "output: " + std::to_string(spec_.output) + " but " + shown + " returns " +
                        std::to_string(returns.size()) + " value(s)");
    }
    if (returns[static_cast<std::size_t>(spec_.output)].type()->kind() != c10::TypeKind::TensorType) {
      refuse(spec_, "output: return " + std::to_string(spec_.output) + " of " + shown + " is not a Tensor");
    }
  }

  OpLibrarySpec spec_;
  c10::OperatorHandle op_;
  std::map<std::string, c10::IValue> fixed_;
  mutable std::mutex mutex_;
  mutable Prepared prepared_;
};

std::map<std::string, std::unique_ptr<OpLibraryVariant>>& variants() {
  static std::map<std::string, std::unique_ptr<OpLibraryVariant>> loaded;
  return loaded;
}

}  // namespace

std::vector<std::string> op_library_files(const OpLibrarySpec& spec, std::string* chosen) {
  const fs::path path(spec.library);
  std::error_code error;
  const auto status = fs::status(path, error);
  if (error || !fs::exists(status)) refuse(spec, spec.library_as_written + " (" + spec.library + "): no such file or folder");
  if (fs::is_regular_file(status)) return {spec.library};
  if (!fs::is_directory(status)) refuse(spec, spec.library + ": not a file or a folder");
  if (fs::is_directory(path / "build")) {
    std::vector<std::string> folders;
    for (const auto& entry : fs::directory_iterator(path / "build", error)) {
      if (entry.is_directory()) folders.push_back(entry.path().filename().string());
    }
    std::sort(folders.begin(), folders.end());
    const auto ranked = rank_build_variants(folders, this_build());
    if (ranked.empty() || !ranked.front().accepted) {
      std::string reasons;
      for (const auto& decision : ranked) reasons += (reasons.empty() ? "" : "; ") + decision.name + ": " + decision.reason;
      const BuildTarget target = this_build();
      refuse(spec, spec.library + "/build has no build for torch " + std::to_string(target.torch_major) + "." +
                       std::to_string(target.torch_minor) + (target.cuda_major ? " with CUDA " +
                       std::to_string(*target.cuda_major) + "." + std::to_string(target.cuda_minor.value_or(0)) : "") +
                       " on " + target.cpu + ": " + (reasons.empty() ? "it is empty" : reasons));
    }
    if (chosen) *chosen = ranked.front().name;
    const auto files = shared_objects_under(path / "build" / ranked.front().name);
    if (files.empty()) refuse(spec, (path / "build" / ranked.front().name).string() + " holds no .so");
    return files;
  }
  const auto files = shared_objects_under(path);
  if (files.empty()) refuse(spec, spec.library + " holds no .so (a wheel unpacked there, or a hub kernel's folder with build/)");
  return files;
}

const Variant& load_op_library_variant(const OpLibrarySpec& spec) {
  std::lock_guard<std::mutex> lock(loading_mutex());
  auto& loaded = variants();
  const auto found = loaded.find(spec.name);
  if (found != loaded.end()) return *found->second;
  const LoadedLibrary& library = load_files(spec);
  auto variant = std::make_unique<OpLibraryVariant>(spec, find_operator(spec, library));
  return *loaded.emplace(spec.name, std::move(variant)).first->second;
}

std::string op_library_schema(const OpLibrarySpec& spec) {
  std::lock_guard<std::mutex> lock(loading_mutex());
  return toString(find_operator(spec, load_files(spec)).schema());
}

}  // namespace attnsweep
