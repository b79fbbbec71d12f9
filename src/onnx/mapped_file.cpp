#include "onnx/mapped_file.h"

#include <sys/mman.h>

namespace polyinfer::onnx_io {

MappedFile::MappedFile(int fd, size_t size) : size_(size) {
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  if (p != MAP_FAILED) data_ = p;
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(data_, size_);
}

}  // namespace polyinfer::onnx_io
