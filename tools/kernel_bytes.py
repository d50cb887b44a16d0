#!/usr/bin/env python3
"""Per-kernel bytes and time of one frame of a tools/bench case, from an Nsight Compute raw CSV
(tools/kernel-bytes): L2 traffic (lts__t_bytes), DRAM read and written, kernel time and warp
instructions executed (what bounds a kernel on a Jetson's few SMs), and the SMs' requests to the
L2 by kind: reads, writes, and reductions and atomics (on a Jetson, whose L2 holds little of a
frame's volume, a reduction costs a DRAM read and a write, where the L2 total counts it once). The
bench runs several frames; the last whole period of the kernels' names is taken as one frame.
Writes kernel-bytes.json (each case's tools/bench JSON, NAME.bench.json beside its CSV where there
is one, with a "kernel_bytes" part) and a markdown table. Standard library only."""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from jetson_projection import ncu_rows, ncu_value  # noqa: E402  (ncu's CSV and units, one place)

SM_SECTORS = {kind: f"lts__t_sectors_srcunit_tex_op_{op}.sum" for kind, op in
              (("sm_read_bytes", "read"), ("sm_write_bytes", "write"), ("sm_reduction_bytes", "red"),
               ("sm_atomic_bytes", "atom"))}
METRICS = ("gpu__time_duration.sum", "lts__t_bytes.sum", "dram__bytes_read.sum", "dram__bytes_write.sum",
           "smsp__inst_executed.sum") + tuple(SM_SECTORS.values())
SECTOR_BYTES = 32
SUMMED = ("ms", "l2_bytes", "dram_read_bytes", "dram_write_bytes", "instructions") + tuple(SM_SECTORS)


def last_frame(names):
    """Length of the shortest period that the list of kernel names ends with twice."""
    for period in range(1, len(names) // 2 + 1):
        if names[-period:] == names[-2 * period:-period]:
            return period
    sys.exit("no repeating frame of kernels: profile more frames")


def read(path):
    col, units, data = ncu_rows(path, ("Kernel Name",) + METRICS)
    names = [r[col["Kernel Name"]] for r in data]
    frame = data[-last_frame(names):]
    kernels = []
    for r in frame:
        v = {m: ncu_value(path, col, units, r, m) for m in METRICS}
        name = r[col["Kernel Name"]].replace("(anonymous namespace)::", "").split("(")[0]
        kernel = {"kernel": (name[5:] if name.startswith("void ") else name).split("::")[-1],
                  "ms": v["gpu__time_duration.sum"], "l2_bytes": v["lts__t_bytes.sum"],
                  "dram_read_bytes": v["dram__bytes_read.sum"], "dram_write_bytes": v["dram__bytes_write.sum"],
                  "instructions": v["smsp__inst_executed.sum"]}
        kernel.update({kind: SECTOR_BYTES * v[metric] for kind, metric in SM_SECTORS.items()})
        kernels.append(kernel)
    total = {k: sum(x[k] for x in kernels) for k in SUMMED}
    return {"kernels": kernels, "total": total}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpu", required=True)
    ap.add_argument("--commit", default="unknown")
    ap.add_argument("--dir", default=".")
    ap.add_argument("cases", nargs="+", help="case names; each case's CSV is DIR/NAME.csv with / as _")
    a = ap.parse_args()
    result = {"gpu": a.gpu, "commit": a.commit, "cases": {}}
    lines = [f"One frame, Nsight Compute (`--clock-control none`), {a.gpu}, commit {a.commit}.", "",
             "| case | kernel | ms | L2 MB | DRAM read MB | DRAM write MB | warp instructions (M) "
             "| from the SMs: read / write / reduction and atomic MB |",
             "|---|---|---|---|---|---|---|---|"]
    for case in a.cases:
        stem = os.path.join(a.dir, case.replace("/", "_"))
        c = read(stem + ".csv")
        bench = {}
        if os.path.exists(stem + ".bench.json"):
            with open(stem + ".bench.json") as f:
                bench = json.load(f)
        bench["kernel_bytes"] = c
        result["cases"][case] = bench
        for k in c["kernels"] + [dict(c["total"], kernel="**total**")]:
            lines.append(f"| `{case}` | {k['kernel']} | {k['ms']:.3f} | {k['l2_bytes'] / 1e6:.0f} | {k['dram_read_bytes'] / 1e6:.0f} | "
                         f"{k['dram_write_bytes'] / 1e6:.0f} | {k['instructions'] / 1e6:.1f} | "
                         f"{k['sm_read_bytes'] / 1e6:.0f} / {k['sm_write_bytes'] / 1e6:.0f} / "
                         f"{(k['sm_reduction_bytes'] + k['sm_atomic_bytes']) / 1e6:.0f} |")
    with open(os.path.join(a.dir, "kernel-bytes.json"), "w") as f:
        json.dump(result, f, indent=2)
    with open(os.path.join(a.dir, "kernel-bytes.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
