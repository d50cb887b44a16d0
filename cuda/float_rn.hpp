// Float products, sums and fused multiply-adds rounded exactly as written on the host and the
// device alike (the device compiler would otherwise fuse a * b + c), for results the CPU
// references must reproduce bit for bit.
#pragma once
#include <cmath>

#include "cuda/image_view.hpp"  // PP_HD

namespace pp {

PP_HD float mulRn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
PP_HD float addRn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
PP_HD float fmaRn(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

}  // namespace pp
