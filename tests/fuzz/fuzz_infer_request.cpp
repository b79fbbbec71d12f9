// `polyinfer serve`'s request parser fuzzer (serve/infer_json.h): any body, JSON alone or JSON
// with the binary tensor extension's bytes after it, against a model with float, integer,
// string and half inputs → a checked request or polyinfer::Error, and the response built from
// the inputs echoed back.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "serve/infer_json.h"
#include "serve_fuzz_model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto& inputs = polyinfer::fuzz::serve_inputs();
  const auto& outputs = polyinfer::fuzz::serve_outputs();
  if (size < 2) return 0;
  // The first two bytes: the Inference-Header-Content-Length (0xFFFF: none, all JSON).
  const int v = data[0] | (data[1] << 8);
  const int64_t header_length = v == 0xFFFF ? -1 : v;
  const std::string body(reinterpret_cast<const char*>(data) + 2, size - 2);
  try {
    const polyinfer::serve::InferRequest r =
        polyinfer::serve::parse_infer_request(body, header_length, inputs, outputs);
    // Echo the inputs as outputs: the response writer sees every dtype the parser made.
    std::vector<std::string> names;
    std::vector<polyinfer::Value> values;
    for (const auto& [name, value] : r.inputs) {
      names.push_back(name);
      values.push_back(value);
    }
    polyinfer::serve::infer_response("m", "1", r, names, values);
  } catch (const polyinfer::Error&) {
  }
  return 0;
}
