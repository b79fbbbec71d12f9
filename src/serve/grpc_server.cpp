#include "serve/grpc_server.h"

#include <grpcpp/grpcpp.h>
#include <grpcpp/resource_quota.h>

#include <algorithm>

#include "grpc_service.grpc.pb.h"
#include "polyinfer/status.h"
#include "serve/grpc_request.h"

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
      return parse_grpc_infer_request(*req, mv.session().inputs(), mv.session().outputs());
    };
    const auto answer = [&](InferOutcome& o) {
      if (o.status != 200) {
        res->Clear();
        status = status_for(o.status, o.error);
        return;
      }
      fill_infer_response(o.model, o.version, o.request.id, o.names, o.outputs, res);
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
