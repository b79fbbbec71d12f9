/* polyinfer/c_api.h — polyinfer from C, and from every language that binds C.
 *
 *   PiSessionOptions* opts = NULL;
 *   PiSession* session = NULL;
 *   PiStatus* st = pi_options_create(&opts);
 *   if (!st) st = pi_options_set_providers(opts, "cpu");
 *   if (!st) st = pi_session_create("digits_cnn.onnx", opts, &session);
 *   if (st) {
 *     fprintf(stderr, "error: %s\n", pi_status_message(st));   // names the thing and the fix
 *     pi_status_release(st);
 *   }
 *
 *   int64_t shape[4] = {1, 1, 8, 8};
 *   float pixels[64] = {0};
 *   PiTensor* x = NULL;                           // the caller's memory, not copied
 *   pi_tensor_borrow(PI_DTYPE_FLOAT32, shape, 4, pixels, sizeof pixels, &x);
 *   const char* names[1] = {"pixels"};
 *   PiTensor* logits = NULL;                      // allocated by the library
 *   st = pi_session_run(session, names, (const PiTensor* const*)&x, 1, NULL, 0, &logits, 1);
 *   const float* y = (const float*)pi_tensor_data(logits);
 *   pi_tensor_release(logits);
 *   pi_tensor_release(x);
 *   pi_session_release(session);
 *   pi_options_release(opts);
 *
 * Plain C11 on both sides: no C++ type crosses this header, and no exception leaves it. Every
 * function that can fail returns a PiStatus*: NULL on success, otherwise an error the caller
 * releases, whose code is status.h's ErrorCode and whose message is the one the C++ API gives.
 * Handles are opaque; each *_create has a *_release that accepts NULL.
 *
 * Threads: a PiSession may be run from many threads at once, each run using the session's
 * intra-op threads; on the CPU the runs overlap node by node (polyinfer/session.h). Everything
 * else about a handle is for one thread at a time.
 *
 * ABI: the shared library exports these functions with ELF symbol versions (c_api.map): the
 * ones of API version 1 as POLYINFER_1. A function, once exported, keeps its name, signature
 * and meaning; later versions only add functions (under a new version node) and enum values.
 * A program compiled against PI_API_VERSION N runs with any library whose pi_api_version() is
 * N or more. docs/design.md, "The C API", has the rules.
 */
#ifndef POLYINFER_C_API_H
#define POLYINFER_C_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PI_API_VERSION 1

typedef struct PiStatus PiStatus;
typedef struct PiSessionOptions PiSessionOptions;
typedef struct PiSession PiSession;
typedef struct PiTensor PiTensor;

/* Error codes: the values of polyinfer::ErrorCode (status.h). */
typedef enum PiErrorCode {
  PI_OK = 0,
  PI_INVALID_MODEL = 1,        /* the model is not valid ONNX, or breaks the spec */
  PI_INVALID_ARGUMENT = 2,     /* a bad option, name, dtype, value or NULL from the caller */
  PI_UNSUPPORTED_OP = 3,       /* no provider in the list can run a node */
  PI_PROVIDER_UNAVAILABLE = 4, /* a requested provider is not usable on this machine */
  PI_SHAPE_MISMATCH = 5,       /* an input has a shape the model does not allow */
  PI_OUT_OF_MEMORY = 6,        /* an allocation failed or would exceed a limit */
  PI_IO = 7,                   /* a file could not be read */
  PI_INTERNAL = 8              /* a bug in polyinfer: please report it */
} PiErrorCode;

/* Element types: ONNX's TensorProto.DataType numbers (dtype.h). The C API passes tensors of
 * whole-byte types; strings, packed 4/2-bit and float6 types are refused with a message. */
typedef int32_t PiDType;
#define PI_DTYPE_UNDEFINED 0
#define PI_DTYPE_FLOAT32 1
#define PI_DTYPE_UINT8 2
#define PI_DTYPE_INT8 3
#define PI_DTYPE_UINT16 4
#define PI_DTYPE_INT16 5
#define PI_DTYPE_INT32 6
#define PI_DTYPE_INT64 7
#define PI_DTYPE_STRING 8
#define PI_DTYPE_BOOL 9
#define PI_DTYPE_FLOAT16 10
#define PI_DTYPE_FLOAT64 11
#define PI_DTYPE_UINT32 12
#define PI_DTYPE_UINT64 13
#define PI_DTYPE_BFLOAT16 16

/* ---- library ---- */

/* The library's API version: PI_API_VERSION of the header it was built from. */
uint32_t pi_api_version(void);
/* polyinfer's release, "0.1.0". Static storage. */
const char* pi_version(void);
/* "float32", "int64", ...; "" for a number that is no dtype. Static storage. */
const char* pi_dtype_name(PiDType dtype);

/* ---- errors ---- */

PiErrorCode pi_status_code(const PiStatus* status);    /* PI_OK for NULL */
const char* pi_status_message(const PiStatus* status); /* "" for NULL; lives as the status */
void pi_status_release(PiStatus* status);

/* ---- session options: polyinfer::SessionOptions ---- */

PiStatus* pi_options_create(PiSessionOptions** out);
void pi_options_release(PiSessionOptions* options);
/* Providers in order of preference, comma-separated, each with its options as the CLI takes
 * them: "cpu", "vulkan,cpu", "cuda:device=0,cpu", "auto", "cpu:winograd=off". Default "cpu".
 * Checked when a session is created. */
PiStatus* pi_options_set_providers(PiSessionOptions* options, const char* providers);
/* Nonzero: a listed provider that is not usable is skipped (and reported in the placement)
 * instead of failing session creation. Default 0. */
PiStatus* pi_options_set_allow_fallback(PiSessionOptions* options, int allow);
/* Intra-op threads; 0 (the default) is one per physical core. */
PiStatus* pi_options_set_threads(PiSessionOptions* options, int threads);
/* Graph optimization level, 0 (none) to 3 (all, the default). */
PiStatus* pi_options_set_optimization_level(PiSessionOptions* options, int level);
/* "fp32" (the default), "fp16" or "bf16". */
PiStatus* pi_options_set_precision(PiSessionOptions* options, const char* precision);

/* ---- sessions ---- */

/* Loads and prepares a model; `options` may be NULL for the defaults. */
PiStatus* pi_session_create(const char* path, const PiSessionOptions* options, PiSession** out);
/* The same from a model in memory (copied; external data files are not allowed). */
PiStatus* pi_session_create_from_bytes(const void* data, size_t size,
                                       const PiSessionOptions* options, PiSession** out);
void pi_session_release(PiSession* session);

/* The model's inputs (is_output 0) or outputs (is_output nonzero), as it declares them. Strings
 * live as the session. For an index out of range: 0, NULL or -1 (dims), PI_DTYPE_UNDEFINED. */
size_t pi_session_io_count(const PiSession* session, int is_output);
const char* pi_session_io_name(const PiSession* session, int is_output, size_t index);
PiDType pi_session_io_dtype(const PiSession* session, int is_output, size_t index);
/* The declared rank; -1 when even the rank is unknown. */
int64_t pi_session_io_rank(const PiSession* session, int is_output, size_t index);
/* Dimension `axis`: its size, or -1 where it is dynamic... */
int64_t pi_session_io_dim(const PiSession* session, int is_output, size_t index, size_t axis);
/* ...and then its symbolic name ("batch"), or "" when it has none. */
const char* pi_session_io_dim_name(const PiSession* session, int is_output, size_t index,
                                   size_t axis);

/* Runs the model: `n_inputs` named inputs, and outputs by name (`output_names` NULL with
 * `n_outputs` 0 means every output in the model's order; then `outputs` has room for
 * pi_session_io_count(session, 1)). `n_outputs_room` is the length of `outputs`.
 *
 * For each output slot: NULL on entry, the library allocates a tensor the caller releases; a
 * tensor on entry (pi_tensor_create or pi_tensor_borrow, with the output's dtype and shape), the
 * result is copied into its memory. Inputs are read where they lie, without a copy. On error
 * no output slot that was NULL is set. */
PiStatus* pi_session_run(PiSession* session, const char* const* input_names,
                         const PiTensor* const* inputs, size_t n_inputs,
                         const char* const* output_names, size_t n_outputs, PiTensor** outputs,
                         size_t n_outputs_room);

/* Where every node runs and why (providers, per-node provider and kernel, fallbacks with their
 * reasons, skipped providers, device copies) as JSON text: Placement::to_json() of session.h,
 * the "placement" of `polyinfer run --json`. A new string the caller frees with
 * pi_string_release; NULL for a NULL session. */
char* pi_session_placement_json(const PiSession* session);
void pi_string_release(char* text);

/* ---- tensors (host memory) ---- */

/* Uninitialized elements in memory the library owns (64-byte aligned). */
PiStatus* pi_tensor_create(PiDType dtype, const int64_t* shape, size_t rank, PiTensor** out);
/* A tensor over the caller's memory, which is not copied: `data` must hold `nbytes` bytes (the
 * shape's element count times the element size) and stay valid, and unchanged while a run reads
 * it, until the tensor is released. */
PiStatus* pi_tensor_borrow(PiDType dtype, const int64_t* shape, size_t rank, void* data,
                           size_t nbytes, PiTensor** out);
void pi_tensor_release(PiTensor* tensor);
PiDType pi_tensor_dtype(const PiTensor* tensor);
size_t pi_tensor_rank(const PiTensor* tensor);
/* The dimensions (pi_tensor_rank of them); lives as the tensor. */
const int64_t* pi_tensor_shape(const PiTensor* tensor);
size_t pi_tensor_nbytes(const PiTensor* tensor);
/* The elements, row-major. Writable: a tensor is the caller's once returned. */
void* pi_tensor_data(PiTensor* tensor);

#ifdef __cplusplus
}
#endif

#endif /* POLYINFER_C_API_H */
