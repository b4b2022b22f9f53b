#!/usr/bin/env python3
"""Markdown of proofs/fa3/fa3.yaml's sweep (counts, medians, TFLOP/s, errors per variant,
shape and mask) with FA3's independent Python measurement next to attnsweep's.
   usage: op_library_report.py FA3.db FA3_PYTHON.jsonl [MACHINE.txt]"""
import sqlite3
import sys

from python_reference import machine_text, reference_rows
from results_db import open_read_only


def key_of(batch, heads, kv_heads, seq_len, head_dim, causal, softcap, dtype=None):
    """A case as both sides name it: sizes, the mask, the soft-capping cap (None or 0: none) and the dtype
    (None: bf16, as every line before fp8)."""
    return (int(batch), int(heads), int(kv_heads or heads), int(seq_len), int(head_dim), bool(causal),
            float(softcap or 0.0), dtype or "bf16")


def main():
    db_path, python_path = sys.argv[1], sys.argv[2]
    machine = machine_text(sys.argv, 3)
    python = {key_of(row["batch"], row["heads"], row.get("kv_heads"), row["seq_len"], row["head_dim"], row["causal"],
                     row.get("softcap"), row.get("dtype")): row for row in reference_rows(python_path)}
    db = open_read_only(db_path)
    db.row_factory = sqlite3.Row
    run = db.execute("SELECT * FROM runs ORDER BY run_id DESC LIMIT 1").fetchone()
    print(f"# FlashAttention-3 (fa3-fwd 0.0.3) next to the study's variants: {run['device_name']}\n")
    print(f"Run {run['run_id']} of {run['name']}, {run['started_at']}; torch {run['torch_version']}, CUDA "
          f"{run['cuda_version']}, cuDNN {run['cudnn_version']}, driver {run['driver_version']}, attnsweep "
          f"{run['attnsweep_version']} ({run['git_sha']}). Median of CUDA events per forward (L2 flushed, "
          f"launch latency held out); TFLOP/s by runs.flop_convention.\n")
    if machine:
        print("```\n" + machine + "\n```\n")
    print("| shape | dtype | causal | softcap | variant | status | kernels | memcpy | memset | median us | TFLOP/s | "
          "rel error | rel error dequantized | py kernels | py median us | diff % | py rel error | "
          "py rel error dequantized |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    rows = db.execute("SELECT * FROM cases WHERE run_id = ? ORDER BY plan_index", (run["run_id"],)).fetchall()
    for c in rows:
        heads = c["heads"] if c["kv_heads"] == c["heads"] else f"{c['heads']}/{c['kv_heads']}"
        shape = f"{c['batch']}x{heads}x{c['seq_len_q']}x{c['head_dim']}"
        softcap = c["softcap"] if "softcap" in c.keys() else None  # schema 16 (issue 36)
        py = python.get(key_of(c["batch"], c["heads"], c["kv_heads"], c["seq_len_q"], c["head_dim"], c["causal"],
                               softcap, c["dtype"])) if c["variant"] == "fa3" else None
        dequantized = c["rel_error_dequantized"] if "rel_error_dequantized" in c.keys() else None  # schema 18
        med = c["gpu_time_us_median"]
        cells = [shape, c["dtype"], "yes" if c["causal"] else "no", f"{softcap:g}" if softcap else "", c["variant"],
                 c["status"], c["kernels_per_forward"], c["memcpy_per_forward"], c["memset_per_forward"],
                 f"{med:.1f}" if med else "", f"{c['tflops']:.0f}" if c["tflops"] else "",
                 f"{c['rel_error']:.2e}" if c["rel_error"] is not None else (c["error_message"] or "")[:60],
                 f"{dequantized:.2e}" if dequantized is not None else ""]
        if py and py.get("status") == "ok":
            diff = 100 * (med / py["median_us"] - 1) if med else None
            py_dequantized = py.get("rel_error_dequantized")
            cells += [f"{py['kernels']:g}", f"{py['median_us']:.1f}", f"{diff:+.1f}" if diff is not None else "",
                      f"{py['rel_error']:.2e}", f"{py_dequantized:.2e}" if py_dequantized is not None else ""]
        else:
            cells += ["", "", "", "", ""]
        print("| " + " | ".join("" if x is None else str(x) for x in cells) + " |")


if __name__ == "__main__":
    main()
