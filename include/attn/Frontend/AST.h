//===- AST.h - The syntax tree of an .attn spec -----------------*- C++ -*-===//
//
// What the parser read, with the location of every piece, before any name is
// resolved. The score, feature map, mask and normaliser reuse the plain enums
// of the reference evaluator: they mean exactly DESIGN §1.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_FRONTEND_AST_H
#define ATTN_FRONTEND_AST_H

#include "attn/Frontend/Diagnostics.h"
#include "attn/Reference/Reference.h"
#include "attn/Support/ElementType.h"

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace attn {
namespace frontend {

using ::attn::ElementType;
using ::attn::parseElementType;
using reference::FeatureMap;
using reference::Mask;
using reference::MaskKind;
using reference::Normalizer;
using reference::Score;

enum class Order { Auto, QkFirst, KvFirst, Recurrent };

/// `dim N` (dynamic, bound at run time) or `dim D = 64`.
struct DimDecl {
  std::string name;
  std::optional<int64_t> value;
  SourceLocation loc;
};

/// One entry of an input's shape: an integer or the name of a `dim`.
struct ShapeEntry {
  std::string name; ///< Empty for a literal.
  int64_t value = 0;
  SourceLocation loc;
  bool isLiteral() const { return name.empty(); }
};

/// `input q: [B, H, N, 64]`, or with an element type `input q: bf16[...]`
/// (f32 when none is written).
struct InputDecl {
  std::string name;
  std::vector<ShapeEntry> shape;
  ElementType elementType = ElementType::F32;
  SourceLocation loc;
  SourceLocation elementTypeLoc; ///< Where the type was written, if it was.
};

/// A reference to an input by name, with where it was written (or, for a
/// defaulted reference, where the construct that implied it starts).
struct InputRef {
  std::string name;
  SourceLocation loc;
  bool isSet() const { return !name.empty(); }
};

/// `term NAME { ... }`: one attention term (DESIGN §1).
struct TermDecl {
  std::string name;
  SourceLocation loc;

  InputRef query;  ///< Defaults to the input named `q`.
  InputRef key;    ///< Defaults to the input named `k`.
  std::optional<Score> score;
  FeatureMap featureMap = FeatureMap::None;
  SourceLocation scoreLoc;
  Mask mask;
  SourceLocation maskLoc;
  Normalizer normalizer = Normalizer::Default;
  SourceLocation normalizerLoc;
  std::optional<double> scale;
  SourceLocation scaleLoc;
  std::optional<double> eps;
  SourceLocation epsLoc;
  Order order = Order::Auto;
  SourceLocation orderLoc;
  std::optional<int64_t> chunk; ///< std::nullopt = auto.
  SourceLocation chunkLoc;
  InputRef omega;         ///< FAVOR+ random features [m, D].
  InputRef projectKeys;   ///< Linformer E [k, M].
  InputRef projectValues; ///< Linformer F [k, M].
  /// `decay = 0.9` (every head and token) or `decay = NAME` (an input [H] or
  /// [B, H, N]), DESIGN §1.2; at most one of the two.
  std::optional<double> decayRate;
  InputRef decay;
  SourceLocation decayLoc;
  InputRef keyWeight; ///< κ [B, H, M], DESIGN §1.2.
  /// `state = S0` or `state = S0, z0` (DESIGN §1.2, causal kernel terms):
  /// S0 [B, H, F, E] and, for the rows normaliser, z0 [B, H, F].
  InputRef stateIn;
  InputRef normIn;
  /// DESIGN §1.3's score modifications (softmax and relu2): `softcap = c`,
  /// `bias = alibi` (the standard slopes) or `bias = alibi(NAME)` (an input
  /// [H] of slopes), and (softmax) `sink = NAME`, an input [H] of one logit
  /// per head in the denominator.
  std::optional<double> softcap;
  SourceLocation softcapLoc;
  bool alibi = false;
  InputRef alibiSlopes;
  SourceLocation biasLoc;
  InputRef sinks;
  /// DESIGN §1.3's lengths (inputs [B]): `key_lengths = NAME` hides keys
  /// j >= L_b, `query_lengths = NAME` zeroes rows i >= L_b, `lengths = NAME`
  /// is both (self-attention over a padded batch).
  InputRef keyLengths;
  InputRef queryLengths;
};

/// A whole spec: `attention NAME { dims, inputs, terms, value, gate }`.
struct Spec {
  std::string name;
  SourceLocation loc;
  std::vector<DimDecl> dims;
  std::vector<InputDecl> inputs;
  std::vector<TermDecl> terms;
  InputRef value; ///< Defaults to the input named `v`.
  InputRef gate;  ///< Optional.
  /// `output state`: the spec also returns the final state of its one term,
  /// S_{N-1} [B, H, F, E] (and z_{N-1} [B, H, F] for rows).
  bool outputState = false;
  SourceLocation outputStateLoc;
  /// `output lse`: the spec also returns the log-sum-exp of its one softmax
  /// term's rows, lse [B, H, N] (DESIGN §1.3), after the output.
  bool outputLse = false;
  SourceLocation outputLseLoc;
  /// `output bf16` (or f16, f32): the element type of the output O, rounded
  /// from the f32 accumulation; f32 when not written.
  std::optional<ElementType> outputType;
  SourceLocation outputTypeLoc;

  const DimDecl *findDim(const std::string &name) const;
  const InputDecl *findInput(const std::string &name) const;
};

using reference::toString;
const char *toString(Order order);

/// Prints \p spec as an indented tree (attnc --emit=ast).
void printAST(const Spec &spec, std::ostream &os);

} // namespace frontend
} // namespace attn

#endif // ATTN_FRONTEND_AST_H
