// polyinfer/io.h — numpy .npy tensor files: the format `polyinfer run -i NAME=FILE.npy` reads and
// `-o DIR` writes, and that numpy.save / numpy.load speak.
//
// Reading accepts format versions 1.0, 2.0 and 3.0 and these dtypes (any byte order; '>' data is
// byte-swapped):
//   f2 f4 f8 -> float16 float32 float64      i1 i2 i4 i8 -> int8 .. int64
//   u1 u2 u4 u8 -> uint8 .. uint64           b1 -> bool (any non-zero byte reads as true)
//   U<n> (UCS-4) and S<n> (bytes) -> string tensors (UTF-8, trailing NULs stripped as numpy does)
// fortran_order=True arrays are transposed to polyinfer's row-major (C) order. Complex, object
// (pickled), structured, datetime and opaque dtypes ('V', which is also how ml_dtypes' bfloat16
// saves) are rejected with a message that says how to convert the array.
//
// The input is untrusted: the header length, the dtype, every dimension, the element count and
// the byte count are checked against the data actually present (with overflow checks) before
// anything is allocated. Errors are polyinfer::Error — Io when a file cannot be opened, read or
// written, InvalidArgument when its content is not a valid .npy array — and name the file.
//
// Writing produces format 1.0, little-endian, C order, with the header padded to 64 bytes exactly
// as numpy.save does. String tensors are written as <U<n>;
// bfloat16 has no numpy dtype and is rejected (convert to float32 first).
//
//   polyinfer::Tensor x = polyinfer::read_npy("input.npy");
//   polyinfer::write_npy("out/logits.npy", logits);
#pragma once

#include <cstddef>
#include <string>

#include "polyinfer/tensor.h"

namespace polyinfer {

// Reads a .npy file into a host tensor. Throws Io when the file cannot be read and
// InvalidArgument when it is not a valid .npy array of a supported dtype.
Tensor read_npy(const std::string& path);

// Parses .npy bytes held in memory; `what` names them in error messages (a path or an input
// name). Throws InvalidArgument.
Tensor parse_npy(const void* data, size_t size, const std::string& what);

// Writes `t` (from any device) to `path` as .npy, replacing the file. Throws InvalidArgument for
// a dtype numpy cannot represent and Io when the file cannot be written.
void write_npy(const std::string& path, const Tensor& t);

// The bytes write_npy would write.
std::string to_npy_bytes(const Tensor& t);

}  // namespace polyinfer
