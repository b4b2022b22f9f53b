// Backward passes on the CPU, end to end through the binary (issue 23): every
// CPU variant's backward and training step timed and its gradients checked
// against float64 autograd; op libraries differentiable through an Autograd or
// a CompositeImplicitAutograd kernel, forward-only ops unsupported with the
// reason, and a wrong backward caught by the gradient check rather than stored
// as right. tests/support/misbehaving_ops.cpp holds the test ops.
#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <string>

#include "tests/support/cli_test.hpp"

namespace {

using attnsweep::testing::Outcome;
using attnsweep::testing::run_attnsweep;

std::string op_variant(const std::string& name, const std::string& library, const std::string& op,
                       const std::string& extra = "") {
  return "  - name: " + name + "\n    kind: op_library\n    library: '" + library + "'\n    op: " + op +
         "\n    causal: is_causal\n" + extra;
}

const std::string kMisbehaving = ATTNSWEEP_MISBEHAVING_OPS_LIBRARY;

std::string config(const std::string& variants, const std::string& passes = "[forward, backward, forward_backward]") {
  return "name: backward\ndevice: cpu\nvariants:\n" + variants +
         "dtypes: [fp32]\ncausal: [true]\npasses: " + passes +
         "\nshapes:\n  - {batch: 2, heads: 4, kv_heads: 2, seq_len: 48, head_dim: 16}\n"
         "measure: {warmup: 1, profiled_forwards: 2, min_samples: 4, max_samples: 4}\n";
}

class CliBackward : public attnsweep::testing::CliTest {
 protected:
  CliBackward() : CliTest("attnsweep-cli-backward") {}
  Outcome run(const std::string& text, const std::string& db_name = "results.db") {
    return run_config("run", "sweep.yaml", text, db_name, "OMP_NUM_THREADS=1 ");
  }
};

struct Stored {
  std::string status, numerics, error, backend, backend_backward;
  double rel_error = -1, grad_q = -1, grad_k = -1, grad_v = -1, tflops_times_us = -1;
  int cpu_ops = -1;
};

Stored stored(const std::string& db, const std::string& variant, const std::string& pass) {
  SQLite::Database database(db, SQLite::OPEN_READONLY);
  SQLite::Statement query(database,
                          "SELECT status, coalesce(numerics, ''), coalesce(error_message, ''), coalesce(sdpa_backend, ''), "
                          "coalesce(sdpa_backend_backward, ''), coalesce(rel_error, -1), coalesce(grad_rel_error_q, -1), "
                          "coalesce(grad_rel_error_k, -1), coalesce(grad_rel_error_v, -1), "
                          "coalesce(tflops * time_us_median, -1), coalesce(cpu_ops_per_forward, -1) "
                          "FROM results WHERE variant = ? AND pass = ?");
  query.bind(1, variant);
  query.bind(2, pass);
  Stored out;
  if (!query.executeStep()) {
    out.status = "absent";
    return out;
  }
  out.status = query.getColumn(0).getString();
  out.numerics = query.getColumn(1).getString();
  out.error = query.getColumn(2).getString();
  out.backend = query.getColumn(3).getString();
  out.backend_backward = query.getColumn(4).getString();
  out.rel_error = query.getColumn(5).getDouble();
  out.grad_q = query.getColumn(6).getDouble();
  out.grad_k = query.getColumn(7).getDouble();
  out.grad_v = query.getColumn(8).getDouble();
  out.tflops_times_us = query.getColumn(9).getDouble();
  out.cpu_ops = query.getColumn(10).getInt();
  return out;
}

// Every CPU variant, a GQA shape (dk and dv sum over the query heads that share
// a key/value head), the example op library (its own Autograd kernel) and a
// CompositeImplicitAutograd op in the bshd layout (autograd through attnsweep's
// laid-out copies): each backward right to float32 rounding, FLOPs by the pass.
TEST_F(CliBackward, EveryCpuVariantsBackwardIsTimedAndItsGradientsChecked) {
  const std::string variants =
      "  - naive\n  - naive_inplace\n  - sdpa_math\n  - sdpa_flash\n" +
      op_variant("example", ATTNSWEEP_EXAMPLE_OP_LIBRARY, "attnsweep_example::attention", "    scale: scale\n") +
      op_variant("implicit_bshd", kMisbehaving, "attnsweep_misbehaving::good_bshd_differentiable",
                 "    layout: bshd\n");
  const Outcome outcome = run(config(variants));
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  const std::string db = path("results.db");
  for (const std::string variant : {"naive", "naive_inplace", "sdpa_math", "sdpa_flash", "example", "implicit_bshd"}) {
    const Stored forward = stored(db, variant, "forward");
    ASSERT_EQ(forward.status, "ok") << variant << ": " << forward.error;
    EXPECT_EQ(forward.grad_q, -1) << variant << ": a forward has no gradients";
    for (const std::string pass : {"backward", "forward_backward"}) {
      const Stored s = stored(db, variant, pass);
      ASSERT_EQ(s.status, "ok") << variant << " " << pass << ": " << s.error;
      EXPECT_EQ(s.numerics, "ok") << variant << " " << pass;
      for (const double error : {s.grad_q, s.grad_k, s.grad_v}) {
        EXPECT_GT(error, 0) << variant << " " << pass << ": float32 gradients are not bit-equal to float64";
        EXPECT_LT(error, 1e-5) << variant << " " << pass;
      }
      EXPECT_EQ(s.rel_error, forward.rel_error) << variant << " " << pass << ": the same forward output";
      EXPECT_GT(s.cpu_ops, forward.cpu_ops) << variant << " " << pass << ": the backward's operators are counted";
      // TFLOP/s x median = FLOPs / 1e6: a backward 2.5 forwards, a training step 3.5.
      const double multiple = pass == "backward" ? 2.5 : 3.5;
      EXPECT_NEAR(s.tflops_times_us / forward.tflops_times_us, multiple, 1e-9) << variant << " " << pass;
    }
  }
  // The backward's operators are the backward's alone: with the forward's they
  // make the training step's, operator for operator (a forward leaking into the
  // backward's label or its timed call would break this).
  for (const std::string variant : {"naive", "naive_inplace", "sdpa_math", "sdpa_flash"}) {
    EXPECT_EQ(stored(db, variant, "backward").cpu_ops + stored(db, variant, "forward").cpu_ops,
              stored(db, variant, "forward_backward").cpu_ops)
        << variant;
  }
  EXPECT_EQ(stored(db, "sdpa_math", "backward").backend_backward, "math");
  EXPECT_EQ(stored(db, "sdpa_flash", "backward").backend_backward, "flash_attention");
  EXPECT_EQ(stored(db, "sdpa_flash", "forward_backward").backend_backward, "flash_attention");
  EXPECT_EQ(stored(db, "naive", "backward").backend_backward, "");
  SQLite::Database database(db, SQLite::OPEN_READONLY);
  EXPECT_NE(database.execAndGet("SELECT flop_convention FROM runs").getString().find("backward flops = 2.5 * forward"),
            std::string::npos);
}

// An op without an autograd kernel (registered CompositeExplicitAutograd, like
// a forward-only wheel) has no backward: unsupported with the reason, and its
// forward still runs. So is one whose CompositeImplicitAutograd kernel sits beside
// a CompositeExplicitAutograd one: the dispatcher runs the explicit kernel, and
// autograd would meet PyTorch's fallback, not the composite's ATen ops.
TEST_F(CliBackward, AForwardOnlyOpLibrarysBackwardIsUnsupportedWithTheReason) {
  const Outcome outcome =
      run(config(op_variant("fwd_only", kMisbehaving, "attnsweep_misbehaving::wrong_dtype") +
                 op_variant("beside", kMisbehaving, "attnsweep_misbehaving::implicit_beside_explicit",
                            "    layout: bshd\n") +
                 "  - naive\n"));
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  const std::string db = path("results.db");
  for (const std::string pass : {"backward", "forward_backward"}) {
    const Stored s = stored(db, "fwd_only", pass);
    EXPECT_EQ(s.status, "unsupported") << pass;
    EXPECT_EQ(s.error, "op attnsweep_misbehaving::wrong_dtype has no autograd kernel (no Autograd or AutogradCPU "
                       "registration, nor a CompositeImplicitAutograd one), so it has no backward: a forward-only op")
        << pass;
    const Stored beside = stored(db, "beside", pass);
    EXPECT_EQ(beside.status, "unsupported") << pass;
    EXPECT_EQ(beside.error, "op attnsweep_misbehaving::implicit_beside_explicit has no autograd kernel (no Autograd "
                            "or AutogradCPU registration; its CompositeImplicitAutograd kernel is not used beside its "
                            "CPU or CompositeExplicitAutograd one), so it has no backward: a forward-only op")
        << pass;
  }
  EXPECT_EQ(stored(db, "beside", "forward").status, "ok");
  EXPECT_EQ(stored(db, "naive", "backward").status, "ok");
}

// A right forward with a wrong backward (dq 1.5x too large): the case is timed,
// but its numerics say beyond_bound, with dq's error 0.5 and dk's and dv's tiny.
TEST_F(CliBackward, AWrongGradientIsCaughtNotStoredAsRight) {
  const Outcome outcome = run(config(op_variant("wrong", kMisbehaving, "attnsweep_misbehaving::wrong_backward")));
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  const std::string db = path("results.db");
  EXPECT_EQ(stored(db, "wrong", "forward").numerics, "ok");
  for (const std::string pass : {"backward", "forward_backward"}) {
    const Stored s = stored(db, "wrong", pass);
    ASSERT_EQ(s.status, "ok") << pass << ": " << s.error;
    EXPECT_EQ(s.numerics, "beyond_bound") << pass;
    EXPECT_NEAR(s.grad_q, 0.5, 1e-4) << pass;
    EXPECT_LT(s.grad_k, 1e-5) << pass;
    EXPECT_LT(s.grad_v, 1e-5) << pass;
  }
}

// A forward-only config stores the FLOP convention it always did, word for word,
// so compare finds no difference with runs made before passes existed.
TEST_F(CliBackward, AForwardOnlyRunKeepsItsFlopConvention) {
  ASSERT_EQ(run(config("  - naive\n", "[forward]")).exit_code, 0);
  SQLite::Database database(path("results.db"), SQLite::OPEN_READONLY);
  EXPECT_EQ(database.execAndGet("SELECT flop_convention FROM runs").getString(),
            "attended_pairs_v1: flops = 4 * batch * heads * head_dim * pairs; pairs = seq_len_q * seq_len_kv, "
            "or for causal (top-left aligned, PyTorch is_causal) sum_i min(i + 1, seq_len_kv); "
            "min_bytes = dtype_bytes * (2 * B*H*Sq*D + 2 * B*KVH*Skv*D)");
}

// Backward passes over two shapes and two dtypes, back to back: each case's leaves
// and upstream gradient are its own inputs' (stale ones from the previous shape
// or dtype would show as another output error, or fail), and every gradient is
// within its dtype's bound.
TEST_F(CliBackward, EachShapeAndDtypeDifferentiatesItsOwnInputs) {
  const std::string text =
      "name: backward\ndevice: cpu\nvariants: [naive, sdpa_math]\ndtypes: [bf16, fp32]\ncausal: [true]\n"
      "passes: [forward, backward]\nshapes:\n  - {batch: 1, heads: 2, seq_len: [32, 48], head_dim: 16}\n"
      "measure: {warmup: 1, profiled_forwards: 1, min_samples: 3, max_samples: 3}\n";
  const Outcome outcome = run(text);
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  SQLite::Database database(path("results.db"), SQLite::OPEN_READONLY);
  EXPECT_EQ(database.execAndGet("SELECT count(*) FROM cases WHERE status = 'ok'").getInt(), 16);
  SQLite::Statement pairs(database,
                          "SELECT f.variant, f.dtype, f.seq_len_q, f.rel_error, b.rel_error, b.grad_rel_error_max "
                          "FROM results f JOIN results b ON b.variant = f.variant AND b.dtype = f.dtype AND "
                          "b.seq_len_q = f.seq_len_q AND b.pass = 'backward' WHERE f.pass = 'forward'");
  int checked = 0;
  while (pairs.executeStep()) {
    const std::string label = pairs.getColumn(0).getString() + " " + pairs.getColumn(1).getString() + " " +
                              pairs.getColumn(2).getString();
    EXPECT_EQ(pairs.getColumn(3).getDouble(), pairs.getColumn(4).getDouble()) << label;
    const double bound = pairs.getColumn(1).getString() == "bf16" ? 1.6e-2 : 1e-5;
    EXPECT_GT(pairs.getColumn(5).getDouble(), 0) << label;
    EXPECT_LT(pairs.getColumn(5).getDouble(), bound) << label;
    ++checked;
  }
  EXPECT_EQ(checked, 8);
}

// compare and nightly judge a backward's gradients and backend too: the same
// case with a wrong dq (the op's backward 1.5x too large) is a numerics
// regression, exit 1, naming grad_rel_error_q.
TEST_F(CliBackward, CompareFindsAGradientThatWentWrong) {
  ASSERT_EQ(run(config(op_variant("x", kMisbehaving, "attnsweep_misbehaving::good_bshd_differentiable",
                                  "    layout: bshd\n"),
                       "[backward]"),
                "base.db")
                .exit_code,
            0);
  ASSERT_EQ(run(config(op_variant("x", kMisbehaving, "attnsweep_misbehaving::wrong_backward"), "[backward]"),
                "cand.db")
                .exit_code,
            0);
  const Outcome compared = run_attnsweep("--log-level off compare " + path("base.db") + " " + path("cand.db") +
                                         " --threshold 99");
  EXPECT_EQ(compared.exit_code, 1) << compared.output;
  EXPECT_NE(compared.output.find("grad_rel_error_q"), std::string::npos) << compared.output;
  EXPECT_EQ(compared.output.find("grad_rel_error_k"), std::string::npos) << compared.output;
}

}  // namespace
