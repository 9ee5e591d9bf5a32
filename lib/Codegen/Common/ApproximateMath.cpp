//===- ApproximateMath.cpp - Vectorizable transcendental functions --------===//

#include "attn/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNAPPROXIMATEMATH
#include "attn/Codegen/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

namespace {
/// A constant of \p type (a scalar or a vector of it) holding \p value.
Value splatConstant(OpBuilder &builder, Location loc, Type type,
                    TypedAttr value) {
  if (auto vector = dyn_cast<VectorType>(type))
    value = DenseElementsAttr::get(vector, value);
  return arith::ConstantOp::create(builder, loc, type, value);
}

/// An f32 constant of \p type (f32 or a vector of it).
Value f32Constant(OpBuilder &builder, Location loc, Type type, float value) {
  return splatConstant(builder, loc, type, builder.getF32FloatAttr(value));
}

/// a * b + c as a multiply and an add the backend contracts into one FMA.
Value contractedFma(OpBuilder &builder, Location loc, Value a, Value b,
                    Value c) {
  auto contract = arith::FastMathFlagsAttr::get(builder.getContext(),
                                                arith::FastMathFlags::contract);
  Value product = arith::MulFOp::create(builder, loc, a, b, contract);
  return arith::AddFOp::create(builder, loc, product, c, contract);
}

/// i32 in the shape of \p type (a scalar or a vector), if \p type is f32.
/// True for f32 and vectors of f32: what the expansions rewrite. Math on
/// tensors (or memrefs) is left alone; this pass runs after the lowering
/// to scalars and vectors, and a tensor needs tensor constants.
bool isF32ScalarOrVector(Type type) {
  return type.isF32() ||
         (isa<VectorType>(type) && getElementTypeOrSelf(type).isF32());
}

Type sameShapeI32(Type type, Builder &builder) {
  if (!isF32ScalarOrVector(type))
    return Type();
  if (auto vector = dyn_cast<VectorType>(type))
    return vector.clone(builder.getI32Type());
  return builder.getI32Type();
}

/// fma(a, b, c) = a * b + c, contractable again by the backend.
struct ExpandFma : public OpRewritePattern<math::FmaOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::FmaOp op,
                                PatternRewriter &rewriter) const override {
    if (!isa<FloatType, VectorType>(op.getType()))
      return failure();
    rewriter.replaceOp(op, contractedFma(rewriter, op.getLoc(), op.getA(),
                                         op.getB(), op.getC()));
    return success();
  }
};

/// floor(x) of f32, exactly: x itself when |x| >= 2^23 (already an integer,
/// or inf/nan), else t - (t > x) with t = x truncated toward zero.
struct ExpandFloor : public OpRewritePattern<math::FloorOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::FloorOp op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    Type intType = sameShapeI32(type, rewriter);
    if (!intType)
      return failure();
    Location loc = op.getLoc();
    auto constant = [&](float value) {
      return f32Constant(rewriter, loc, type, value);
    };
    Value x = op.getOperand();
    Value truncated = arith::SIToFPOp::create(
        rewriter, loc, type, arith::FPToSIOp::create(rewriter, loc, intType, x));
    Value above = arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OGT,
                                        truncated, x);
    Value lowered = arith::SelectOp::create(
        rewriter, loc, above,
        arith::SubFOp::create(rewriter, loc, truncated, constant(1.0f)),
        truncated);
    Value magnitude = math::AbsFOp::create(rewriter, loc, x);
    Value small = arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OLT,
                                        magnitude, constant(8388608.0f));
    rewriter.replaceOpWithNewOp<arith::SelectOp>(op, small, lowered, x);
    return success();
  }
};

/// |x| of f32 by clearing the sign bit.
struct ExpandAbsF : public OpRewritePattern<math::AbsFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::AbsFOp op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    Type intType = sameShapeI32(type, rewriter);
    if (!intType)
      return failure();
    Location loc = op.getLoc();
    Value bits = arith::BitcastOp::create(rewriter, loc, intType, op.getOperand());
    Value cleared = arith::AndIOp::create(
        rewriter, loc, bits,
        splatConstant(rewriter, loc, intType,
                      rewriter.getI32IntegerAttr(0x7fffffff)));
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, type, cleared);
    return success();
  }
};

/// maxnumf(a, b) = a > b ? a : b, and with NaNs the other operand: NVVM
/// lowers the op to a libdevice call (__nv_fmaxf) that the GPU path does not
/// link. Under nnan, a NaN operand may give either operand.
struct ExpandMaxNumF : public OpRewritePattern<arith::MaxNumFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::MaxNumFOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value a = op.getLhs(), b = op.getRhs();
    Value pickA =
        arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OGT, a, b);
    if (!bitEnumContainsAll(op.getFastmath(), arith::FastMathFlags::nnan)) {
      Value bIsNaN =
          arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::UNO, b, b);
      pickA = arith::OrIOp::create(rewriter, loc, pickA, bIsNaN);
    }
    rewriter.replaceOpWithNewOp<arith::SelectOp>(op, pickA, a, b);
    return success();
  }
};

/// A constant bound that \p x never exceeds (NaN aside): x = `y > c ? c : y`
/// (or >=), the form of min(y, c) that keeps a NaN y, or minimumf/minnumf
/// of a constant. For elu1's e^min(x, 0).
std::optional<double> knownUpperBound(Value x) {
  APFloat bound(0.0f);
  if (auto select = x.getDefiningOp<arith::SelectOp>()) {
    auto compare = select.getCondition().getDefiningOp<arith::CmpFOp>();
    if (!compare || compare.getLhs() != select.getFalseValue() ||
        (compare.getPredicate() != arith::CmpFPredicate::OGT &&
         compare.getPredicate() != arith::CmpFPredicate::OGE))
      return std::nullopt;
    APFloat limit(0.0f);
    if (!matchPattern(compare.getRhs(), m_ConstantFloat(&limit)) ||
        !matchPattern(select.getTrueValue(), m_ConstantFloat(&bound)) ||
        bound.compare(limit) != APFloat::cmpEqual)
      return std::nullopt;
    return bound.convertToDouble();
  }
  Operation *def = x.getDefiningOp();
  if (!isa_and_nonnull<arith::MinimumFOp, arith::MinNumFOp>(def))
    return std::nullopt;
  for (Value operand : def->getOperands())
    if (matchPattern(operand, m_ConstantFloat(&bound)) && !bound.isNaN())
      return bound.convertToDouble();
  return std::nullopt;
}

/// exp(x) of f32 in 14 arithmetic ops (upstream's approximation takes ~30):
/// x clamped to [-87.5, 89] (NaN stays NaN: `x < lo ? lo : x`, one max
/// instruction on x86); k = round(x log2 e) by the 1.5 * 2^23 rounding
/// trick, which also leaves k in the low bits of the sum (no float-to-int
/// conversion); r = x - k ln 2 in two steps (|r| <= ln2/2); 2 exp(r) by a
/// degree-6 polynomial fitted to relative error (8.8e-8 in f32 arithmetic
/// over |r| <= ln2/2); scaled by 2^(k-1), so that k = 128 (x up to
/// ln FLT_MAX) still has a normal scale. The clamps give the edges for free:
/// above ln FLT_MAX (x <= 89: k = 128) the product overflows to +inf, and
/// below -86.99 (k = -126, down to x = -87.5) the scale's exponent field is
/// 0, so the result is 0: results that would be subnormal, < 2.4e-38, are
/// 0. Masked scores (-inf) and the far tail of a softmax row would
/// otherwise produce subnormals, whose arithmetic costs ~100 cycles per
/// operation on x86 without flush-to-zero. An operand known to stay at
/// most 89 (elu1's e^min(x, 0)) skips the upper clamp. (The 21-op form
/// before it tested overflow and flushed subnormals with two compares and
/// two selects, and took 3 more ops for the polynomial: 1 + r + r^2 P(r)
/// doubled.)
struct ExpF32 : public OpRewritePattern<math::ExpOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::ExpOp op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    Type intType = sameShapeI32(type, rewriter);
    if (!intType)
      return failure();
    Location loc = op.getLoc();
    auto f = [&](float value) {
      return f32Constant(rewriter, loc, type, value);
    };
    auto i = [&](int32_t value) {
      return splatConstant(rewriter, loc, intType,
                           rewriter.getI32IntegerAttr(value));
    };
    // contract: the backend fuses a * b + c into one FMA; nothing else may
    // be reassociated ((t + M) - M must stay a rounding).
    auto contract = arith::FastMathFlagsAttr::get(
        getContext(), arith::FastMathFlags::contract);
    auto mul = [&](Value a, Value b) {
      return arith::MulFOp::create(rewriter, loc, a, b, contract).getResult();
    };
    auto fma = [&](Value a, Value b, Value c) {
      return contractedFma(rewriter, loc, a, b, c);
    };
    // `x pred bound ? bound : x`: false for a NaN x, which stays.
    auto clamp = [&](arith::CmpFPredicate pred, Value x, float bound) {
      Value limit = f(bound);
      Value beyond = arith::CmpFOp::create(rewriter, loc, pred, x, limit);
      return arith::SelectOp::create(rewriter, loc, beyond, limit, x)
          .getResult();
    };

    Value x = clamp(arith::CmpFPredicate::OLT, op.getOperand(), -87.5f);
    // An operand known to stay at most 89 needs no overflow clamp.
    std::optional<double> bound = knownUpperBound(op.getOperand());
    if (!bound || *bound > 89.0)
      x = clamp(arith::CmpFPredicate::OGT, x, 89.0f);
    Value magic = f(12582912.0f); // 1.5 * 2^23
    Value shifted = fma(x, f(1.44269504088896341f), magic);
    Value k = arith::SubFOp::create(rewriter, loc, shifted, magic);
    Value r = fma(k, f(-0.693359375f), x);
    r = fma(k, f(2.12194440e-4f), r);
    // 2 exp(r) ~ sum_i c_i r^i, by Horner's rule.
    Value twiceExpR = f(2.703364472836256e-3f);
    for (float c : {1.674107275903225e-2f, 8.334671705961227e-2f,
                    3.3332952857017517e-1f, 9.99999463558197e-1f, 2.0f, 2.0f})
      twiceExpR = fma(twiceExpR, r, f(c));
    // The low bits of `shifted` are k: shifted left by 23 they are k's
    // exponent field; + 126 biases it to 2^(k-1).
    Value bits = arith::BitcastOp::create(rewriter, loc, intType, shifted);
    Value exponent = arith::AddIOp::create(
        rewriter, loc, arith::ShLIOp::create(rewriter, loc, bits, i(23)),
        i(126 << 23));
    Value scale = arith::BitcastOp::create(rewriter, loc, type, exponent);
    rewriter.replaceOp(op, mul(twiceExpR, scale));
    return success();
  }
};

struct ApproximateMathPass
    : public mlir::attn::impl::AttnApproximateMathBase<ApproximateMathPass> {
  using AttnApproximateMathBase::AttnApproximateMathBase;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    if (arithOnly)
      patterns.add<ExpandFma, ExpandFloor, ExpandAbsF, ExpandMaxNumF>(
          &getContext());
    patterns.add<ExpF32>(&getContext(), /*benefit=*/2);
    populateMathPolynomialApproximationPatterns(patterns, [](StringRef name) {
      // Names are the ops' full names, e.g. math.exp (f32 exp is
      // ExpF32's; upstream's still serves other types).
      return name == "math.exp" || name == "math.sin" || name == "math.cos" ||
             name == "math.expm1" || name == "math.tanh" || name == "math.log";
    });
    // Only math on scalars and vectors: the upstream approximations, like
    // the expansions above, build scalar or vector constants and would
    // leave invalid IR for math on tensors or memrefs. Where there is such
    // math, the patterns are applied to the other math ops only.
    SmallVector<Operation *> ops;
    bool shapedMath = false;
    getOperation()->walk([&](Operation *op) {
      if (!isa_and_nonnull<math::MathDialect>(op->getDialect()))
        return;
      if (llvm::all_of(op->getResultTypes(), [](Type type) {
            return !isa<ShapedType>(type) || isa<VectorType>(type);
          }))
        ops.push_back(op);
      else
        shapedMath = true;
    });
    LogicalResult applied =
        shapedMath ? applyOpPatternsGreedily(ops, std::move(patterns))
                   : applyPatternsGreedily(getOperation(), std::move(patterns));
    if (failed(applied))
      signalPassFailure();
  }
};
} // namespace
