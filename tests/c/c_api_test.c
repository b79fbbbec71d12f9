/* The C API from a C11 program: classify the digits test split (examples/digits) as the training
 * script did, from one thread and from eight at once, with borrowed and library-made tensors;
 * then every error path a caller can reach, each with its code and a message that names the
 * thing. Usage: c_api_test DIGITS_DIR. Exit status 0 when every check holds. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "polyinfer/c_api.h"

static int failures = 0;

#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                            \
      fprintf(stderr, "\n");                                                   \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

/* Stops the program on a status where the test cannot go on. */
static void must(PiStatus* st, const char* what) {
  if (st) {
    fprintf(stderr, "%s: %s (code %d)\n", what, pi_status_message(st), (int)pi_status_code(st));
    pi_status_release(st);
    exit(1);
  }
}

/* Expects `st` to fail with `code` and a message containing each of up to two needles. */
static void expect_error(PiStatus* st, PiErrorCode code, const char* needle, const char* needle2,
                         const char* what) {
  CHECK(st != NULL, "%s: succeeded, expected error code %d", what, (int)code);
  if (!st) return;
  const char* msg = pi_status_message(st);
  CHECK(pi_status_code(st) == code, "%s: code %d, expected %d (%s)", what, (int)pi_status_code(st),
        (int)code, msg);
  CHECK(!needle || strstr(msg, needle), "%s: message lacks '%s': %s", what, needle, msg);
  CHECK(!needle2 || strstr(msg, needle2), "%s: message lacks '%s': %s", what, needle2, msg);
  pi_status_release(st);
}

/* The data of a little-endian .npy file whose dtype is `descr` ("<f4"), and its byte count. */
static void* read_npy(const char* path, const char* descr, size_t* nbytes) {
  FILE* f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "cannot open %s\n", path);
    exit(1);
  }
  unsigned char head[10];
  if (fread(head, 1, 10, f) != 10 || memcmp(head, "\x93NUMPY", 6) != 0 || head[6] != 1) {
    fprintf(stderr, "%s is not a version-1 .npy file\n", path);
    exit(1);
  }
  size_t header = (size_t)head[8] | ((size_t)head[9] << 8);
  char* dict = calloc(header + 1, 1);
  if (!dict || fread(dict, 1, header, f) != header || !strstr(dict, descr)) {
    fprintf(stderr, "%s: expected dtype %s\n", path, descr);
    exit(1);
  }
  free(dict);
  fseek(f, 0, SEEK_END);
  *nbytes = (size_t)ftell(f) - 10 - header;
  fseek(f, (long)(10 + header), SEEK_SET);
  void* data = malloc(*nbytes + 64);
  if (!data || fread(data, 1, *nbytes, f) != *nbytes) exit(1);
  fclose(f);
  return data;
}

static size_t argmax10(const float* row) {
  size_t best = 0;
  for (size_t c = 1; c < 10; ++c)
    if (row[c] > row[best]) best = c;
  return best;
}

/* Logits of images [first, first + n) run as one batch, into `out` (n x 10). */
static PiStatus* classify(PiSession* s, const float* pixels, size_t first, size_t n, float* out) {
  int64_t shape[4] = {(int64_t)n, 1, 8, 8};
  PiTensor* x = NULL;
  PiStatus* st = pi_tensor_borrow(PI_DTYPE_FLOAT32, shape, 4, (void*)(pixels + first * 64),
                                  n * 64 * sizeof(float), &x);
  if (st) return st;
  const char* in_names[1] = {"pixels"};
  const PiTensor* ins[1] = {x};
  PiTensor* logits = NULL;
  st = pi_session_run(s, in_names, ins, 1, NULL, 0, &logits, 1);
  if (!st) {
    memcpy(out, pi_tensor_data(logits), n * 10 * sizeof(float));
    pi_tensor_release(logits);
  }
  pi_tensor_release(x);
  return st;
}

struct Worker {
  PiSession* session;
  const float* pixels;
  size_t first, n;
  float* logits;
  int failed;
};

static void* work(void* arg) {
  struct Worker* w = arg;
  /* One image at a time, many runs: the runs of all eight threads interleave. */
  for (size_t i = 0; i < w->n; ++i) {
    PiStatus* st = classify(w->session, w->pixels, w->first + i, 1, w->logits + i * 10);
    if (st) {
      fprintf(stderr, "thread run: %s\n", pi_status_message(st));
      pi_status_release(st);
      w->failed = 1;
    }
  }
  return NULL;
}

static double expected_accuracy(const char* dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/expected.json", dir);
  FILE* f = fopen(path, "rb");
  if (!f) exit(1);
  char text[4096] = {0};
  size_t got = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[got] = '\0';
  const char* key = strstr(text, "\"test_accuracy\"");
  const char* colon = key ? strchr(key, ':') : NULL;
  return colon ? strtod(colon + 1, NULL) : -1;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s DIGITS_DIR\n", argv[0]);
    return 2;
  }
  const char* dir = argv[1];
  char model[4096], xpath[4096], ypath[4096];
  snprintf(model, sizeof model, "%s/digits_cnn.onnx", dir);
  snprintf(xpath, sizeof xpath, "%s/test_x.npy", dir);
  snprintf(ypath, sizeof ypath, "%s/test_y.npy", dir);

  CHECK(pi_api_version() >= PI_API_VERSION, "library API %u < header %d", pi_api_version(),
        PI_API_VERSION);
  CHECK(strlen(pi_version()) > 0, "empty version");
  CHECK(strcmp(pi_dtype_name(PI_DTYPE_FLOAT32), "float32") == 0, "%s",
        pi_dtype_name(PI_DTYPE_FLOAT32));

  size_t xbytes = 0, ybytes = 0;
  float* pixels = read_npy(xpath, "<f4", &xbytes);
  long long* labels = read_npy(ypath, "<i8", &ybytes);
  const size_t n = ybytes / sizeof(long long);
  CHECK(n == 450 && xbytes == n * 64 * sizeof(float), "%zu images, %zu bytes", n, xbytes);

  PiSessionOptions* opts = NULL;
  must(pi_options_create(&opts), "options");
  must(pi_options_set_providers(opts, "cpu"), "providers");
  must(pi_options_set_threads(opts, 1), "threads");
  PiSession* s = NULL;
  must(pi_session_create(model, opts, &s), "session");

  /* What the model declares. */
  CHECK(pi_session_io_count(s, 0) == 1 && pi_session_io_count(s, 1) == 1, "io counts %zu %zu",
        pi_session_io_count(s, 0), pi_session_io_count(s, 1));
  CHECK(strcmp(pi_session_io_name(s, 0, 0), "pixels") == 0, "%s", pi_session_io_name(s, 0, 0));
  CHECK(strcmp(pi_session_io_name(s, 1, 0), "logits") == 0, "%s", pi_session_io_name(s, 1, 0));
  CHECK(pi_session_io_dtype(s, 0, 0) == PI_DTYPE_FLOAT32, "%d", (int)pi_session_io_dtype(s, 0, 0));
  CHECK(pi_session_io_rank(s, 0, 0) == 4, "rank %lld", (long long)pi_session_io_rank(s, 0, 0));
  CHECK(pi_session_io_dim(s, 0, 0, 0) == -1 && strlen(pi_session_io_dim_name(s, 0, 0, 0)) > 0,
        "batch dim %lld '%s'", (long long)pi_session_io_dim(s, 0, 0, 0),
        pi_session_io_dim_name(s, 0, 0, 0));
  CHECK(pi_session_io_dim(s, 0, 0, 3) == 8, "dim 3 %lld", (long long)pi_session_io_dim(s, 0, 0, 3));
  CHECK(pi_session_io_name(s, 0, 1) == NULL && pi_session_io_dim(s, 0, 0, 4) == -1 &&
            pi_session_io_dtype(s, 1, 5) == PI_DTYPE_UNDEFINED,
        "out-of-range metadata");

  /* The whole split as one batch: the training script's accuracy. */
  float* all = malloc(n * 10 * sizeof(float));
  must(classify(s, pixels, 0, n, all), "batch run");
  size_t correct = 0;
  for (size_t i = 0; i < n; ++i) correct += argmax10(all + i * 10) == (size_t)labels[i];
  const double acc = (double)correct / (double)n, want = expected_accuracy(dir);
  CHECK(fabs(acc - want) < 5e-6, "accuracy %.6f, the training script's %.6f", acc, want);

  /* Eight threads run the one session at once, an image per run: the same logits. */
  enum { kThreads = 8 };
  float* threaded = malloc(n * 10 * sizeof(float));
  pthread_t tid[kThreads];
  struct Worker w[kThreads];
  for (int t = 0; t < kThreads; ++t) {
    const size_t first = n * (size_t)t / kThreads, last = n * (size_t)(t + 1) / kThreads;
    w[t] = (struct Worker){s, pixels, first, last - first, threaded + first * 10, 0};
    CHECK(pthread_create(&tid[t], NULL, work, &w[t]) == 0, "pthread_create %d", t);
  }
  for (int t = 0; t < kThreads; ++t) {
    pthread_join(tid[t], NULL);
    CHECK(!w[t].failed, "thread %d failed a run", t);
  }
  float worst = 0;
  for (size_t i = 0; i < n * 10; ++i) worst = fmaxf(worst, fabsf(threaded[i] - all[i]));
  CHECK(worst < 1e-4f, "threaded single-image logits differ from the batch by %g", worst);

  /* An output into the caller's tensor, from an input 4 bytes off a 64-byte boundary. */
  float* shifted = (float*)malloc(65 * sizeof(float) + 64);
  memcpy(shifted + 1, pixels + 17 * 64, 64 * sizeof(float));
  int64_t one[4] = {1, 1, 8, 8}, out_shape[2] = {1, 10};
  float mine[10];
  PiTensor *x = NULL, *y = NULL;
  must(pi_tensor_borrow(PI_DTYPE_FLOAT32, one, 4, shifted + 1, 64 * sizeof(float), &x), "borrow");
  must(pi_tensor_borrow(PI_DTYPE_FLOAT32, out_shape, 2, mine, sizeof mine, &y), "borrow out");
  const char* in_names[1] = {"pixels"};
  const char* out_names[1] = {"logits"};
  const PiTensor* ins[1] = {x};
  PiTensor* outs[1] = {y};
  must(pi_session_run(s, in_names, ins, 1, out_names, 1, outs, 1), "run into a given tensor");
  CHECK(outs[0] == y, "the given output tensor was replaced");
  for (int c = 0; c < 10; ++c)
    CHECK(fabsf(mine[c] - all[17 * 10 + c]) < 1e-4f, "class %d: %g vs %g", c, mine[c],
          all[17 * 10 + c]);

  /* The placement report. */
  char* json = pi_session_placement_json(s);
  CHECK(json && strstr(json, "\"provider\": \"cpu\"") && strstr(json, "\"fallbacks\": []"),
        "placement %s", json ? json : "(null)");
  pi_string_release(json);

  /* ---- error paths ---- */
  PiSession* bad = NULL;
  expect_error(pi_session_create("/nonexistent/model.onnx", opts, &bad), PI_IO,
               "/nonexistent/model.onnx", NULL, "missing file");
  CHECK(bad == NULL, "a failed create set the session");
  expect_error(pi_session_create_from_bytes("not a model", 11, NULL, &bad), PI_INVALID_MODEL, NULL,
               NULL, "bytes that are not a model");
  expect_error(pi_session_create(NULL, opts, &bad), PI_INVALID_ARGUMENT, "path", NULL, "NULL path");
  expect_error(pi_session_create(model, opts, NULL), PI_INVALID_ARGUMENT, "out", NULL, "NULL out");
  expect_error(pi_options_set_precision(opts, "fp8"), PI_INVALID_ARGUMENT, "fp8", "fp16",
               "unknown precision");
  expect_error(pi_options_set_optimization_level(opts, 7), PI_INVALID_ARGUMENT, "7", NULL,
               "level out of range");
  expect_error(pi_options_set_threads(opts, -1), PI_INVALID_ARGUMENT, "-1", NULL, "threads");
  expect_error(pi_options_set_providers(opts, "cpu,,vulkan"), PI_INVALID_ARGUMENT, "empty", NULL,
               "an empty provider entry");

  PiSessionOptions* nowhere = NULL;
  must(pi_options_create(&nowhere), "options");
  must(pi_options_set_providers(nowhere, "warp9"), "providers text");
  expect_error(pi_session_create(model, nowhere, &bad), PI_INVALID_ARGUMENT, "warp9", NULL,
               "an unknown provider");
  pi_options_release(nowhere);

  /* A float64 input where the model takes float32. */
  double doubles[64] = {0};
  PiTensor* xd = NULL;
  must(pi_tensor_borrow(PI_DTYPE_FLOAT64, one, 4, doubles, sizeof doubles, &xd), "borrow f64");
  const PiTensor* ins_d[1] = {xd};
  PiTensor* got = NULL;
  expect_error(pi_session_run(s, in_names, ins_d, 1, NULL, 0, &got, 1), PI_INVALID_ARGUMENT,
               "float32", "float64", "dtype mismatch");
  CHECK(got == NULL, "a failed run set an output");
  pi_tensor_release(xd);

  /* Wrong dims, a missing input, an unknown input, an unknown output. */
  int64_t seven[4] = {1, 1, 7, 8};
  PiTensor* x7 = NULL;
  must(pi_tensor_borrow(PI_DTYPE_FLOAT32, seven, 4, pixels, 56 * sizeof(float), &x7), "borrow 7");
  const PiTensor* ins7[1] = {x7};
  expect_error(pi_session_run(s, in_names, ins7, 1, NULL, 0, &got, 1), PI_SHAPE_MISMATCH, "pixels",
               NULL, "wrong dims");
  pi_tensor_release(x7);
  expect_error(pi_session_run(s, NULL, NULL, 0, NULL, 0, &got, 1), PI_INVALID_ARGUMENT, "pixels",
               NULL, "missing input");
  const char* wrong_in[1] = {"image"};
  expect_error(pi_session_run(s, wrong_in, ins, 1, NULL, 0, &got, 1), PI_INVALID_ARGUMENT, "image",
               "pixels", "unknown input");
  const char* wrong_out[1] = {"probs"};
  expect_error(pi_session_run(s, in_names, ins, 1, wrong_out, 1, &got, 1), PI_INVALID_ARGUMENT,
               "probs", "logits", "unknown output");
  expect_error(pi_session_run(s, in_names, ins, 1, NULL, 0, &got, 0), PI_INVALID_ARGUMENT, "room",
               NULL, "no room for the outputs");
  expect_error(pi_session_run(NULL, in_names, ins, 1, NULL, 0, &got, 1), PI_INVALID_ARGUMENT,
               "session", NULL, "NULL session");
  CHECK(got == NULL, "a failed run set an output");

  /* A given output tensor of the wrong shape is refused and left as it was. */
  PiTensor* small = NULL;
  int64_t five[2] = {1, 5};
  must(pi_tensor_create(PI_DTYPE_FLOAT32, five, 2, &small), "create");
  PiTensor* outs_small[1] = {small};
  expect_error(pi_session_run(s, in_names, ins, 1, NULL, 0, outs_small, 1), PI_SHAPE_MISMATCH,
               "logits", "[1,5]", "a given output of the wrong shape");
  CHECK(outs_small[0] == small, "the refused output tensor was replaced");
  pi_tensor_release(small);

  /* Tensors the C API refuses to make. */
  PiTensor* t = NULL;
  expect_error(pi_tensor_borrow(PI_DTYPE_FLOAT32, one, 4, pixels, 10, &t), PI_INVALID_ARGUMENT,
               "10 bytes", "256", "byte count");
  expect_error(pi_tensor_borrow(PI_DTYPE_FLOAT32, one, 4, (char*)pixels + 1, 256, &t),
               PI_INVALID_ARGUMENT, "aligned", NULL, "misaligned floats");
  expect_error(pi_tensor_create(PI_DTYPE_STRING, one, 4, &t), PI_INVALID_ARGUMENT, "string", NULL,
               "a string tensor");
  expect_error(pi_tensor_create(99, one, 4, &t), PI_INVALID_ARGUMENT, "99", NULL, "a bad dtype");
  int64_t negative[1] = {-3};
  expect_error(pi_tensor_create(PI_DTYPE_FLOAT32, negative, 1, &t), PI_INVALID_ARGUMENT, "-3", NULL,
               "a negative dimension");
  CHECK(t == NULL, "a refused tensor was set");

  /* NULL everywhere else is harmless. */
  CHECK(pi_status_code(NULL) == PI_OK && strcmp(pi_status_message(NULL), "") == 0, "NULL status");
  CHECK(pi_session_io_count(NULL, 0) == 0 && pi_session_placement_json(NULL) == NULL, "NULL");
  pi_status_release(NULL);
  pi_tensor_release(NULL);
  pi_session_release(NULL);
  pi_options_release(NULL);

  pi_tensor_release(x);
  pi_tensor_release(y);
  free(shifted);
  pi_session_release(s);
  pi_options_release(opts);
  free(threaded);
  free(all);
  free(pixels);
  free(labels);
  if (failures) {
    fprintf(stderr, "%d checks failed\n", failures);
    return 1;
  }
  printf("c_api_test: accuracy %.6f over %zu images, 8 threads agree; all error paths hold\n", acc,
         n);
  return 0;
}
