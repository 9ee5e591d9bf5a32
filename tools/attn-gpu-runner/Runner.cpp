//===- Runner.cpp - Run NVPTX-compiled specs and check them ---------------===//
//
//   attn-gpu-runner list
//   attn-gpu-runner device
//   attn-gpu-runner inputs SPEC.attn --set N=7 --save-inputs DIR [--seed S]
//   attn-gpu-runner check SPEC.attn [--set N=1,7,100] [--sweep 1,7,100]
//                         [--seed S] [--inputs DIR]
//   attn-gpu-runner bench SPEC.attn --set N=4096 [--repeat R]
//                         [--max-seconds T] [--check] [--seed S]
//                         [--inputs DIR] [--save-inputs DIR]
//                         [--save-output FILE.npy]
//
// Runs specs that `attnc --target=nvptx --emit=obj` compiled and that are
// linked into this executable (see Registry.h) on the GPU through the attn
// GPU runtime, on the inputs `attnc run` would generate for the same seed
// (attn/Frontend/RunSetup.h), and compares the output with the reference
// evaluator under attnc's tolerance, or times it (`inputs` only writes the
// inputs, as .npy files, for another program). Every run prints one JSON
// object on one line to stdout; messages go to stderr. Exit status 0 when
// every run passed, 1 otherwise.
//
// Plain C++ and the runtime's C interface only: bench/gpu builds this file
// on the GPU machine, which has no LLVM.
//
//===----------------------------------------------------------------------===//

#include "Registry.h"

#include "GpuRuntime.h"
#include "attn/Frontend/DeviceArrays.h"
#include "attn/Frontend/Parser.h"
#include "attn/Frontend/RunInputs.h"
#include "attn/Reference/Reference.h"
#include "attn/Support/Npy.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

using namespace attn;
using namespace attn::frontend;

namespace {

const char *const kUsage =
    "usage: attn-gpu-runner list\n"
    "       attn-gpu-runner device\n"
    "       attn-gpu-runner inputs SPEC.attn --set NAME=V... --save-inputs DIR "
    "[--seed S]\n"
    "       attn-gpu-runner check SPEC.attn [--set NAME=V[,V...]]... "
    "[--sweep V[,V...]]\n"
    "                             [--seed S] [--inputs DIR]\n"
    "       attn-gpu-runner bench SPEC.attn --set NAME=V... [--repeat R] "
    "[--max-seconds T]\n"
    "                             [--check] [--seed S] [--inputs DIR] "
    "[--save-inputs DIR]\n"
    "                             [--save-output FILE.npy]\n"
    "       (check, bench: --gpu-precision tf32 for a spec compiled with "
    "attnc's\n"
    "        --gpu-precision=tf32: its tolerance)\n"
    "\n"
    "list    the specs compiled into this runner\n"
    "device  initialise the GPU and print its name\n"
    "inputs  write the inputs a run would use (attnc run's for the same seed) "
    "as\n"
    "        DIR/NAME.npy; needs no GPU\n"
    "check   run SPEC once per size combination and compare with the "
    "reference\n"
    "        evaluator (attnc run --check's tolerance); --set lists values "
    "per dim,\n"
    "        --sweep gives the values of every dynamic dim not --set\n"
    "bench   time SPEC: one untimed call, then the median of up to R calls "
    "(default\n"
    "        10), stopping after T seconds (default 10); --check also "
    "compares with\n"
    "        the reference evaluator\n";

int error(const std::string &message) {
  std::cerr << "attn-gpu-runner: error: " << message << "\n";
  return 1;
}

//===----------------------------------------------------------------------===//
// Command line
//===----------------------------------------------------------------------===//

struct Options {
  std::string command;
  std::string specPath;
  /// --set NAME=V,V..., in the order given.
  std::vector<std::pair<std::string, std::vector<int64_t>>> sets;
  std::vector<int64_t> sweep;
  uint64_t seed = 0;
  int64_t repeat = 10;
  double maxSeconds = 10.0;
  bool check = false;
  /// The spec was compiled with attnc --gpu-precision=tf32 (its tolerance).
  bool tf32 = false;
  std::string inputsDir;
  std::string saveInputsDir;
  std::string saveOutput;
};

bool parseInteger(const std::string &text, long long &value) {
  if (text.empty() ||
      !(std::isdigit(static_cast<unsigned char>(text[0])) || text[0] == '-'))
    return false;
  errno = 0;
  char *end = nullptr;
  value = std::strtoll(text.c_str(), &end, 10);
  return errno == 0 && end && *end == '\0';
}

/// "1,7,100" into positive values.
bool parseValueList(const std::string &flag, const std::string &text,
                    std::vector<int64_t> &values) {
  std::string message = flag +
                        " expects positive integers separated by "
                        "commas, got '" +
                        text + "'";
  std::stringstream stream(text);
  std::string item;
  values.clear();
  while (std::getline(stream, item, ',')) {
    long long value = 0;
    if (!parseInteger(item, value) || value <= 0)
      return error(message), false;
    values.push_back(value);
  }
  if (values.empty() || text.back() == ',')
    return error(message), false;
  return true;
}

bool parseOptions(int argc, char **argv, Options &options) {
  if (argc < 2)
    return error("no command given\n" + std::string(kUsage)), false;
  options.command = argv[1];
  if (options.command == "-h" || options.command == "--help" ||
      options.command == "help") {
    std::cout << kUsage;
    std::exit(0);
  }
  if (options.command != "list" && options.command != "device" &&
      options.command != "inputs" && options.command != "check" &&
      options.command != "bench")
    return error("unknown command '" + options.command +
                 "'; expected list, device, inputs, check or bench"),
           false;
  bool takesSpec = options.command == "inputs" || options.command == "check" ||
                   options.command == "bench";
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    std::string flag = arg, value;
    bool hasValue = false;
    if (arg.rfind("--", 0) == 0) {
      size_t equals = arg.find('=');
      if (equals != std::string::npos) {
        flag = arg.substr(0, equals);
        value = arg.substr(equals + 1);
        hasValue = true;
      }
    }
    auto takeValue = [&]() {
      if (hasValue)
        return true;
      if (i + 1 >= argc)
        return error(flag + " expects a value"), false;
      value = argv[++i];
      return true;
    };
    auto onlyFor = [&](bool allowed) {
      if (!allowed)
        error(flag + " is not an option of '" + options.command + "'");
      return allowed;
    };
    if (flag == "--set") {
      if (!onlyFor(takesSpec) || !takeValue())
        return false;
      size_t equals = value.find('=');
      std::string name = value.substr(0, equals);
      if (equals == std::string::npos || name.empty())
        return error("--set expects NAME=VALUE, got '" + value + "'"), false;
      std::vector<int64_t> values;
      if (!parseValueList("--set " + name, value.substr(equals + 1), values))
        return false;
      for (const auto &set : options.sets)
        if (set.first == name)
          return error("--set " + name + " is given twice"), false;
      options.sets.emplace_back(name, values);
    } else if (flag == "--sweep") {
      if (!onlyFor(takesSpec) || !takeValue() ||
          !parseValueList("--sweep", value, options.sweep))
        return false;
    } else if (flag == "--seed") {
      long long number = 0;
      if (!onlyFor(takesSpec) || !takeValue())
        return false;
      if (!parseInteger(value, number) || number < 0)
        return error("--seed expects a non-negative integer, got '" + value +
                     "'"),
               false;
      options.seed = static_cast<uint64_t>(number);
    } else if (flag == "--repeat") {
      long long number = 0;
      if (!onlyFor(options.command == "bench") || !takeValue())
        return false;
      if (!parseInteger(value, number) || number < 1)
        return error("--repeat expects a positive integer, got '" + value +
                     "'"),
               false;
      options.repeat = number;
    } else if (flag == "--max-seconds") {
      if (!onlyFor(options.command == "bench") || !takeValue())
        return false;
      char *end = nullptr;
      options.maxSeconds = std::strtod(value.c_str(), &end);
      if (value.empty() || *end != '\0' || !(options.maxSeconds > 0))
        return error("--max-seconds expects a positive number, got '" + value +
                     "'"),
               false;
    } else if (flag == "--check") {
      if (!onlyFor(options.command == "bench"))
        return false;
      if (hasValue)
        return error("--check takes no value"), false;
      options.check = true;
    } else if (flag == "--gpu-precision") {
      if (!onlyFor(options.command == "check" || options.command == "bench") ||
          !takeValue())
        return false;
      if (value != "f32" && value != "tf32")
        return error("--gpu-precision expects f32 or tf32, got '" + value +
                     "'"),
               false;
      options.tf32 = value == "tf32";
    } else if (flag == "--inputs") {
      if (!onlyFor(takesSpec) || !takeValue())
        return false;
      options.inputsDir = value;
    } else if (flag == "--save-inputs") {
      if (!onlyFor(options.command == "bench" || options.command == "inputs") ||
          !takeValue())
        return false;
      options.saveInputsDir = value;
    } else if (flag == "--save-output") {
      if (!onlyFor(options.command == "bench") || !takeValue())
        return false;
      options.saveOutput = value;
    } else if (arg.rfind("-", 0) == 0 && arg.size() > 1) {
      return error("unknown option '" + arg + "'\n" + kUsage), false;
    } else if (takesSpec && options.specPath.empty()) {
      options.specPath = arg;
    } else {
      return error("unexpected argument '" + arg + "'"), false;
    }
  }
  if (takesSpec && options.specPath.empty())
    return error("'" + options.command + "' expects a spec file (SPEC.attn)"),
           false;
  if (options.command == "inputs" && options.saveInputsDir.empty())
    return error("'inputs' expects --save-inputs DIR"), false;
  if (options.command == "check")
    options.check = true;
  return true;
}

//===----------------------------------------------------------------------===//
// JSON output
//===----------------------------------------------------------------------===//

/// One JSON object on one line, keys in the order added.
class JsonLine {
public:
  JsonLine &add(const std::string &key, const std::string &value) {
    return raw(key, quote(value));
  }
  JsonLine &add(const std::string &key, const char *value) {
    return raw(key, quote(value));
  }
  JsonLine &add(const std::string &key, bool value) {
    return raw(key, value ? "true" : "false");
  }
  JsonLine &add(const std::string &key, int64_t value) {
    return raw(key, std::to_string(value));
  }
  JsonLine &add(const std::string &key, double value) {
    if (!std::isfinite(value))
      return raw(key, "null");
    char buffer[32];
    std::snprintf(buffer, sizeof(buffer), "%.6g", value);
    return raw(key, buffer);
  }
  JsonLine &raw(const std::string &key, const std::string &json) {
    text += (text.empty() ? "{" : ", ") + quote(key) + ": " + json;
    return *this;
  }
  std::string str() const { return text.empty() ? "{}" : text + "}"; }

  static std::string quote(const std::string &value) {
    std::string result = "\"";
    for (char c : value) {
      if (c == '"' || c == '\\') {
        result += '\\';
        result += c;
      } else if (static_cast<unsigned char>(c) < 0x20) {
        char buffer[8];
        std::snprintf(buffer, sizeof(buffer), "\\u%04x", c);
        result += buffer;
      } else {
        result += c;
      }
    }
    return result + "\"";
  }

private:
  std::string text;
};

//===----------------------------------------------------------------------===//
// The GPU
//===----------------------------------------------------------------------===//

/// Initialises the runtime once. The compiled objects load their PTX
/// modules from global constructors, before main, so an error recorded by
/// then is a module that did not load.
bool ensureDevice() {
  static int state = 0; // 0 untried, 1 ready, -1 failed
  if (state)
    return state > 0;
  state = -1;
  if (attn_gpu_init() != 0)
    return error(std::string("no usable GPU: ") + attn_gpu_error()), false;
  if (*attn_gpu_error())
    return error(std::string("the compiled GPU code did not load: ") +
                 attn_gpu_error()),
           false;
  state = 1;
  return true;
}

const char *returnCodeName(int code) {
  switch (code) {
  case 1:
    return "ATTN_BAD_SIZE (1)";
  case 2:
    return "ATTN_NULL_POINTER (2)";
  default:
    return "an unknown code";
  }
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

//===----------------------------------------------------------------------===//
// One spec
//===----------------------------------------------------------------------===//

bool readFile(const std::string &path, std::string &text) {
  std::ifstream stream(path, std::ios::binary);
  if (!stream)
    return false;
  std::ostringstream buffer;
  buffer << stream.rdbuf();
  text = buffer.str();
  return true;
}

/// A parsed spec with its compiled entry point.
struct SpecRun {
  const Options &options;
  SourceFile source;
  Spec spec;
  const AttnEntry *entry = nullptr;
  double tolerance = 0;

  int specError(const Diagnostic &diag) const {
    std::cerr << source.render(diag.loc, diag.message);
    return 1;
  }

  /// The dims the compiled code takes as arguments, in declaration order.
  std::vector<const DimDecl *> dynamicDims() const {
    std::vector<const DimDecl *> dims;
    for (const DimDecl &dim : spec.dims)
      if (!dim.value)
        dims.push_back(&dim);
    return dims;
  }

  bool findEntry() {
    for (size_t i = 0; i < attnNumEntries; ++i)
      if (spec.name == attnEntries[i].specName)
        entry = &attnEntries[i];
    if (!entry) {
      if (attnNumEntries == 0)
        return error("spec '" + spec.name + "' (" + options.specPath +
                     ") is not compiled into this runner, which has no "
                     "compiled specs: it was built without NVPTX objects "
                     "(bench/gpu/prepare.sh makes them)"),
               false;
      std::string names;
      for (size_t i = 0; i < attnNumEntries; ++i)
        names += std::string(i ? ", " : "") + attnEntries[i].specName;
      return error("spec '" + spec.name + "' (" + options.specPath +
                   ") is not compiled into this runner; it has " + names +
                   " (rerun bench/gpu/prepare.sh to add it)"),
             false;
    }
    int64_t arrays = static_cast<int64_t>(spec.inputs.size()) + 1;
    int64_t sizes = static_cast<int64_t>(dynamicDims().size());
    if (entry->numArrays != arrays || entry->numSizes != sizes)
      return error("the compiled '" + spec.name + "' takes " +
                   std::to_string(entry->numArrays) + " arrays and " +
                   std::to_string(entry->numSizes) + " sizes, but " +
                   options.specPath + " has " + std::to_string(arrays) +
                   " arrays and " + std::to_string(sizes) +
                   " dynamic sizes: the artifacts are stale; rerun "
                   "bench/gpu/prepare.sh"),
             false;
    return true;
  }

  /// Every combination of the values given for the dims, first dim slowest.
  bool sizeCombinations(std::vector<SizeBindings> &combinations) const {
    // bindSizes words the message for a --set of a dim the spec lacks.
    SizeBindings first, unused;
    for (const auto &set : options.sets)
      first[set.first] = set.second.front();
    Diagnostic diag;
    if (!bindSizes(spec, first, /*allowUnbound=*/true, unused, diag))
      return specError(diag), false;
    combinations = {SizeBindings()};
    for (const DimDecl &dim : spec.dims) {
      std::vector<int64_t> values;
      for (const auto &set : options.sets)
        if (set.first == dim.name)
          values = set.second;
      if (dim.value) {
        // The object was compiled with the declared value.
        for (int64_t value : values)
          if (value != *dim.value)
            return error("--set " + dim.name + "=" + std::to_string(value) +
                         ": " + options.specPath + " declares " + dim.name +
                         " = " + std::to_string(*dim.value) +
                         ", which the compiled code is fixed to"),
                   false;
        continue;
      }
      if (values.empty())
        values = options.sweep;
      if (values.empty()) // bindSizes reports the unbound dim.
        continue;
      std::vector<SizeBindings> expanded;
      for (const SizeBindings &partial : combinations)
        for (int64_t value : values) {
          expanded.push_back(partial);
          expanded.back()[dim.name] = value;
        }
      combinations = std::move(expanded);
    }
    for (SizeBindings &sizes : combinations) {
      SizeBindings bound;
      if (!bindSizes(spec, sizes, /*allowUnbound=*/false, bound, diag) ||
          !checkShapes(spec, bound, diag))
        return specError(diag), false;
      sizes = bound;
    }
    if (combinations.size() > 1 &&
        (!options.saveInputsDir.empty() || !options.saveOutput.empty()))
      return error("--save-inputs and --save-output need one size per dim, "
                   "but the sizes given make " +
                   std::to_string(combinations.size()) + " runs"),
             false;
    return true;
  }

  /// The inputs of a run at \p sizes: read from --inputs (each must have
  /// the shape the sizes give), else generated; written to --save-inputs if
  /// given.
  bool prepareInputs(const SizeBindings &sizes, RunInputs &inputs,
                     std::string &message) const {
    if (!options.inputsDir.empty()) {
      SizeBindings bound = sizes;
      inputs.noteBound(sizes, "the size of this run");
      message = inputs.load(options.inputsDir, bound);
      if (!message.empty()) {
        error(message);
        message = "cannot read the inputs from '" + options.inputsDir + "'";
        return false;
      }
    }
    message = inputs.generate(sizes, options.seed);
    if (message.empty() && !options.saveInputsDir.empty())
      message = inputs.save(options.saveInputsDir);
    return message.empty();
  }

  /// One run at \p sizes; prints its JSON line. Returns false when it failed
  /// (an error or a check beyond the tolerance); sets \p fatal when the GPU
  /// itself failed, after which nothing else can run.
  bool run(const SizeBindings &sizes, bool &fatal) const {
    JsonLine json;
    json.add("mode", options.command)
        .add("spec", spec.name)
        .add("file", options.specPath);
    JsonLine sizeJson;
    for (const DimDecl &dim : spec.dims)
      sizeJson.add(dim.name, static_cast<int64_t>(sizes.at(dim.name)));
    json.raw("sizes", sizeJson.str());
    auto fail = [&](const std::string &message) {
      error(spec.name + ": " + message);
      json.add("pass", false).add("error", message);
      std::cout << json.str() << std::endl;
      return false;
    };

    RunInputs inputs(spec);
    std::string message;
    if (!prepareInputs(sizes, inputs, message))
      return fail(message);
    const InputArrays &arrays = inputs.all();
    reference::Problem problem = buildProblem(spec, arrays);
    message = reference::validate(problem);
    if (!message.empty())
      return fail("the sizes do not fit the spec: " + message);
    npy::Array out;
    out.shape = outputShape(problem);
    size_t outCount = 1;
    for (int64_t size : out.shape)
      outCount *= static_cast<size_t>(size);
    // NaN until the code writes it: an element it skips fails the check
    // (not finite) instead of passing with what the memory held before.
    out.data.assign(outCount, std::numeric_limits<float>::quiet_NaN());
    json.raw("shape", formatShape(out.shape));

    // Device copies of the inputs, in declaration order, then the output.
    // f16 / bf16 arrays travel as their 16-bit patterns.
    ElementType outputType = spec.outputType.value_or(ElementType::F32);
    std::vector<std::vector<uint16_t>> packed(spec.inputs.size() + 1);
    std::vector<uint16_t> &outBits = packed.back();
    DeviceArrays device;
    for (size_t i = 0; i <= spec.inputs.size(); ++i) {
      bool isInput = i < spec.inputs.size();
      const npy::Array &array = isInput ? arrays.at(spec.inputs[i].name) : out;
      ElementType type = isInput ? spec.inputs[i].elementType : outputType;
      const void *host = packedArray(type, array.data, packed[i]);
      if (!device.add(host, array.data.size() * byteSize(type))) {
        fatal = true;
        return fail(std::string("cannot set up the device arrays: ") +
                    attn_gpu_error());
      }
    }
    const std::vector<void *> &pointers = device.all();
    std::vector<int64_t> dynamic;
    for (const DimDecl *dim : dynamicDims())
      dynamic.push_back(sizes.at(dim->name));

    auto call = [&]() -> std::string {
      int code = entry->call(const_cast<void **>(pointers.data()),
                             dynamic.data());
      if (code != 0)
        return "attn_" + spec.name + " returned " + returnCodeName(code);
      if (attn_gpu_synchronize() != 0 || *attn_gpu_error()) {
        fatal = true;
        return std::string("the GPU failed: ") + attn_gpu_error();
      }
      return "";
    };

    auto start = std::chrono::steady_clock::now();
    message = call();
    double firstSeconds = secondsSince(start);
    if (!message.empty())
      return fail(message);
    if (attn_gpu_copy_to_host(
            outBits.empty() ? static_cast<void *>(out.data.data())
                            : outBits.data(),
            pointers.back(), out.data.size() * byteSize(outputType))) {
      fatal = true;
      return fail(std::string("cannot copy the output back: ") +
                  attn_gpu_error());
    }
    if (!outBits.empty())
      unpackElements(outputType, outBits.data(), out.data.size(),
                     out.data.data());

    if (options.command == "bench") {
      std::vector<double> seconds;
      double total = 0;
      for (int64_t i = 0; i < options.repeat; ++i) {
        // Slow code still gives a number: the first run always counts.
        if (i > 0 && total >= options.maxSeconds)
          break;
        start = std::chrono::steady_clock::now();
        message = call();
        seconds.push_back(secondsSince(start));
        total += seconds.back();
        if (!message.empty())
          return fail(message);
      }
      std::sort(seconds.begin(), seconds.end());
      json.add("ms", seconds[seconds.size() / 2] * 1e3)
          .add("min_ms", seconds.front() * 1e3)
          .add("first_ms", firstSeconds * 1e3)
          .add("runs", static_cast<int64_t>(seconds.size()));
    } else {
      json.add("ms", firstSeconds * 1e3);
    }

    bool passed = true;
    if (options.check) {
      std::vector<float> expected(out.data.size());
      message = reference::evaluate(problem, expected.data());
      if (!message.empty())
        return fail("the reference evaluator rejects the problem: " + message);
      Comparison comparison =
          compareWithReference(out.data, expected, tolerance);
      passed = comparison.ok;
      json.add("max_abs_err", comparison.maxAbsError)
          .add("max_rel_err", comparison.maxRelError)
          .add("tolerance", tolerance)
          .add("finite", comparison.finite)
          .add("pass", comparison.ok);
      if (!passed)
        error(spec.name + " at " + sizeJson.str() +
              ": differs from the reference evaluator beyond the tolerance");
    }
    if (!options.saveOutput.empty()) {
      message = npy::write(options.saveOutput, out);
      if (!message.empty())
        return fail(message);
    }
    std::cout << json.str() << std::endl;
    return passed;
  }
};

int listEntries() {
  if (attnNumEntries == 0) {
    std::cout << "attn-gpu-runner: no compiled specs: this runner was built "
                 "without NVPTX objects (bench/gpu/prepare.sh makes them)\n";
    return 0;
  }
  for (size_t i = 0; i < attnNumEntries; ++i)
    std::cout << attnEntries[i].specName
              << " arrays=" << attnEntries[i].numArrays
              << " sizes=" << attnEntries[i].numSizes << "\n";
  std::cout << attnNumEntries << " compiled specs\n";
  return 0;
}

int showDevice() {
  if (!ensureDevice())
    return 1;
  std::cout << "attn-gpu-runner: device: " << attn_gpu_device_name() << " ("
            << attnNumEntries << " compiled specs loaded)\n";
  return 0;
}

int runSpec(const Options &options) {
  std::string text;
  if (!readFile(options.specPath, text))
    return error("cannot read '" + options.specPath +
                 "': " + std::strerror(errno));
  SpecRun run{options, SourceFile(options.specPath, text), Spec()};
  Diagnostic diag;
  std::optional<Spec> spec = parseSpec(run.source, diag);
  if (!spec)
    return run.specError(diag);
  run.spec = std::move(*spec);
  if (!checkSpec(run.spec, diag))
    return run.specError(diag);
  run.tolerance = checkTolerance(run.spec, /*tensorCores=*/true, options.tf32);
  std::vector<SizeBindings> combinations;
  if (!run.sizeCombinations(combinations))
    return 1;
  if (options.command == "inputs") {
    RunInputs inputs(run.spec);
    std::string message;
    if (!run.prepareInputs(combinations.front(), inputs, message))
      return error(message);
    return 0;
  }
  if (!run.findEntry() || !ensureDevice())
    return 1;
  int status = 0;
  for (const SizeBindings &sizes : combinations) {
    bool fatal = false;
    if (!run.run(sizes, fatal))
      status = 1;
    if (fatal)
      return error("stopping: the GPU is in an error state");
  }
  return status;
}

} // namespace

int main(int argc, char **argv) {
  Options options;
  if (!parseOptions(argc, argv, options))
    return 1;
  if (options.command == "list")
    return listEntries();
  if (options.command == "device")
    return showDevice();
  return runSpec(options);
}
