// OpenCV's RGB2GRAY in 14-bit fixed point: how a colour camera's S0 becomes the grey image face
// detection reads, on the CPU and in CUDA alike.
#pragma once

namespace pp::faces {

#ifdef __CUDACC__
__host__ __device__
#endif
inline unsigned lumaOf(unsigned r, unsigned g, unsigned b) { return (r * 4899 + g * 9617 + b * 1868 + (1u << 13)) >> 14; }

}  // namespace pp::faces
