// JSON text for the reports polyinfer writes (placement, doctor, bench).
#pragma once

#include <string>

namespace polyinfer {

// `s` as a JSON string literal, quotes included; control characters escaped.
std::string json_quote(const std::string& s);

}  // namespace polyinfer
