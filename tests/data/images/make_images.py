#!/usr/bin/python3
"""Writes the small images tests/unit/text_image_test.cpp decodes (run here, with Debian's
python3-pil 9.4: /usr/bin/python3 make_images.py). Every image holds the same 7 x 5 pattern, odd
in both directions so that row padding and chroma subsampling are exercised:

    R = 30x + 11y, G = 250 - 40y - 5x, B = (13xy + 7) mod 256

The lossless formats must give it back exactly; the JPEG files' expected pixels are Pillow's
decoding of them, written into the test.
"""
import numpy as np
from PIL import Image

W, H = 7, 5
a = np.zeros((H, W, 3), np.uint8)
for y in range(H):
    for x in range(W):
        a[y, x] = (30 * x + 11 * y, 250 - 40 * y - 5 * x, (x * y * 13 + 7) % 256)
rgb = Image.fromarray(a, "RGB")


def palette():  # 35 colours: quantizing to 64 keeps every one
    return rgb.quantize(colors=64, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)


alpha = (np.arange(H * W).reshape(H, W) * 7 % 256).astype(np.uint8)
rgb.save("rgb.png")
Image.fromarray(np.dstack([a, alpha]), "RGBA").save("rgba.png")
palette().save("palette.png")
Image.fromarray(a[:, :, 0].astype(np.uint16) * 257).save("grey16.png")  # 16-bit grey
rgb.save("rgb.bmp")
palette().save("palette.bmp")
rgb.save("rgb.tif")
rgb.save("rgb_lzw.tif", compression="tiff_lzw")
palette().save("palette.tif")
rgb.save("rgb.webp", lossless=True)
rgb.save("rgb.jp2")  # reversible 5-3 wavelet: lossless
rgb.save("rgb.j2k")  # the bare codestream
rgb.save("rgb.jpg", quality=95)
rgb.save("rgb_progressive.jpg", quality=95, progressive=True)
Image.fromarray(a[:, :, 0], "L").save("grey.jpg", quality=95)
rgb.convert("CMYK").save("cmyk.jpg", quality=95)  # Adobe inverted CMYK
rgb.save("rgb.ppm")
