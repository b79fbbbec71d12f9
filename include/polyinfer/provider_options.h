// polyinfer/provider_options.h — what a session may switch in its providers, typed.
//
//   polyinfer::SessionOptions opts;
//   opts.cpu.kernels["winograd"] = polyinfer::KernelSwitch::Off;  // oneDNN takes those layers
//   opts.cpu.gemm_tile = polyinfer::GemmTile::Avx2;               // the 6x16 ymm tiles
//
// The same as text, the form the CLI, the Python and the C APIs take: a provider list entry
// carries its options after the name, each as key=value behind a colon
// (`--providers cpu:winograd=off:gemm_tile=avx2`), or set_provider_option() applies one.
// `polyinfer providers` lists every provider's keys and values.
//
// The CPU provider chooses among an operator's kernels by one ordered table per operator
// (docs/kernels.md); a switch changes what a row of it may do, never the order.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace polyinfer {

// A kernel's switch in the CPU provider's choice tables.
enum class KernelSwitch {
  Auto,  // the table's rules: where the kernel can compute the node and is measured fastest
  On,    // wherever the kernel can compute the node, also where the table prefers a later row
         // (A/B measurements, tests); it still needs its instruction set
  Off,   // never: the node goes to the next row
};

// The register tiles of the CPU provider's packed GEMM (MatMul, 1x1 and Winograd
// convolutions, attention).
enum class GemmTile {
  Auto,         // the widest this CPU runs: Avx512Pairs where it has AVX-512, else Avx2
  Avx2,         // 6x16 ymm tiles
  Avx512,       // 8x32 zmm tiles, one 32-column panel at a time
  Avx512Pairs,  // 6x64 zmm tiles over two full panels, 8x32 for a last one
};

struct CpuProviderOptions {
  // Per-kernel switches, by the kernel's name in the choice tables ("winograd", "im2col",
  // "packed_matmul", ...); a kernel not named is Auto. A name no table knows is an
  // InvalidArgument error when the session is created.
  std::map<std::string, KernelSwitch> kernels;
  // An instruction set the CPU lacks is an InvalidArgument error when the session is created.
  GemmTile gemm_tile = GemmTile::Auto;
};

struct CudaProviderOptions {
  // int8 products on polyinfer's plain int8 GEMM instead of cuBLASLt, for every shape (what
  // runs where cuBLASLt has no int8 algorithm; tests reach it this way).
  bool plain_int8_gemm = false;
};

// Every provider's options, as a session hands them to the kernels it creates.
struct ProviderOptions {
  CpuProviderOptions cpu;
  CudaProviderOptions cuda;
};

// One option as text: its key, the values it takes, what it does.
struct ProviderOptionInfo {
  std::string key;
  std::string values;  // "auto|on|off"
  std::string meaning;
};

// Sets option `key` of `provider` ("cpu", "cuda"; an index such as "cuda:0" is ignored) from
// text. Throws InvalidArgument naming the provider and the key, with the keys or values it
// takes, for an unknown provider, key or value.
void set_provider_option(ProviderOptions& options, const std::string& provider,
                         const std::string& key, const std::string& value);

// The options `provider` takes, in the order `polyinfer providers` lists them (empty: none).
std::vector<ProviderOptionInfo> provider_option_list(const std::string& provider);

}  // namespace polyinfer
