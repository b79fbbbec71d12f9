// Prepended to every program (program.cpp). Tensors are passed as a whole block (a cl_mem) plus
// an element offset in the kernel's parameter struct, as Vulkan passes push constants.
//
// Float kernels: tensors are float32, or float16 with -DPI_FP16, which are loaded and stored with
// vload_half/vstore_half_rte (core OpenCL: no cl_khr_fp16 needed) and computed in float32, as the
// Vulkan provider does (docs/vulkan.md "Precision": round to nearest even, one rounding per
// stored value).
#ifdef PI_FP16
#define TPTR __global half*
#define CTPTR __global const half*
#define LOAD(p, i) vload_half((i), (p))
#define STORE(p, i, v) vstore_half_rte((v), (i), (p))
#else
#define TPTR __global float*
#define CTPTR __global const float*
#define LOAD(p, i) ((p)[i])
#define STORE(p, i, v) ((p)[i] = (v))
#endif

// Data-movement kernels move elements as bits: -DPI_ELEM=uchar, ushort, uint or ulong picks the
// element size (1, 2, 4 or 8 bytes); uint by default.
#ifndef PI_ELEM
#define PI_ELEM uint
#endif
typedef PI_ELEM elem_t;

#define PI_MAX_RANK 6
