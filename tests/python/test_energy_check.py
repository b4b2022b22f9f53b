"""CPU tests of scripts/energy_check.py, the device's validation of the energy method
(docs/measurement.md, "Energy"): its window against a simulated counter (step-aligned
ends, the power read back, a counter that never steps), its statistics and arguments,
and the --device cpu dry run end to end (no NVML; JSON lines; exit 0).
run: tests/python/run_python_tests.sh (ctest: Python.TrainingTools)"""
import json
import os
import subprocess
import sys
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import energy_check as ec  # noqa: E402  (imports torch only in main)

try:
    import torch  # noqa: F401
except ImportError:
    torch = None

needs_torch = unittest.skipIf(torch is None, "torch is not importable by this python")
SCRIPT = os.path.join(ROOT, "scripts", "energy_check.py")


class Window(unittest.TestCase):
    def test_aligned_window_ends_on_steps_and_reads_the_power_back(self):
        counter = ec.SimulatedCounter(power_w=250.0, step_s=0.01)
        calls = []
        r = ec.run_window(counter.energy_mj, lambda: (calls.append(1), time.sleep(0.001)), lambda: None, 0.2,
                          power=counter.power_w_reading)
        self.assertEqual(r["energy_mj"] % 2500, 0, r)  # whole steps of 10 ms at 250 W
        self.assertGreaterEqual(r["window_s"], 0.2)
        self.assertEqual(r["calls"], len(calls))
        self.assertAlmostEqual(r["power_w"], 250.0, delta=25.0)
        self.assertAlmostEqual(r["joules_per_call"] * r["calls"], r["energy_mj"] / 1000.0, places=9)
        self.assertEqual(r["nvml_power_w"], 250.0)

    def test_calls_are_chunked_between_synchronizes(self):
        counter = ec.SimulatedCounter(power_w=100.0, step_s=0.005)
        chunks, queued = [], [0]

        def call():
            queued[0] += 1

        def synchronize():
            time.sleep(0.0001 * queued[0])  # the queued calls run now
            chunks.append(queued[0])
            queued[0] = 0

        r = ec.run_window(counter.energy_mj, call, synchronize, 0.1)
        self.assertEqual(chunks[:2], [0, 1])  # the synchronize before the window, then one call
        self.assertGreater(max(chunks), 20)
        self.assertEqual(sum(chunks), r["calls"])

    def test_a_counter_that_never_steps_is_refused(self):
        with self.assertRaises(RuntimeError) as raised:
            ec.run_window(lambda: 7, lambda: None, lambda: None, 0.05, wait_max_s=0.03)
        self.assertIn("did not step within 30 ms before the window", str(raised.exception))

    def test_unaligned_window_reads_just_before_and_after(self):
        counter = ec.SimulatedCounter(power_w=100.0, step_s=0.05)  # steps longer than the window
        r = ec.run_window(counter.energy_mj, lambda: time.sleep(0.001), lambda: None, 0.01, aligned=False)
        self.assertLess(r["window_s"], 0.05)
        self.assertIn(r["energy_mj"], (0, 5000))  # nothing, or one whole step: the rounding a naive delta sees

    def test_counter_steps(self):
        counter = ec.SimulatedCounter(power_w=100.0, step_s=0.01)
        intervals, sizes = ec.counter_steps(counter.energy_mj, 0.1)
        self.assertGreaterEqual(len(intervals), 5)
        self.assertTrue(all(s == 1000 for s in sizes), sizes)
        self.assertAlmostEqual(sorted(intervals)[len(intervals) // 2], 10.0, delta=3.0)


class Statistics(unittest.TestCase):
    def test_coefficient_of_variation(self):
        self.assertIsNone(ec.coefficient_of_variation([1.0]))
        self.assertIsNone(ec.coefficient_of_variation([None, 2.0]))
        self.assertEqual(ec.coefficient_of_variation([2.0, 2.0, 2.0]), 0.0)
        self.assertAlmostEqual(ec.coefficient_of_variation([1.0, 3.0]), 2 ** 0.5 / 2, places=12)

    def test_summarize(self):
        s = ec.summarize([{"x": 1.0}, {"x": 3.0}, {"x": None}], "x")
        self.assertEqual((s["mean"], s["min"], s["max"]), (2.0, 1.0, 3.0))


class Arguments(unittest.TestCase):
    def test_windows(self):
        self.assertEqual(ec.parse_windows("50,100, 200"), [50.0, 100.0, 200.0])
        for bad in ("", "fast", "0", "-5", "70000"):
            with self.assertRaises(ValueError):
                ec.parse_windows(bad)

    def test_defaults_per_device(self):
        gpu = ec.parse_args([])
        self.assertEqual((gpu.windows, gpu.repeats, gpu.sdpa_window_ms, gpu.idle_s, gpu.sustain_s),
                         ([50.0, 100.0, 200.0, 500.0, 1000.0], 5, 500.0, 5.0, 5.0))
        cpu = ec.parse_args(["--device", "cpu"])
        self.assertEqual((cpu.windows, cpu.repeats), ([20.0, 50.0], 2))

    def refused(self, *argv):
        result = subprocess.run([sys.executable, SCRIPT, *argv], capture_output=True, text=True, timeout=60)
        self.assertEqual(result.returncode, 2, result)
        self.assertEqual(result.stdout, "")
        return result.stderr

    def test_bad_arguments_exit_two_with_the_reason(self):
        self.assertIn("--windows 'soon'", self.refused("--windows", "soon"))
        self.assertIn("--repeats must be at least 1", self.refused("--repeats", "0"))
        self.assertIn("--sdpa-window-ms must be over 0", self.refused("--sdpa-window-ms", "0"))
        self.assertIn("invalid choice", self.refused("--device", "tpu"))


@needs_torch
class DryRun(unittest.TestCase):
    def test_cpu_dry_run_says_there_is_no_nvml_and_prints_json_lines(self):
        result = subprocess.run([sys.executable, SCRIPT, "--device", "cpu", "--windows", "10,20", "--repeats", "2",
                                 "--sdpa-window-ms", "20", "--idle-s", "0.05", "--sustain-s", "0.05",
                                 "--counter-s", "0.1"],
                                capture_output=True, text=True, timeout=120, env=dict(os.environ, CUDA_VISIBLE_DEVICES=""))
        self.assertEqual(result.returncode, 0, result.stderr)
        rows = [json.loads(line) for line in result.stdout.splitlines()]
        self.assertEqual(rows[0]["kind"], "device")
        self.assertEqual(rows[0]["counter"], "simulated")
        self.assertIn("no NVML on --device cpu", rows[0]["note"])
        kinds = [r["kind"] for r in rows]
        self.assertEqual(kinds.count("counter"), 1)  # idle only: the CPU's calls do not queue
        self.assertEqual(kinds.count("steady"), 2 * 2 * 2)  # windows x repeats x (aligned, unaligned)
        self.assertEqual(kinds.count("steady_summary"), 2 * 2)
        self.assertEqual(kinds.count("sdpa"), 2 * 2)  # repeats x (burst, sustained)
        self.assertEqual(kinds.count("sdpa_summary"), 2)
        for r in rows:
            if r["kind"] == "steady" and r["method"] == "aligned":
                self.assertEqual(r["energy_mj"] % 1000, 0, r)  # the simulated counter's whole steps
                self.assertGreater(r["calls"], 0)
                self.assertGreaterEqual(r["window_s"], r["window_ms"] / 1000.0)
            if r["kind"] == "sdpa":
                self.assertIn(r["regime"], ("burst", "sustained"))
                self.assertGreater(r["joules_per_call"], 0)
                self.assertTrue(50 < r["power_w"] < 200, r)  # 100 W; a loaded host sees a step a little late


if __name__ == "__main__":
    unittest.main()
