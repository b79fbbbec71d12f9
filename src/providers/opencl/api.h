// The OpenCL functions the provider calls, taken from libOpenCL.so.1 (the ICD loader) with
// dlopen, so the binary runs where OpenCL is absent. The headers give the types only; nothing
// links against libOpenCL. OpenCL 1.2 is the API used: it is what every driver still shipping
// (PoCL, Intel, NVIDIA, Arm Mali, Qualcomm Adreno) implements.
#pragma once

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include <string>

namespace polyinfer::opencl {

// One X(name) per OpenCL function, several to a line.
// clang-format off
#define PI_CL_FNS(X)                                                                          \
  X(clGetPlatformIDs) X(clGetPlatformInfo) X(clGetDeviceIDs) X(clGetDeviceInfo)               \
  X(clCreateContext) X(clReleaseContext) X(clCreateCommandQueue) X(clReleaseCommandQueue)     \
  X(clCreateBuffer) X(clReleaseMemObject) X(clCreateProgramWithSource)                        \
  X(clCreateProgramWithBinary) X(clBuildProgram) X(clGetProgramInfo) X(clGetProgramBuildInfo) \
  X(clReleaseProgram) X(clCreateKernel) X(clReleaseKernel) X(clSetKernelArg)                  \
  X(clEnqueueNDRangeKernel) X(clEnqueueReadBuffer) X(clEnqueueWriteBuffer)                    \
  X(clEnqueueCopyBuffer) X(clEnqueueMapBuffer) X(clEnqueueUnmapMemObject) X(clFinish)         \
  X(clFlush)
// clang-format on

struct Fns {
#define PI_CL_FIELD(name) decltype(&::name) name = nullptr;
  PI_CL_FNS(PI_CL_FIELD)
#undef PI_CL_FIELD
};

// "CL_OUT_OF_RESOURCES (-5)" for an OpenCL error code.
std::string error_name(cl_int code);

// Throws Internal naming `what` and the error unless `r` is CL_SUCCESS.
void check(cl_int r, const char* what);

}  // namespace polyinfer::opencl
