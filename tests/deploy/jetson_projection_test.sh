#!/usr/bin/env bash
# tools/jetson_projection.py on measurements made up for the test: kernels grouped by the stage ncu
# names them under (STAGE/KERNEL, units converted), per frame; each Jetson's bytes from the pass
# planned for its SM count; the compute figure scaled by SM count and clock, the FP64 figure at the
# Jetson's rate, the memory figure from L2 bytes, the larger projected and summed.
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/ncu16.csv" <<'CSV'
==PROF== Connected to process 1
"ID","Kernel Name","dram__bytes.sum","gpu__time_duration.sum","lts__t_bytes.sum","smsp__sass_thread_inst_executed_op_dadd_pred_on.sum"
"","","Mbyte","ns","Gbyte","inst"
"0","sgm/void aggregate<128>(Params)","100","1,000,000","2.048","0"
"1","sgm/winner(Params)","10","500,000","0.000","0"
"2","faces/firstStage(Args)","1","100,000","0.2048","2,600,000"
"3","sgm/void aggregate<128>(Params)","100","1,000,000","2.048","0"
"4","sgm/winner(Params)","10","500,000","0.000","0"
"5","faces/firstStage(Args)","1","100,000","0.2048","2,600,000"
"6","memsetKernel","1","1","0.001","0"
CSV
# Planned for 8 SMs, the SGM moves half the L2 bytes.
sed 's/"2.048"/"1.024"/' "$dir/ncu16.csv" > "$dir/ncu8.csv"
bench() {  # $1 SMs seen, $2 sgm ms, $3 faces ms
  printf '{"device": "test", "multiprocessors": %s, "cases": [{"name": "graph/x", "note": "", "stage_gpu_ms": [{"stage": "sgm", "gpu_ms": %s}, {"stage": "faces", "gpu_ms": %s}]}]}\n' "$@"
}
bench 132 1 0.5 > "$dir/ncu16.json"
bench 14 10 2 > "$dir/sm16.json"   # MPS gave 14 SMs
bench 8 20 4 > "$dir/sm8.json"
echo 13 > "$dir/sm16.percent"
echo 7 > "$dir/sm8.percent"
python3 tools/jetson_projection.py --case graph/x --gpu test --sms 132 --clock-mhz 1950 --frames 2 --commit abc --dir "$dir" > /dev/null
python3 - "$dir/projection.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["projection"]
stages = {s["stage"]: s for s in p["stages"]}
def near(a, b, what):
    if abs(a - b) > 1e-6 * max(1, abs(b)):
        sys.exit(f"{what}: {a}, expected {b}")
o, x = stages["sgm"]["agx_orin"], stages["sgm"]["agx_xavier"]
near(o["l2_mb"], 2048, "sgm L2 MB a frame, planned for 16 SMs")
near(x["l2_mb"], 1024, "sgm L2 MB a frame, planned for 8 SMs")
near(o["dram_mb"], 110, "sgm DRAM MB a frame")
near(o["kernel_ms_full_gpu"], 1.5, "sgm kernel ms a frame")
near(stages["faces"]["agx_orin"]["fp64_mops"], 2.6, "faces FP64 Mop a frame")
near(o["compute_ms"], 10 * 14 / 16 * 1950 / 1300, "sgm Orin compute")
near(o["memory_ms"], 2048e6 / 204.8e9 * 1e3, "sgm Orin memory")
near(o["projected_ms"], max(10 * 14 / 16 * 1950 / 1300, 10.0), "sgm Orin: the larger")
near(x["compute_ms"], 20 * 1950 / 1377, "sgm Xavier compute")
near(x["memory_ms"], 1024e6 / 136.5e9 * 1e3, "sgm Xavier memory, from its own plan's bytes")
fo = stages["faces"]["agx_orin"]
near(fo["fp64_ms"], 2.6e6 / (16 * 2 * 1.3e9) * 1e3, "faces Orin FP64")
near(fo["projected_ms"], max(2 * 14 / 16 * 1.5, fo["fp64_ms"], 1.0), "faces Orin: the largest figure")
if "(no stage) memsetKernel" not in stages:
    sys.exit("a kernel outside every stage is not listed on its own")
near(p["total_projected_ms"]["AGX Orin"], sum(s["agx_orin"]["projected_ms"] for s in p["stages"]), "Orin total")
PY
grep -q '^| \*\*frame\*\*' "$dir/projection.md"
echo "jetson_projection: OK"
