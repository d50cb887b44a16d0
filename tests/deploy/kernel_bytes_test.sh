#!/usr/bin/env bash
# tools/kernel_bytes.py on an Nsight Compute CSV made up for the test: the last whole frame of the
# bench's kernels (the period of their names), units converted, kernels named without namespace
# and parameters, totals summed (warp instructions and the SMs' requests by kind too).
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/stereo_x.csv" <<'CSV'
==PROF== Connected to process 1
"ID","Kernel Name","gpu__time_duration.sum","lts__t_bytes.sum","dram__bytes_read.sum","dram__bytes_write.sum","smsp__inst_executed.sum","lts__t_sectors_srcunit_tex_op_read.sum","lts__t_sectors_srcunit_tex_op_write.sum","lts__t_sectors_srcunit_tex_op_red.sum","lts__t_sectors_srcunit_tex_op_atom.sum"
"","","ns","Gbyte","Mbyte","Mbyte","inst","Msector","sector","Msector","Ksector"
"0","void pp::stereo::(anonymous namespace)::census(pp::ImageView<const unsigned char>)","9,000","0.001","1","0","10,000","0.1","0","0","0"
"1","void pp::stereo::(anonymous namespace)::census(pp::ImageView<const unsigned char>)","20,000","0.064","2","0","10,000","0.1","312,500","0","0"
"2","void pp::stereo::(anonymous namespace)::aggregate<128, 16, false>(pp::stereo::SgmParams)","1,500,000","4.5","2,000","1,000","9,000,000","1","0","99","0"
"3","void pp::stereo::(anonymous namespace)::census(pp::ImageView<const unsigned char>)","20,000","0.064","2","0","10,000","0.1","312,500","0","0"
"4","void pp::stereo::(anonymous namespace)::aggregate<128, 16, false>(pp::stereo::SgmParams)","1,000,000","4","2,000","1,000","8,000,000","1","0","100","500"
CSV
echo '{"device": "test", "cases": [{"name": "stereo/x", "ms": 1.5}]}' > "$dir/stereo_x.bench.json"
python3 tools/kernel_bytes.py --gpu test --commit abc --dir "$dir" stereo/x > /dev/null
python3 - "$dir/kernel-bytes.json" <<'PY'
import json, sys
case = json.load(open(sys.argv[1]))["cases"]["stereo/x"]
if case.get("device") != "test" or case["cases"][0]["ms"] != 1.5:
    sys.exit("the bench's own JSON is kept beside the bytes")
c = case["kernel_bytes"]
names = [k["kernel"] for k in c["kernels"]]
if names != ["census", "aggregate<128, 16, false>"]:
    sys.exit(f"one frame's kernels, named plainly: {names}")
def near(a, b, what):
    if abs(a - b) > 1e-6 * max(1, abs(b)):
        sys.exit(f"{what}: {a}, expected {b}")
near(c["kernels"][1]["ms"], 1.0, "the last frame's aggregate ms")
near(c["kernels"][1]["l2_bytes"], 4e9, "aggregate L2 bytes")
near(c["total"]["l2_bytes"], 4.064e9, "total L2 bytes")
near(c["total"]["dram_read_bytes"], 2.002e9, "total DRAM read")
near(c["total"]["instructions"], 8.01e6, "total warp instructions")
# The SMs' requests to the L2 by kind, in bytes (32 a sector), each of the ncu units.
near(c["kernels"][0]["sm_read_bytes"], 3.2e6, "census reads")
near(c["kernels"][0]["sm_write_bytes"], 1e7, "census writes")
near(c["kernels"][1]["sm_reduction_bytes"], 3.2e9, "aggregate reductions")
near(c["kernels"][1]["sm_atomic_bytes"], 1.6e7, "aggregate atomics")
near(c["total"]["sm_read_bytes"], 3.52e7, "total reads")
PY
grep -qF "| \`stereo/x\` | **total** | 1.020 | 4064 | 2002 | 1000 | 8.0 | 35 / 10 / 3216 |" "$dir/kernel-bytes.md" || { cat "$dir/kernel-bytes.md"; exit 1; }
# A CSV without two whole frames is an error, not a guess.
head -4 "$dir/stereo_x.csv" > "$dir/stereo_y.csv"
if python3 tools/kernel_bytes.py --gpu test --dir "$dir" stereo/y > /dev/null 2>&1; then echo "one frame taken as a period"; exit 1; fi
echo "kernel_bytes: OK"
