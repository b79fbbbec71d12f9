// A read-only private mapping of a whole file, populated up front (the import reads every byte):
// the file's bytes stay the page cache's, with no copy of the whole model in anonymous memory.
// (Its own file: <sys/mman.h>'s macros collide with names in libonnx's headers.)
#pragma once

#include <cstddef>

namespace polyinfer::onnx_io {

class MappedFile {
 public:
  // data() is null when the file cannot be mapped; the caller reads it another way.
  MappedFile(int fd, size_t size);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  const void* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace polyinfer::onnx_io
