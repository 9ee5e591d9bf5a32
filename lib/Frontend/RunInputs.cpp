//===- RunInputs.cpp - The input arrays of one run of a spec --------------===//

#include "attn/Frontend/RunInputs.h"

#include <cerrno>
#include <cstring>
#include <sys/stat.h>

using namespace attn;
using namespace attn::frontend;

std::string attn::frontend::createDirectories(const std::string &path) {
  for (size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
    std::string prefix = path.substr(0, slash);
    if (!prefix.empty() && mkdir(prefix.c_str(), 0777) != 0 &&
        errno != EEXIST)
      return "cannot create '" + path + "': " + std::strerror(errno);
    if (slash == std::string::npos)
      break;
  }
  struct stat info;
  if (stat(path.c_str(), &info) != 0 || !S_ISDIR(info.st_mode))
    return "cannot create '" + path + "': Not a directory";
  return "";
}

void RunInputs::noteBound(const SizeBindings &sizes,
                          const std::string &origin) {
  for (const auto &entry : sizes)
    boundFrom[entry.first] = origin;
}

std::string RunInputs::bindShape(const InputDecl &input,
                                 const std::string &where,
                                 const std::vector<int64_t> &shape,
                                 SizeBindings &sizes) {
  if (shape.size() != input.shape.size())
    return "input '" + input.name + "' in '" + where + "' has " +
           std::to_string(shape.size()) +
           " dimensions but the spec declares " +
           std::to_string(input.shape.size());
  for (size_t i = 0; i < input.shape.size(); ++i) {
    const ShapeEntry &entry = input.shape[i];
    int64_t actual = shape[i];
    std::string here = "input '" + input.name + "' in '" + where +
                       "' has size " + std::to_string(actual) +
                       " in dimension " + std::to_string(i);
    if (entry.isLiteral()) {
      if (entry.value != actual)
        return here + " but the spec declares " + std::to_string(entry.value);
      continue;
    }
    auto bound = sizes.find(entry.name);
    if (bound != sizes.end()) {
      if (bound->second != actual)
        return here + " but " + entry.name + " = " +
               std::to_string(bound->second) + " (" + boundFrom[entry.name] +
               ")";
      continue;
    }
    const DimDecl *dim = spec.findDim(entry.name);
    if (dim->value && *dim->value != actual)
      return here + " but the spec declares " + entry.name + " = " +
             std::to_string(*dim->value);
    sizes[entry.name] = actual;
    boundFrom[entry.name] = "from '" + where + "'";
  }
  return "";
}

std::string RunInputs::load(const std::string &dir, SizeBindings &sizes) {
  for (const InputDecl &input : spec.inputs) {
    std::string path = dir + "/" + input.name + ".npy";
    struct stat info;
    if (stat(path.c_str(), &info) != 0)
      continue;
    npy::Array array;
    std::string error = npy::read(path, array);
    if (!error.empty())
      return error;
    error = bindShape(input, path, array.shape, sizes);
    if (!error.empty())
      return error;
    arrays[input.name] = std::move(array);
  }
  return "";
}

std::string RunInputs::generate(const SizeBindings &sizes, uint64_t seed) {
  std::string error;
  if (!generateInputs(spec, sizes, seed, arrays, error))
    return error;
  roundInputs(spec, arrays);
  return "";
}

std::string RunInputs::save(const std::string &dir) const {
  std::string error = createDirectories(dir);
  if (!error.empty())
    return error;
  for (const InputDecl &input : spec.inputs) {
    error = npy::write(dir + "/" + input.name + ".npy", arrays.at(input.name));
    if (!error.empty())
      return error;
  }
  return "";
}
