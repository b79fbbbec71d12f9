#!/usr/bin/env bash
# Installs the Debian packages polyinfer needs to build and test, and only those that are
# missing (so it is quick and quiet on a machine that already has them).
set -euo pipefail

packages=(
  cmake ninja-build g++ ccache pkg-config
  libonnx-dev libprotobuf-dev protobuf-compiler   # ONNX import/export
  libdnnl-dev ocl-icd-opencl-dev                  # oneDNN: fast CPU Conv/MatMul kernels (its CMake
                                                  # config wants libOpenCL.so)
  libgtest-dev libbenchmark-dev                   # unit tests, bench/ micro-benchmarks
  libonnx-testdata                                # the ONNX backend test data (conformance)
  clang libclang-rt-14-dev libomp-dev             # the CI build (tools/test.sh): clang, libFuzzer,
                                                  # OpenMP
  clang-format                                    # tools/check_format.sh (the test command)
  python3-venv                                    # tools/pyenv.sh (ONNX Runtime comparisons)
  libvulkan-dev mesa-vulkan-drivers               # Vulkan headers + loader, llvmpipe (doctor,
                                                  # tests)
  glslang-tools                                   # glslangValidator: Vulkan shaders to SPIR-V at
                                                  # build time
  opencl-c-headers ocl-icd-libopencl1 pocl-opencl-icd   # OpenCL headers, ICD loader, PoCL
  python3-torch python3-torchvision               # bench/export_models.py: the models the device
                                                  # providers' tests run (ctest device_models)
  nlohmann-json3-dev                              # reading plan's target catalog and caches
  libcpp-httplib-dev                              # polyinfer serve: HTTP (KServe v2)
  libgrpc++-dev protobuf-compiler-grpc            # polyinfer serve: gRPC (KServe v2)
  libre2-dev                                      # RegexFullMatch
  libjpeg62-turbo-dev libpng-dev libtiff-dev libwebp-dev libopenjp2-7-dev   # ImageDecoder
)
if [ "${1:-}" = "--print" ]; then printf '%s\n' "${packages[@]}"; exit 0; fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "setup: installing ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
