//===- AtomicFile.cpp - Write files whole or not at all -------------------===//

#include "attn/Support/AtomicFile.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <system_error>
#include <fcntl.h>
#include <unistd.h>

using namespace attn;

namespace {
/// A file written to a temporary in its directory, to be renamed in place.
struct StagedFile {
  std::string path, temp;
  bool renamed = false;
};
} // namespace

static std::string cannotWrite(const std::string &path, int err) {
  return "cannot write '" + path + "': " + std::generic_category().message(err);
}

/// Writes \p contents to a new temporary beside \p file.path; "" or why not.
static std::string writeTemporary(StagedFile &file,
                                  const std::string &contents) {
  // The temporary must live in the destination's directory: rename() is only
  // atomic within one file system. O_EXCL and a per-process counter keep
  // concurrent writers (threads or processes) off each other's temporaries;
  // mode 0666 lets the umask decide the final permissions.
  static std::atomic<unsigned> counter{0};
  size_t slash = file.path.find_last_of('/');
  std::string directory = slash == std::string::npos
                              ? std::string()
                              : file.path.substr(0, slash + 1);
  std::string base =
      slash == std::string::npos ? file.path : file.path.substr(slash + 1);
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    file.temp = directory + "." + base + ".tmp." + std::to_string(::getpid()) +
                "." + std::to_string(counter++);
    fd = ::open(file.temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
                0666);
    if (fd < 0 && errno != EEXIST && errno != EINTR)
      break;
  }
  if (fd < 0) {
    int err = errno;
    file.temp.clear();
    return cannotWrite(file.path, err);
  }
  auto fail = [&](int err) {
    if (fd >= 0)
      ::close(fd);
    return cannotWrite(file.path, err);
  };
  const char *data = contents.data();
  size_t left = contents.size();
  while (left > 0) {
    ssize_t written = ::write(fd, data, left);
    if (written < 0 && errno == EINTR)
      continue;
    if (written < 0)
      return fail(errno);
    data += written;
    left -= static_cast<size_t>(written);
  }
  // Flush before the rename, so that a crash cannot leave the path naming a
  // file whose data never reached the disk.
  if (::fsync(fd) != 0)
    return fail(errno);
  int closed = ::close(fd);
  fd = -1;
  if (closed != 0)
    return fail(errno);
  return "";
}

std::string attn::writeFilesAtomically(
    const std::vector<std::pair<std::string, std::string>> &files) {
  std::vector<StagedFile> staged(files.size());
  auto cleanUp = [&](std::string error) {
    for (StagedFile &file : staged) {
      if (file.renamed)
        ::unlink(file.path.c_str());
      else if (!file.temp.empty())
        ::unlink(file.temp.c_str());
    }
    return error;
  };
  for (size_t i = 0; i < files.size(); ++i) {
    staged[i].path = files[i].first;
    std::string error = writeTemporary(staged[i], files[i].second);
    if (!error.empty())
      return cleanUp(error);
  }
  for (StagedFile &file : staged) {
    if (::rename(file.temp.c_str(), file.path.c_str()) != 0)
      return cleanUp(cannotWrite(file.path, errno));
    file.renamed = true;
  }
  return "";
}
