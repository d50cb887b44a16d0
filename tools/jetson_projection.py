#!/usr/bin/env python3
"""Turns what tools/jetson-projection measured into a per-stage projection for AGX Orin and AGX
Xavier: projection.json (tools/bench's JSON with a "projection" part) and projection.md.

Per stage and frame: L2 and DRAM bytes, FP64 operations and kernel time from Nsight Compute with
the launches planned for 16 and for 8 SMs (ncu16.csv, ncu8.csv; kernels named by their stage's NVTX
range); GPU time on 16 and 8 SMs from tools/bench under MPS (sm16.json, sm8.json). For each Jetson,
from the measurements at its SM count:
  compute = time on its SM count (corrected to exactly that count) x this GPU's clock / the Jetson's,
            or FP64 operations at the Jetson's FP64 rate if that is longer;
  memory  = L2 bytes / the Jetson's DRAM bandwidth (its small L2 keeps little of that traffic);
  projected = the larger.
Standard library only: it runs on the GPU machine's own python3."""
import argparse
import csv
import json
import os
import sys

# name, SMs, GPU clock (MHz), DRAM GB/s, L2 MB, FP64 results per clock and SM (the CUDA programming
# guide's arithmetic throughput table: compute capability 8.6/8.7 two, 7.0/7.2 thirty-two), the
# MPS measurement it scales from.
JETSONS = [
    {"name": "AGX Orin", "sms": 16, "clock_mhz": 1300, "dram_gb_per_s": 204.8, "l2_mb": 4, "fp64_per_clock_sm": 2, "measured_on": 16},
    {"name": "AGX Xavier", "sms": 8, "clock_mhz": 1377, "dram_gb_per_s": 136.5, "l2_mb": 0.5, "fp64_per_clock_sm": 32, "measured_on": 8},
]
FP64 = ("smsp__sass_thread_inst_executed_op_dadd_pred_on.sum", "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum",
        "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum")
# Units as ncu's raw CSV page writes them (base units) or its other pages do, to bytes, ms and counts.
SCALE = {"": 1, "byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "Tbyte": 1e12, "ns": 1e-6, "us": 1e-3, "ms": 1, "s": 1e3, "nsecond": 1e-6,
         "usecond": 1e-3, "msecond": 1, "second": 1e3, "inst": 1, "Kinst": 1e3, "Minst": 1e6, "Ginst": 1e9,
         "sector": 1, "Ksector": 1e3, "Msector": 1e6, "Gsector": 1e9}


def number(text):
    return float(text.replace(",", "")) if text.strip() not in ("", "n/a") else 0.0


def ncu_rows(path, needed):
    """An ncu raw CSV (--csv --page raw) without ncu's own lines: column index by name, the units
    row and the kernels' rows; stops naming a missing column."""
    with open(path, newline="") as f:
        rows = [r for r in csv.reader(line for line in f if line.startswith('"'))]
    if len(rows) < 3:
        sys.exit(f"{path}: no kernels profiled (see ncu.log)")
    col = {name: i for i, name in enumerate(rows[0])}
    for name in needed:
        if name not in col:
            sys.exit(f"{path}: no column {name}")
    return col, rows[1], rows[2:]


def ncu_value(path, col, units, row, metric):
    """A metric of a kernel's row (from ncu_rows) in bytes, ms or counts; stops on a unit not known."""
    i = col[metric]
    if units[i] not in SCALE:
        sys.exit(f"{path}: unit {units[i]} of {metric} unknown")
    return number(row[i]) * SCALE[units[i]]


def read_ncu(path, stage_names):
    """Per stage: bytes, FP64 operations and kernel ms summed over every frame profiled. With
    --print-nvtx-rename kernel, ncu names a kernel launched inside a stage's range STAGE/KERNEL."""
    col, units, data = ncu_rows(path, ("Kernel Name", "gpu__time_duration.sum", "lts__t_bytes.sum", "dram__bytes.sum"))
    stages = {}
    for r in data:
        def value(metric):
            return ncu_value(path, col, units, r, metric)
        kernel = r[col["Kernel Name"]]
        prefix = kernel.split("/", 1)[0]
        name = prefix if prefix in stage_names else f"(no stage) {kernel}"
        s = stages.setdefault(name, {"kernels": 0, "l2_bytes": 0.0, "dram_bytes": 0.0, "fp64_ops": 0.0, "kernel_ms": 0.0})
        s["kernels"] += 1
        s["l2_bytes"] += value("lts__t_bytes.sum")
        s["dram_bytes"] += value("dram__bytes.sum")
        s["kernel_ms"] += value("gpu__time_duration.sum")
        s["fp64_ops"] += sum(value(m) for m in FP64 if m in col)
    return stages


def read_bench(path):
    with open(path) as f:
        j = json.load(f)
    case = j["cases"][0]
    return j, {s["stage"]: s["gpu_ms"] for s in case.get("stage_gpu_ms", [])}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", required=True)
    ap.add_argument("--gpu", required=True)
    ap.add_argument("--sms", type=int, required=True, help="SMs of this GPU")
    ap.add_argument("--clock-mhz", type=float, required=True, help="this GPU's SM clock")
    ap.add_argument("--frames", type=int, required=True, help="frames Nsight Compute profiled")
    ap.add_argument("--commit", default="unknown")
    ap.add_argument("--dir", default=".")
    a = ap.parse_args()

    full, _ = read_bench(os.path.join(a.dir, "ncu16.json"))  # the bench's JSON of the pass planned for 16 SMs
    measured = {}
    for target in (16, 8):
        j, ms = read_bench(os.path.join(a.dir, f"sm{target}.json"))
        with open(os.path.join(a.dir, f"sm{target}.percent")) as f:
            percent = int(f.read())
        seen = j.get("multiprocessors", a.sms)
        # MPS reports the SMs it leaves (whole TPCs); where a driver does not, the percentage of this GPU's.
        sms = seen if seen < a.sms else a.sms * percent / 100
        measured[target] = {"sms": sms, "stage_gpu_ms": ms, "frames_per_s_note": j["cases"][0].get("note", "")}

    stage_names = set(measured[16]["stage_gpu_ms"])
    bytes_per_stage = {t: read_ncu(os.path.join(a.dir, f"ncu{t}.csv"), stage_names) for t in measured}
    names = list(measured[16]["stage_gpu_ms"])
    for t in measured:
        names += [n for n in bytes_per_stage[t] if n not in names]
    stages = []
    totals = {j["name"]: 0.0 for j in JETSONS}
    for name in names:
        row = {"stage": name}
        for jet in JETSONS:
            m = measured[jet["measured_on"]]
            b = bytes_per_stage[jet["measured_on"]].get(name, {"kernels": 0, "l2_bytes": 0.0, "dram_bytes": 0.0, "fp64_ops": 0.0, "kernel_ms": 0.0})
            l2_mb, fp64_mops = b["l2_bytes"] / a.frames / 1e6, b["fp64_ops"] / a.frames / 1e6
            on_sms = m["stage_gpu_ms"].get(name, 0.0)
            compute = on_sms * (m["sms"] / jet["sms"]) * (a.clock_mhz / jet["clock_mhz"])
            fp64 = fp64_mops * 1e6 / (jet["sms"] * jet["fp64_per_clock_sm"] * jet["clock_mhz"] * 1e6) * 1e3
            memory = l2_mb * 1e6 / (jet["dram_gb_per_s"] * 1e9) * 1e3
            projected = max(compute, fp64, memory)
            key = jet["name"].lower().replace(" ", "_")
            row[key] = {"l2_mb": l2_mb, "dram_mb": b["dram_bytes"] / a.frames / 1e6, "fp64_mops": fp64_mops,
                        "kernel_ms_full_gpu": b["kernel_ms"] / a.frames, "kernels_per_frame": b["kernels"] / a.frames,
                        "gpu_ms_measured": on_sms, "compute_ms": compute, "fp64_ms": fp64, "memory_ms": memory, "projected_ms": projected,
                        "bound": "compute" if projected == compute else "fp64" if projected == fp64 else "memory"}
            totals[jet["name"]] += projected
        stages.append(row)

    projection = {"case": a.case, "gpu": a.gpu, "sms": a.sms, "clock_mhz": a.clock_mhz, "commit": a.commit, "frames_profiled": a.frames,
                  "jetsons": JETSONS, "measured_sms": {str(k): v["sms"] for k, v in measured.items()}, "stages": stages,
                  "total_projected_ms": totals, "camera_24fps_ms": 1000 / 24}
    full["projection"] = projection
    with open(os.path.join(a.dir, "projection.json"), "w") as f:
        json.dump(full, f, indent=2)

    lines = [f"`{a.case}` on an {a.gpu} ({a.sms} SMs, {a.clock_mhz:.0f} MHz), commit {a.commit}: bytes from Nsight Compute over {a.frames} frames "
             f"with the launches planned for 16 and for 8 SMs, time on {measured[16]['sms']:.1f} and {measured[8]['sms']:.1f} SMs under MPS, "
             "one frame in flight; each Jetson running its own code (the kernels as PTX for compute_87 and compute_75, compiled for this GPU).", "",
             "| stage | L2 / DRAM MB a frame (16 SMs) | FP64 Mop | 16 SMs ms | AGX Orin ms (compute / memory) "
             "| L2 / DRAM MB (8 SMs) | 8 SMs ms | AGX Xavier ms (compute / memory) |",
             "|---|---|---|---|---|---|---|---|"]
    for r in stages:
        o, x = r["agx_orin"], r["agx_xavier"]
        lines.append(f"| {r['stage']} | {o['l2_mb']:.0f} / {o['dram_mb']:.0f} | {o['fp64_mops']:.1f} | {o['gpu_ms_measured']:.2f} | "
                     f"**{o['projected_ms']:.1f}** ({max(o['compute_ms'], o['fp64_ms']):.1f} / {o['memory_ms']:.1f}) | "
                     f"{x['l2_mb']:.0f} / {x['dram_mb']:.0f} | {x['gpu_ms_measured']:.2f} | "
                     f"**{x['projected_ms']:.1f}** ({max(x['compute_ms'], x['fp64_ms']):.1f} / {x['memory_ms']:.1f}) |")
    def total(key, field):
        return sum(r[key][field] for r in stages)
    lines.append(f"| **frame** | {total('agx_orin', 'l2_mb'):.0f} / {total('agx_orin', 'dram_mb'):.0f} | | | **{totals['AGX Orin']:.1f}** "
                 f"| {total('agx_xavier', 'l2_mb'):.0f} / {total('agx_xavier', 'dram_mb'):.0f} | | **{totals['AGX Xavier']:.1f}** |")
    lines.append("")
    lines.append(f"A 24 frames/s camera leaves {1000 / 24:.1f} ms a frame.")
    with open(os.path.join(a.dir, "projection.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
