// A read-only private mapping of a whole file: the file's bytes stay the page cache's, with no
// copy of the whole model in anonymous memory. Pages are read in as they are touched, and
// release() drops a range the import has finished with from the process (not from the page
// cache), so the mapping never adds the model's size to the peak resident set on top of the
// weights copied out of it. (Its own file: <sys/mman.h>'s macros collide with names in libonnx's
// headers.)
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
  // Drops the whole pages inside [p, p + n) from the resident set; reading them again would read
  // the file again.
  void release(const void* p, size_t n) const;

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace polyinfer::onnx_io
