"""shift.md of proofs/cudnn-gqa-gap/level_shift_device.sh: per phase, blocks of 100 samples in order, each with its
median time and what nvidia-smi saw during the block's wall window (mean power, SM and memory clock,
GPU and HBM temperature, clock event reasons)."""
import datetime, os, sqlite3, statistics, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from results_db import open_read_only  # noqa: E402

work = sys.argv[1]
smi = []
for line in open(f"{work}/smi.csv"):
    f = [x.strip() for x in line.split(",")]
    try:
        t = datetime.datetime.strptime(f[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
        smi.append((t, float(f[1]), float(f[2]), float(f[3]), f[4], f[5], f[6]))
    except (ValueError, IndexError):
        continue


def window(t0, t1):
    rows = [r for r in smi if t0 <= r[0] <= t1] or [min(smi, key=lambda r: abs(r[0] - t1))] if smi else []
    if not rows:
        return "-"
    reasons = sorted({r[6] for r in rows})
    return (f"{statistics.mean(r[3] for r in rows):.0f} W, SM {statistics.mean(r[1] for r in rows):.0f} MHz, "
            f"mem {statistics.mean(r[2] for r in rows):.0f} MHz, {rows[-1][4]} C GPU / {rows[-1][5]} C HBM, "
            f"reasons {'/'.join(reasons)}")


def show(name, series):  # series: [(wall_end or None, us)]
    print(f"\n## {name}: {len(series)} samples, median {statistics.median(u for _, u in series):.1f} us, "
          f"min {min(u for _, u in series):.1f}\n")
    print("| samples | median us | GPU during the block |\n|---|---|---|")
    for i in range(0, len(series), 100):
        block = series[i:i + 100]
        walls = [w for w, _ in block if w]
        where = window(walls[0] - 0.003, walls[-1]) if walls else "-"
        print(f"| {i}-{i + len(block) - 1} | {statistics.median(u for _, u in block):.1f} | {where} |")


for name in ("python1", "python2"):  # python2: no hold
    try:
        show(f"Python ({name})", [tuple(map(float, l.split())) for l in open(f"{work}/{name}.txt")])
    except (OSError, ValueError) as e:
        print(f"\n## {name}: {e}")
for name in ("attnsweep", "burst"):  # burst: proofs/cudnn-gqa-gap/level_shift_burst.yaml
    try:
        db = open_read_only(f"{work}/{name}.db")
        rows = db.execute("SELECT gpu_time_us, sm_clock_mhz FROM samples WHERE mode = 'eager' "
                          "ORDER BY case_id, sample_index").fetchall()
        span = db.execute("SELECT finished_at, timing_seconds, ifnull(cooldown_seconds, 0) FROM cases").fetchone()
        print(f"\n({name}: finished_at {span[0]}, timing {span[1]:.2f} s, cool-downs {span[2]:.2f} s; its samples "
              "carry no wall time: the SM clock attnsweep read per sample is below)")
        if name == "attnsweep":
            try:
                after = float(open(f"{work}/python1.txt").read().split()[-2])
                before = float(open(f"{work}/python2.txt").read().split()[0])
                print(f"\nGPU between Python 1 and Python 2 (attnsweep's run, its set-up included): {window(after, before)}")
            except (OSError, ValueError, IndexError):
                pass
        show(name, [(None, u) for u, _ in rows])
        print("\n| samples | mean SM clock read by attnsweep |\n|---|---|")
        for i in range(0, len(rows), 100):
            print(f"| {i}- | {statistics.mean(c for _, c in rows[i:i + 100] if c):.0f} |")
    except (sqlite3.Error, TypeError, statistics.StatisticsError) as e:
        print(f"\n## {name}: {e}")
