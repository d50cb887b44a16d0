// Colour maps of the view (compose), the same code on the CPU and in CUDA: turbo (Mikhailov 2019,
// polynomial fit) and HSV hue of t in [0, 1], and a value in [0, 1] as a byte.
#pragma once
#include <cmath>
#include <cstdint>

#include "cuda/image_view.hpp"

namespace pp::compose {

PP_HD uint8_t toByte(double v) {
  v = v < 0 ? 0 : v > 1 ? 1 : v;
  return static_cast<uint8_t>(floor(v * 255.0 + 0.5));
}

PP_HD void turboRgb(double t, uint8_t* rgb) {
  t = t < 0 ? 0 : t > 1 ? 1 : t;
  rgb[0] = toByte(0.13572138 +
                  t * (4.61539260 + t * (-42.66032258 + t * (132.13108234 + t * (-152.94239396 + t * 59.28637943)))));
  rgb[1] =
      toByte(0.09140261 + t * (2.19418839 + t * (4.84296658 + t * (-14.18503333 + t * (4.27729857 + t * 2.82956604)))));
  rgb[2] = toByte(0.10667330 +
                  t * (12.64194608 + t * (-60.58204836 + t * (110.36276771 + t * (-89.90310912 + t * 27.34824973)))));
}

PP_HD void hueRgb(double t, uint8_t* rgb) {
  double h = (t - floor(t)) * 6.0, f = h - floor(h);
  uint8_t up = toByte(f), down = toByte(1 - f);
  switch (static_cast<int>(h) % 6) {
    case 0: rgb[0] = 255, rgb[1] = up, rgb[2] = 0; break;
    case 1: rgb[0] = down, rgb[1] = 255, rgb[2] = 0; break;
    case 2: rgb[0] = 0, rgb[1] = 255, rgb[2] = up; break;
    case 3: rgb[0] = 0, rgb[1] = down, rgb[2] = 255; break;
    case 4: rgb[0] = up, rgb[1] = 0, rgb[2] = 255; break;
    default: rgb[0] = 255, rgb[1] = 0, rgb[2] = down; break;
  }
}

}  // namespace pp::compose
