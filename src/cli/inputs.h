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

// One input sample read from a file, and where it came from ("x.npy", "x.npy row 3") for errors.
struct Sample {
  Tensor tensor;
  std::string origin;
};
// When a file holding more rows (dimension 0) than the input takes is split into one sample per
// row: only for an input whose batch is fixed at 1, or also for a dynamic batch.
enum class SplitRows { WhenBatchIsOne, WhenBatchIsOneOrDynamic };
// The samples of `input` in `path`: a folder's .npy files in name order, or one .npy file, each
// split into rows as `split` says (a file whose rank differs from the input's is never split).
// Throws InvalidArgument / Io naming `flag` and the path when it is missing or holds no .npy file.
std::vector<Sample> read_samples(const std::string& flag, const std::string& path,
                                 const ValueSpec& input, SplitRows split);

}  // namespace polyinfer::cli
