#include "serve/grpc_server.h"

#include <grpcpp/grpcpp.h>
#include <grpcpp/resource_quota.h>

#include <algorithm>

#include "grpc_service.grpc.pb.h"
#include "polyinfer/status.h"

namespace polyinfer::serve {
namespace {

grpc::Status status_for(int http_status, const std::string& message) {
  switch (http_status) {
    case 200: return grpc::Status::OK;
    case 400: return {grpc::StatusCode::INVALID_ARGUMENT, message};
    case 404: return {grpc::StatusCode::NOT_FOUND, message};
    case 413: return {grpc::StatusCode::RESOURCE_EXHAUSTED, message};
    case 503: return {grpc::StatusCode::UNAVAILABLE, message};
    default: return {grpc::StatusCode::INTERNAL, message};
  }
}

grpc::Status status_of_error(const Error& e) { return status_for(status_of(e.code()), e.what()); }

template <class Elem, class Field>
void fill_from(Tensor& t, const Field& items, const std::string& input, const char* field) {
  PI_CHECK(static_cast<int64_t>(items.size()) == t.numel(), ShapeMismatch, "input '", input,
           "': ", items.size(), " elements in contents.", field, " for shape ",
           shape_str(t.shape()), " (", t.numel(), ")");
  Elem* out = t.data<Elem>();
  for (int i = 0; i < items.size(); ++i) out[i] = static_cast<Elem>(items[i]);
}

// Input `in`'s elements from its typed contents: the field its datatype names (INT8/16/32 in
// int_contents, UINT8/16/32 in uint_contents, ...), as many as its shape holds.
void fill_contents(Tensor& t, const inference::InferTensorContents& c, const std::string& input) {
  switch (t.dtype()) {
    case DType::Bool: return fill_from<bool>(t, c.bool_contents(), input, "bool_contents");
    case DType::Int8: return fill_from<int8_t>(t, c.int_contents(), input, "int_contents");
    case DType::Int16: return fill_from<int16_t>(t, c.int_contents(), input, "int_contents");
    case DType::Int32: return fill_from<int32_t>(t, c.int_contents(), input, "int_contents");
    case DType::Int64: return fill_from<int64_t>(t, c.int64_contents(), input, "int64_contents");
    case DType::UInt8: return fill_from<uint8_t>(t, c.uint_contents(), input, "uint_contents");
    case DType::UInt16: return fill_from<uint16_t>(t, c.uint_contents(), input, "uint_contents");
    case DType::UInt32: return fill_from<uint32_t>(t, c.uint_contents(), input, "uint_contents");
    case DType::UInt64:
      return fill_from<uint64_t>(t, c.uint64_contents(), input, "uint64_contents");
    case DType::Float32: return fill_from<float>(t, c.fp32_contents(), input, "fp32_contents");
    case DType::Float64: return fill_from<double>(t, c.fp64_contents(), input, "fp64_contents");
    case DType::String: {
      PI_CHECK(static_cast<int64_t>(c.bytes_contents_size()) == t.numel(), ShapeMismatch, "input '",
               input, "': ", c.bytes_contents_size(),
               " elements in contents.bytes_contents for shape ", shape_str(t.shape()), " (",
               t.numel(), ")");
      auto* out = t.data<std::string>();
      for (int i = 0; i < c.bytes_contents_size(); ++i) out[i] = c.bytes_contents(i);
      return;
    }
    default:
      fail(ErrorCode::InvalidArgument, "input '", input, "' is ", dtype_name(t.dtype()),
           ", which travels in raw_input_contents only");
  }
}

// A ModelInferRequest checked against the model's inputs and outputs, as parse_infer_request
// checks a JSON one.
InferRequest parse(const inference::ModelInferRequest& req, const std::vector<ValueSpec>& inputs,
                   const std::vector<ValueSpec>& outputs) {
  InferRequest r;
  r.id = req.id();
  const bool raw = req.raw_input_contents_size() > 0;
  PI_CHECK(!raw || req.raw_input_contents_size() == req.inputs_size(), InvalidArgument,
           "the request has ", req.raw_input_contents_size(), " raw_input_contents for ",
           req.inputs_size(), " inputs; give one per input, or none and contents in each");
  for (int i = 0; i < req.inputs_size(); ++i) {
    const auto& in = req.inputs(i);
    const ValueSpec& spec = new_input(r, inputs, in.name());
    Shape shape(in.shape().begin(), in.shape().end());
    Tensor t = checked_tensor(spec, in.datatype(), shape);
    if (raw) {
      PI_CHECK(!in.has_contents(), InvalidArgument, "input '", in.name(),
               "' has contents and raw_input_contents; give one");
      const std::string& bytes = req.raw_input_contents(i);
      fill_raw(t, bytes.data(), bytes.size(), in.name());
    } else {
      fill_contents(t, in.contents(), in.name());
    }
    r.input_bytes += t.nbytes();
    r.inputs.emplace(in.name(), Value(std::move(t)));
  }
  check_complete(r, inputs);
  for (const auto& o : req.outputs()) add_output(r, outputs, o.name(), false);
  if (auto it = req.parameters().find("timeout"); it != req.parameters().end()) {
    const auto& p = it->second;
    const bool ok = (p.has_int64_param() && p.int64_param() >= 0) || p.has_uint64_param();
    PI_CHECK(ok, InvalidArgument, "parameters.timeout must be microseconds, a whole number >= 0");
    r.timeout_us = p.has_int64_param() ? p.int64_param() : static_cast<int64_t>(p.uint64_param());
  }
  return r;
}

void set_metadata(
    google::protobuf::RepeatedPtrField<inference::ModelMetadataResponse::TensorMetadata>* out,
    const std::vector<ValueSpec>& specs) {
  for (const auto& spec : specs) {
    auto* m = out->Add();
    m->set_name(spec.name);
    const auto dt = datatype_name(spec.dtype);
    m->set_datatype(spec.kind == "tensor" && dt ? *dt : spec.type);
    if (!spec.has_shape) m->add_shape(-1);
    for (int64_t d : spec.shape) m->add_shape(d < 0 ? -1 : d);
  }
}

}  // namespace

class GrpcServer::Service final : public inference::GRPCInferenceService::Service {
 public:
  Service(ModelRepository& repo, Dispatcher& dispatch) : repo_(repo), dispatch_(dispatch) {}

  grpc::Status ServerLive(grpc::ServerContext*, const inference::ServerLiveRequest*,
                          inference::ServerLiveResponse* res) override {
    res->set_live(true);
    return grpc::Status::OK;
  }
  grpc::Status ServerReady(grpc::ServerContext*, const inference::ServerReadyRequest*,
                           inference::ServerReadyResponse* res) override {
    res->set_ready(!dispatch_.draining());
    return grpc::Status::OK;
  }
  grpc::Status ModelReady(grpc::ServerContext*, const inference::ModelReadyRequest* req,
                          inference::ModelReadyResponse* res) override {
    std::string why;
    res->set_ready(!dispatch_.draining() && repo_.get(req->name(), req->version(), &why));
    return grpc::Status::OK;
  }
  grpc::Status ServerMetadata(grpc::ServerContext*, const inference::ServerMetadataRequest*,
                              inference::ServerMetadataResponse* res) override {
    res->set_name("polyinfer");
    res->set_version(version());
    res->add_extensions("model_repository");
    return grpc::Status::OK;
  }
  grpc::Status ModelMetadata(grpc::ServerContext*, const inference::ModelMetadataRequest* req,
                             inference::ModelMetadataResponse* res) override {
    std::string why;
    auto mv = repo_.get(req->name(), req->version(), &why);
    if (!mv) return {grpc::StatusCode::NOT_FOUND, why};
    res->set_name(req->name());
    for (int64_t v : repo_.ready_versions(req->name())) res->add_versions(std::to_string(v));
    res->set_platform("polyinfer_onnx");
    set_metadata(res->mutable_inputs(), mv->session().inputs());
    set_metadata(res->mutable_outputs(), mv->session().outputs());
    return grpc::Status::OK;
  }
  grpc::Status ModelInfer(grpc::ServerContext*, const inference::ModelInferRequest* req,
                          inference::ModelInferResponse* res) override {
    grpc::Status status;
    const auto parse_it = [&](const ModelVersion& mv) {
      return parse(*req, mv.session().inputs(), mv.session().outputs());
    };
    const auto answer = [&](InferOutcome& o) {
      if (o.status != 200) {
        res->Clear();
        status = status_for(o.status, o.error);
        return;
      }
      res->set_model_name(o.model);
      res->set_model_version(o.version);
      res->set_id(o.request.id);
      for (size_t i = 0; i < o.names.size() && i < o.outputs.size(); ++i) {
        PI_CHECK(o.outputs[i].is_tensor(), InvalidArgument, "output '", o.names[i], "' is ",
                 o.outputs[i].describe(), ": the protocol carries tensors only");
        const Tensor t = o.outputs[i].tensor().to(Device::cpu());
        const auto dt = datatype_name(t.dtype());
        PI_CHECK(dt, InvalidArgument, "output '", o.names[i], "' is ", t.describe(),
                 ", which the protocol cannot carry");
        auto* out = res->add_outputs();
        out->set_name(o.names[i]);
        out->set_datatype(*dt);
        for (int64_t d : t.shape()) out->add_shape(d);
        append_raw(t, res->add_raw_output_contents());
      }
    };
    dispatch_.infer(req->model_name(), req->model_version(), "grpc", parse_it, answer);
    return status;
  }
  grpc::Status RepositoryIndex(grpc::ServerContext*, const inference::RepositoryIndexRequest* req,
                               inference::RepositoryIndexResponse* res) override {
    for (const auto& e : repo_.index()) {
      if (req->ready() && e.state != "READY") continue;
      auto* m = res->add_models();
      m->set_name(e.name);
      m->set_version(e.version);
      m->set_state(e.state);
      m->set_reason(e.reason);
    }
    return grpc::Status::OK;
  }
  grpc::Status RepositoryModelLoad(grpc::ServerContext*,
                                   const inference::RepositoryModelLoadRequest* req,
                                   inference::RepositoryModelLoadResponse*) override {
    return repository_call([&] { repo_.load(req->model_name()); });
  }
  grpc::Status RepositoryModelUnload(grpc::ServerContext*,
                                     const inference::RepositoryModelUnloadRequest* req,
                                     inference::RepositoryModelUnloadResponse*) override {
    return repository_call([&] { repo_.unload(req->model_name()); });
  }

 private:
  // A load or unload, its error (a refused version, an unknown model) as the call's status.
  template <class F> static grpc::Status repository_call(F&& call) {
    try {
      call();
    } catch (const Error& e) {
      return status_of_error(e);
    }
    return grpc::Status::OK;
  }

  ModelRepository& repo_;
  Dispatcher& dispatch_;
};

GrpcServer::GrpcServer(ModelRepository& repo, Dispatcher& dispatch, GrpcOptions options)
    : repo_(repo), dispatch_(dispatch), options_(std::move(options)) {}

GrpcServer::~GrpcServer() { stop(); }

void GrpcServer::start() {
  service_ = std::make_unique<Service>(repo_, dispatch_);
  grpc::ServerBuilder builder;
  const std::string address = options_.host + ":" + std::to_string(options_.port);
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &port_);
  builder.RegisterService(service_.get());
  builder.SetMaxReceiveMessageSize(
      static_cast<int>(std::min<size_t>(options_.max_message_bytes, INT32_MAX)));
  builder.SetMaxSendMessageSize(-1);
  const int threads = options_.threads > 0 ? options_.threads : 64;
  grpc::ResourceQuota quota("polyinfer-serve");
  quota.SetMaxThreads(threads);
  builder.SetResourceQuota(quota);
  server_ = builder.BuildAndStart();
  PI_CHECK(server_ && port_ > 0, Io, "cannot listen for gRPC on ", address,
           " (in use, or not this machine's address?); give another --grpc-port");
}

void GrpcServer::stop() {
  if (!server_) return;
  server_->Shutdown();  // waits for the calls in flight
  server_->Wait();
  server_.reset();
}

}  // namespace polyinfer::serve
