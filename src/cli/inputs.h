// Model inputs for the subcommands that run a model (`run`, `bench`): read from files, or made
// from seeded random data, so that two commands given the same flags feed the same values.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "cli/cli.h"

namespace polyinfer::cli {

// Every input of `session`, from the parsed flags:
//   -i/--input NAME=FILE   a .npy (numpy.save) or .pb (ONNX TensorProto) file
//   --shape NAME=DIMS      the shape of a generated input ("1x3x224x224" or "1,3,224,224")
//   --seed N               seed of the generated data (default 0)
// Inputs not given by file are random: floats uniform in [-1, 1), integers in 0..3, with dynamic
// dimensions set to 1 unless --shape names them. A flag naming an input the model lacks, or a
// non-tensor input without a file, is an InvalidArgument error. Lines worth telling the user
// ("dynamic dimensions set to 1") are appended to `notes`.
std::map<std::string, Value> make_inputs(const Session& session, const Args& args,
                                         std::vector<std::string>* notes);

}  // namespace polyinfer::cli
