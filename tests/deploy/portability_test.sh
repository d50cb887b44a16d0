#!/usr/bin/env bash
# tools/check-portability passes on the tree and catches a planted API newer than CUDA 11.4, unless
# only a toolkit that has it compiles that code.
set -uo pipefail
tools="$(cd "$(dirname "$0")/../../tools" && pwd)"
fail() { echo "FAIL: $*"; exit 1; }

"$tools/check-portability" || fail "the tree itself does not pass"
planted=$(mktemp -d)
trap 'rm -rf "$planted"' EXIT
mkdir -p "$planted/cuda"
printf '#include <cuda_runtime.h>\n__global__ void k(int* p) { *p = 1; }\nvoid go(int* p) {\n  cudaLaunchConfig_t config = {};\n  (void)config;\n  k<<<1, 1>>>(p);\n}\n' > "$planted/cuda/new_api.cu"
out=$("$tools/check-portability" --root "$planted" 2>&1) && fail "a CUDA 11.8 API passed"
grep -q "cudaLaunchConfig_t needs CUDA 11.8" <<<"$out" || fail "the API was not named: $out"

# Behind `#if CUDART_VERSION >= 11080` it passes; behind a lower version, or in the #else, it does not.
guarded() {
  printf '#include <cuda_runtime.h>\n__global__ void k(int* p) { *p = 1; }\nvoid go(int* p) {\n#if CUDART_VERSION >= %s\n  %b\n#else\n  %b\n#endif\n  k<<<1, 1>>>(p);\n}\n' "$1" "$2" "$3" > "$planted/cuda/new_api.cu"
}
config='cudaLaunchConfig_t config = {};\n  (void)config;'
guarded 11080 "$config" ""
"$tools/check-portability" --root "$planted" > /dev/null 2>&1 || fail "an API behind CUDART_VERSION >= 11080 was flagged"
guarded 11000 "$config" ""
out=$("$tools/check-portability" --root "$planted" 2>&1) && fail "an API behind CUDART_VERSION >= 11000 passed"
grep -q "cudaLaunchConfig_t needs CUDA 11.8" <<<"$out" || fail "the API was not named: $out"
guarded 11080 "" "$config"
out=$("$tools/check-portability" --root "$planted" 2>&1) && fail "an API in the #else passed"
grep -q "cudaLaunchConfig_t needs CUDA 11.8" <<<"$out" || fail "the API was not named: $out"
echo "5 passed, 0 failed"
