export LD_LIBRARY_PATH=$PWD/build-gpu/lib
B=build-gpu/bin
ncu --clock-control none -k regex:sweep --launch-skip 2 -c 1 --section InstructionStats --section WarpStateStats --section SourceCounters --page source --csv --print-source sass $B/polarpipe_bench --case 'stereo/sgm-half-d128-p8-sweeps$' --iterations 5 > $OUT/sweep_src.csv 2> $OUT/sweep_err.txt; echo rc=$?
ncu --clock-control none -k regex:sweep --launch-skip 2 -c 1 --section InstructionStats --section WarpStateStats $B/polarpipe_bench --case 'stereo/sgm-half-d128-p8-sweeps$' --iterations 5 > $OUT/sweep_sum.txt 2>&1; echo rc=$?
grep -E "Executed Instructions  |Warp Cycles Per Issued|stalled" $OUT/sweep_sum.txt | head; tail -3 $OUT/sweep_err.txt; wc -c $OUT/sweep_src.csv
