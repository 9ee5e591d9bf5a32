//===- CEntry.cpp - Derive the C entry point from the attn ops ------------===//
//
// The equalities and byte sizes the entry point checks are read off the
// verified attn.term and attn.combine ops: each constraint of DESIGN §1 that
// ties two sizes becomes a check when one of them is dynamic.
//
//===----------------------------------------------------------------------===//

#include "attn/Codegen/CEntry.h"
#include "attn/Codegen/Passes.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

#include <set>

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNDESCRIBECENTRY
#include "attn/Codegen/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;
using ::attn::AbiArray;
using ::attn::EntryAbi;
using ::attn::Extent;

static ::attn::ElementType elementTypeOf(ShapedType type) {
  Type element = type.getElementType();
  if (element.isF16())
    return ::attn::ElementType::F16;
  if (element.isBF16())
    return ::attn::ElementType::BF16;
  return ::attn::ElementType::F32;
}

/// The function argument \p value is, looking through tensor.cast.
static std::optional<unsigned> argumentIndex(Value value, func::FuncOp func) {
  while (auto cast = value.getDefiningOp<tensor::CastOp>())
    value = cast.getSource();
  auto arg = dyn_cast<BlockArgument>(value);
  if (!arg || arg.getOwner() != &func.getBody().front())
    return std::nullopt;
  return arg.getArgNumber();
}

FailureOr<EntryAbi> mlir::attn::describeCEntry(func::FuncOp func,
                                               const EntryNaming *naming) {
  FunctionType type = func.getFunctionType();
  // The output, and with `output state` the final state and its norm.
  if (type.getNumResults() < 1 || type.getNumResults() > 3)
    return func.emitError("the C entry point needs a function with one "
                          "result (the output) and at most the final state "
                          "and its norm after it, found ")
           << type.getNumResults();
  SmallVector<RankedTensorType> argTypes;
  for (Type t : llvm::concat<const Type>(type.getInputs(), type.getResults())) {
    auto tensor = dyn_cast<RankedTensorType>(t);
    if (!tensor ||
        !isa<Float32Type, Float16Type, BFloat16Type>(tensor.getElementType()))
      return func.emitError("the C entry point takes f32, f16 or bf16 "
                            "ranked tensors only, got ")
             << t;
    argTypes.push_back(tensor);
  }
  if (naming && naming->argumentDims.size() != type.getNumInputs())
    return func.emitError("the naming of the C entry point's sizes has ")
           << naming->argumentDims.size() << " arguments, the function "
           << type.getNumInputs();

  EntryAbi abi;
  abi.specName = naming ? naming->specName : func.getSymName().str();
  abi.entryName = "attn_" + abi.specName;
  abi.sourcePath = naming ? naming->sourcePath : "";
  abi.callee = "_mlir_ciface_" + func.getSymName().str();

  // Parameter names: the spec's, unless C (or C++) cannot take them or two
  // would collide (an input named like a dim, or `out`).
  std::set<std::string> used;
  auto cName = [&](std::string name) {
    while (::attn::isReservedCName(name) || used.count(name))
      name += "_";
    used.insert(name);
    return name;
  };
  auto argName = [&](unsigned i) {
    if (auto name = func.getArgAttrOfType<StringAttr>(i, "attn.input"))
      return name.str();
    return "arg" + std::to_string(i);
  };

  // The sizes: the spec's dims in declaration order, or one per dynamic
  // dimension of each argument.
  auto dimName = [&](unsigned arg, unsigned d) -> std::string {
    if (naming)
      return d < naming->argumentDims[arg].size()
                 ? naming->argumentDims[arg][d]
                 : "";
    return argName(arg) + "_d" + std::to_string(d);
  };
  if (naming) {
    for (const auto &[name, value] : naming->dims) {
      if (value)
        abi.staticSizes.push_back({name, *value});
      else
        abi.dynamicSizes.push_back(name);
    }
  } else {
    for (unsigned i = 0; i < type.getNumInputs(); ++i)
      for (unsigned d = 0; d < argTypes[i].getRank(); ++d)
        if (argTypes[i].isDynamicDim(d))
          abi.dynamicSizes.push_back(dimName(i, d));
  }

  auto extentOf = [&](unsigned arg, unsigned d) -> FailureOr<Extent> {
    Extent extent;
    extent.name = dimName(arg, d);
    if (!argTypes[arg].isDynamicDim(d)) {
      extent.value = argTypes[arg].getDimSize(d);
      return extent;
    }
    for (size_t i = 0; i < abi.dynamicSizes.size(); ++i)
      if (abi.dynamicSizes[i] == extent.name)
        extent.dynamic = static_cast<int>(i);
    if (!extent.isDynamic())
      return func.emitError("dimension ")
             << d << " of argument " << arg
             << " is dynamic but names no dynamic size";
    return extent;
  };
  std::vector<std::vector<Extent>> shapes;
  for (unsigned i = 0; i < type.getNumInputs(); ++i) {
    std::vector<Extent> shape;
    for (unsigned d = 0; d < argTypes[i].getRank(); ++d) {
      FailureOr<Extent> extent = extentOf(i, d);
      if (failed(extent))
        return failure();
      shape.push_back(*extent);
    }
    shapes.push_back(shape);
    AbiArray array;
    array.name = argName(i);
    array.cName = cName(array.name);
    array.shape = shape;
    array.elementType = elementTypeOf(argTypes[i]);
    abi.arrays.push_back(std::move(array));
  }

  // Every operand of the ops the entry point checks is an argument.
  auto shapeOf = [&](Operation *op,
                     Value value) -> FailureOr<std::vector<Extent>> {
    std::optional<unsigned> index = argumentIndex(value, func);
    if (!index)
      return op->emitOpError("has an operand that is not an argument of '")
             << func.getSymName()
             << "', which the C entry point cannot describe";
    return shapes[*index];
  };

  // The output: the first term's B, H, N and V's E (attn.term's C2).
  func::ReturnOp ret = nullptr;
  func.walk([&](func::ReturnOp op) { ret = op; });
  if (!ret)
    return func.emitError("the function has no return");
  Operation *root = ret.getOperand(0).getDefiningOp();
  TermOp first;
  if (auto combine = dyn_cast_or_null<CombineOp>(root))
    first = combine.getTerms().empty()
                ? TermOp()
                : combine.getTerms().front().getDefiningOp<TermOp>();
  else
    first = dyn_cast_or_null<TermOp>(root);
  if (!first)
    return func.emitError("the C entry point needs the function to return "
                          "an attn.term or an attn.combine of terms");
  FailureOr<std::vector<Extent>> q0 = shapeOf(first, first.getQuery());
  FailureOr<std::vector<Extent>> v = shapeOf(first, first.getValue());
  if (failed(q0) || failed(v))
    return failure();
  AbiArray out;
  out.name = "out";
  out.cName = cName("out");
  out.shape = {(*q0)[0], (*q0)[1], (*q0)[2], (*v)[3]};
  out.isOutput = true;
  out.elementType =
      elementTypeOf(cast<ShapedType>(root->getResult(0).getType()));
  abi.arrays.push_back(out);
  // `output state` (DESIGN §1.2): the final state [B, H, F, E] and, for
  // rows, its norm [B, H, F], after the output.
  // `output lse` (DESIGN §1.3): lse [B, H, N] after the output.
  if (first.getLse() && ret.getNumOperands() == 2 &&
      ret.getOperand(1) == first.getLse()) {
    AbiArray lse;
    lse.name = "lse";
    lse.cName = cName(lse.name);
    lse.shape = {(*q0)[0], (*q0)[1], (*q0)[2]};
    lse.isOutput = true;
    abi.arrays.push_back(lse);
  }
  for (auto [index, value] : llvm::enumerate(ret.getOperands().drop_front())) {
    if (first.getLse() && value == first.getLse())
      continue;
    auto type = cast<RankedTensorType>(value.getType());
    if (index > 1 || !first.getFinalState() || type.getRank() < 3)
      return func.emitError("the C entry point returns the output and the "
                            "term's final state only");
    int64_t width = type.getDimSize(2);
    if (ShapedType::isDynamic(width))
      return func.emitError("the C entry point needs a static feature width "
                            "for the final state, got ")
             << type;
    AbiArray state;
    state.name = index == 0 ? "state" : "norm_state";
    state.cName = cName(state.name);
    Extent f;
    f.value = width;
    state.shape = {(*q0)[0], (*q0)[1], f};
    if (index == 0)
      state.shape.push_back((*v)[3]);
    state.isOutput = true;
    abi.arrays.push_back(state);
  }
  for (const std::string &dim : abi.dynamicSizes)
    abi.dynamicCNames.push_back(cName(dim));

  auto equal = [&](const Extent &a, const Extent &b) {
    if (!a.isDynamic() && !b.isDynamic())
      return; // The verifier has checked it.
    if (a.isDynamic() && b.isDynamic() && a.dynamic == b.dynamic)
      return;
    abi.equalities.push_back({a, b});
  };
  for (const AbiArray &array : abi.arrays)
    abi.products.push_back(array.shape);

  WalkResult walk = func.walk([&](TermOp term) {
    FailureOr<std::vector<Extent>> qs = shapeOf(term, term.getQuery());
    FailureOr<std::vector<Extent>> ks = shapeOf(term, term.getKey());
    FailureOr<std::vector<Extent>> vs = shapeOf(term, term.getValue());
    if (failed(qs) || failed(ks) || failed(vs))
      return WalkResult::interrupt();
    const std::vector<Extent> &q = *qs, &k = *ks, &tv = *vs;
    // C1: B across query, key and value; H_kv between key and value, and H
    // = H_kv unless both are static (grouped heads); D between query and
    // key; M between key and value.
    equal(q[0], k[0]);
    equal(q[0], tv[0]);
    equal(q[1], k[1]);
    equal(k[1], tv[1]);
    equal(q[3], k[3]);
    equal(k[2], tv[2]);
    // C2 and the terms of one combine: every term's query has the output's
    // B, H and N.
    for (int d : {0, 1, 2})
      equal(q[d], (*q0)[d]);
    // C6: block_causal masks, and causal on kernel terms, need N = M.
    if (auto mask = term.getMaskAttr();
        mask && (mask.getKind() == MaskKind::BlockCausal ||
                 (mask.getKind() == MaskKind::Causal &&
                  term.getScore() == Score::Kernel)))
      equal(q[2], k[2]);
    // C16: the ALiBi slopes and the sinks are [H].
    for (Value perHead : {term.getAlibiSlopes(), term.getSinks()}) {
      if (!perHead)
        continue;
      FailureOr<std::vector<Extent>> s = shapeOf(term, perHead);
      if (failed(s))
        return WalkResult::interrupt();
      equal((*s)[0], q[1]);
    }
    // C17: the lengths are [B].
    for (Value lengths : {term.getKeyLengths(), term.getQueryLengths()}) {
      if (!lengths)
        continue;
      FailureOr<std::vector<Extent>> l = shapeOf(term, lengths);
      if (failed(l))
        return WalkResult::interrupt();
      equal((*l)[0], q[0]);
    }
    // The scores (or their tiles) cover N x M.
    abi.products.push_back({q[0], q[1], q[2], k[2]});
    // C4: omega is [m, D]; the features are N x m and M x m.
    if (Value omega = term.getOmega()) {
      FailureOr<std::vector<Extent>> w = shapeOf(term, omega);
      if (failed(w))
        return WalkResult::interrupt();
      equal((*w)[1], q[3]);
      abi.products.push_back({q[0], q[1], q[2], (*w)[0]});
      abi.products.push_back({k[0], k[1], k[2], (*w)[0]});
    }
    // C12: decay g is [H] or [B, H, N]; C13: key weight is [B, H, M].
    if (Value decay = term.getDecay()) {
      FailureOr<std::vector<Extent>> g = shapeOf(term, decay);
      if (failed(g))
        return WalkResult::interrupt();
      if (g->size() == 1) {
        equal((*g)[0], q[1]);
      } else {
        for (int d : {0, 1, 2})
          equal((*g)[d], q[d]);
      }
    }
    if (Value keyWeight = term.getKeyWeight()) {
      FailureOr<std::vector<Extent>> w = shapeOf(term, keyWeight);
      if (failed(w))
        return WalkResult::interrupt();
      for (int d : {0, 1, 2})
        equal((*w)[d], k[d]);
    }
    // C7: E and F are both [k, M].
    if (term.isProjected()) {
      FailureOr<std::vector<Extent>> e = shapeOf(term, term.getKeyProjection());
      FailureOr<std::vector<Extent>> f =
          shapeOf(term, term.getValueProjection());
      if (failed(e) || failed(f))
        return WalkResult::interrupt();
      equal((*e)[1], k[2]);
      equal((*f)[1], k[2]);
      equal((*e)[0], (*f)[0]);
      abi.products.push_back({q[0], q[1], q[2], (*e)[0]});
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  // attn.combine's C2: the gate is [B, H, N, E].
  walk = func.walk([&](CombineOp combine) {
    if (!combine.getGate())
      return WalkResult::advance();
    FailureOr<std::vector<Extent>> g = shapeOf(combine, combine.getGate());
    if (failed(g))
      return WalkResult::interrupt();
    for (int d : {0, 1, 2})
      equal((*g)[d], (*q0)[d]);
    equal((*g)[3], (*v)[3]);
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  return abi;
}

//===----------------------------------------------------------------------===//
// The attribute
//===----------------------------------------------------------------------===//

static Attribute extentToAttr(Builder &b, const EntryAbi &abi,
                              const Extent &extent) {
  if (extent.isDynamic())
    return b.getStringAttr(abi.dynamicSizes[extent.dynamic]);
  return b.getI64IntegerAttr(extent.value);
}

static ArrayAttr extentsToAttr(Builder &b, const EntryAbi &abi,
                               const std::vector<Extent> &extents) {
  SmallVector<Attribute> list;
  for (const Extent &extent : extents)
    list.push_back(extentToAttr(b, abi, extent));
  return b.getArrayAttr(list);
}

static ArrayAttr stringsToAttr(Builder &b,
                               const std::vector<std::string> &strings) {
  SmallVector<Attribute> list;
  for (const std::string &s : strings)
    list.push_back(b.getStringAttr(s));
  return b.getArrayAttr(list);
}

DictionaryAttr mlir::attn::entryAbiToAttr(MLIRContext *context,
                                          const EntryAbi &abi) {
  Builder b(context);
  SmallVector<Attribute> arrays, equalities, products, staticSizes;
  for (const AbiArray &array : abi.arrays) {
    SmallVector<NamedAttribute> fields = {
        b.getNamedAttr("name", b.getStringAttr(array.name)),
        b.getNamedAttr("c_name", b.getStringAttr(array.cName)),
        b.getNamedAttr("shape", extentsToAttr(b, abi, array.shape))};
    if (array.isOutput)
      fields.push_back(b.getNamedAttr("output", b.getUnitAttr()));
    if (array.elementType != ::attn::ElementType::F32)
      fields.push_back(b.getNamedAttr(
          "element_type", b.getStringAttr(toString(array.elementType))));
    arrays.push_back(b.getDictionaryAttr(fields));
  }
  for (const auto &[lhs, rhs] : abi.equalities)
    equalities.push_back(b.getArrayAttr(
        {extentToAttr(b, abi, lhs), extentToAttr(b, abi, rhs)}));
  for (const std::vector<Extent> &product : abi.products)
    products.push_back(extentsToAttr(b, abi, product));
  for (const auto &[name, value] : abi.staticSizes)
    staticSizes.push_back(b.getArrayAttr(
        {b.getStringAttr(name), b.getI64IntegerAttr(value)}));
  return b.getDictionaryAttr({
      b.getNamedAttr("spec", b.getStringAttr(abi.specName)),
      b.getNamedAttr("entry", b.getStringAttr(abi.entryName)),
      b.getNamedAttr("callee", b.getStringAttr(abi.callee)),
      b.getNamedAttr("source", b.getStringAttr(abi.sourcePath)),
      b.getNamedAttr("sizes", stringsToAttr(b, abi.dynamicSizes)),
      b.getNamedAttr("size_c_names", stringsToAttr(b, abi.dynamicCNames)),
      b.getNamedAttr("static_sizes", b.getArrayAttr(staticSizes)),
      b.getNamedAttr("arrays", b.getArrayAttr(arrays)),
      b.getNamedAttr("equalities", b.getArrayAttr(equalities)),
      b.getNamedAttr("products", b.getArrayAttr(products)),
  });
}

FailureOr<EntryAbi> mlir::attn::entryAbiFromAttr(DictionaryAttr attr,
                                                 Location loc) {
  auto malformed = [&](const char *what) {
    return emitError(loc) << "malformed '" << kCEntryAttrName << "': " << what;
  };
  auto getString = [&](StringRef key, std::string &out) {
    auto value = attr.getAs<StringAttr>(key);
    if (value)
      out = value.str();
    return static_cast<bool>(value);
  };
  auto getStrings = [&](StringRef key, std::vector<std::string> &out) {
    auto list = attr.getAs<ArrayAttr>(key);
    if (!list)
      return false;
    for (Attribute item : list) {
      auto s = dyn_cast<StringAttr>(item);
      if (!s)
        return false;
      out.push_back(s.str());
    }
    return true;
  };
  EntryAbi abi;
  if (!getString("spec", abi.specName) || !getString("entry", abi.entryName) ||
      !getString("callee", abi.callee) ||
      !getString("source", abi.sourcePath) ||
      !getStrings("sizes", abi.dynamicSizes) ||
      !getStrings("size_c_names", abi.dynamicCNames) ||
      abi.dynamicSizes.size() != abi.dynamicCNames.size())
    return malformed("names");

  auto extentFrom = [&](Attribute a, Extent &extent) {
    if (auto value = dyn_cast<IntegerAttr>(a)) {
      extent.value = value.getInt();
      return extent.value >= 0;
    }
    auto name = dyn_cast<StringAttr>(a);
    if (!name)
      return false;
    extent.name = name.str();
    for (size_t i = 0; i < abi.dynamicSizes.size(); ++i)
      if (abi.dynamicSizes[i] == extent.name)
        extent.dynamic = static_cast<int>(i);
    return extent.isDynamic();
  };
  auto extentsFrom = [&](Attribute a, std::vector<Extent> &extents) {
    auto list = dyn_cast<ArrayAttr>(a);
    if (!list)
      return false;
    for (Attribute item : list) {
      Extent extent;
      if (!extentFrom(item, extent))
        return false;
      extents.push_back(extent);
    }
    return true;
  };

  auto arrays = attr.getAs<ArrayAttr>("arrays");
  if (!arrays || arrays.empty())
    return malformed("arrays");
  for (Attribute item : arrays) {
    auto dict = dyn_cast<DictionaryAttr>(item);
    AbiArray array;
    if (!dict || !dict.getAs<StringAttr>("name") ||
        !dict.getAs<StringAttr>("c_name") ||
        !extentsFrom(dict.get("shape"), array.shape))
      return malformed("an array");
    array.name = dict.getAs<StringAttr>("name").str();
    array.cName = dict.getAs<StringAttr>("c_name").str();
    array.isOutput = static_cast<bool>(dict.get("output"));
    if (Attribute type = dict.get("element_type")) {
      auto name = dyn_cast<StringAttr>(type);
      std::optional<::attn::ElementType> parsed =
          name ? ::attn::parseElementType(name.str()) : std::nullopt;
      if (!parsed)
        return malformed("an array's element type");
      array.elementType = *parsed;
    }
    abi.arrays.push_back(std::move(array));
  }
  if (!abi.arrays.back().isOutput)
    return malformed("the last array is not the output");

  auto equalities = attr.getAs<ArrayAttr>("equalities");
  auto products = attr.getAs<ArrayAttr>("products");
  auto staticSizes = attr.getAs<ArrayAttr>("static_sizes");
  if (!equalities || !products || !staticSizes)
    return malformed("checks");
  for (Attribute item : equalities) {
    auto pair = dyn_cast<ArrayAttr>(item);
    Extent lhs, rhs;
    if (!pair || pair.size() != 2 || !extentFrom(pair[0], lhs) ||
        !extentFrom(pair[1], rhs))
      return malformed("an equality");
    abi.equalities.push_back({lhs, rhs});
  }
  for (Attribute item : products) {
    std::vector<Extent> product;
    if (!extentsFrom(item, product))
      return malformed("a product");
    abi.products.push_back(std::move(product));
  }
  for (Attribute item : staticSizes) {
    auto pair = dyn_cast<ArrayAttr>(item);
    if (!pair || pair.size() != 2 || !isa<StringAttr>(pair[0]) ||
        !isa<IntegerAttr>(pair[1]))
      return malformed("a static size");
    abi.staticSizes.push_back({cast<StringAttr>(pair[0]).str(),
                               cast<IntegerAttr>(pair[1]).getInt()});
  }
  return abi;
}

//===----------------------------------------------------------------------===//
// attn-describe-c-entry
//===----------------------------------------------------------------------===//

namespace {
struct AttnDescribeCEntryPass
    : public mlir::attn::impl::AttnDescribeCEntryBase<AttnDescribeCEntryPass> {
  using AttnDescribeCEntryBase::AttnDescribeCEntryBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp target;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (function.empty() ? !func.isPublic() || func.isExternal()
                           : func.getSymName() != function)
        continue;
      if (target) {
        module.emitError("attn-describe-c-entry: more than one public "
                         "function; name one with function=NAME");
        return signalPassFailure();
      }
      target = func;
    }
    if (!target) {
      module.emitError("attn-describe-c-entry: no function ")
          << (function.empty() ? std::string("that is public")
                               : "'" + function + "'");
      return signalPassFailure();
    }
    FailureOr<EntryAbi> abi = describeCEntry(target, /*naming=*/nullptr);
    if (failed(abi))
      return signalPassFailure();
    module->setAttr(kCEntryAttrName, entryAbiToAttr(&getContext(), *abi));
  }
};
} // namespace
