#include "onnx/mapped_file.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

namespace polyinfer::onnx_io {

MappedFile::MappedFile(int fd, size_t size) : size_(size) {
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED) return;
  data_ = p;
  ::madvise(p, size, MADV_SEQUENTIAL);  // advice only: read ahead, the bytes are read in order
}

void MappedFile::release(const void* p, size_t n) const {
  const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + page - 1) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + n) / page * page;
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(data_, size_);
}

}  // namespace polyinfer::onnx_io
