//===- AttnOps.td - Operations of the attn dialect ---------*- tablegen -*-===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNOPS_TD
#define ATTN_DIALECT_ATTN_IR_ATTNOPS_TD

include "attn/Dialect/Attn/IR/AttnDialect.td"
include "attn/Dialect/Attn/IR/AttnAttrs.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

def Attn_Tensor4D : 4DTensorOf<[F32]>;
// Queries, keys, values and outputs: f32, or f16 / bf16 widened exactly on
// load, with f32 arithmetic (DESIGN §1.1).
def Attn_ActivationTensor4D : 4DTensorOf<[F32, F16, BF16]>;
def Attn_Tensor2D : 2DTensorOf<[F32]>;
def Attn_Tensor3D : 3DTensorOf<[F32]>;
def Attn_DecayTensor : TensorRankOf<[F32], [1, 3]>;
def Attn_Tensor1D : 1DTensorOf<[F32]>;

//===----------------------------------------------------------------------===//
// TermOp
//===----------------------------------------------------------------------===//

def Attn_TermOp : Attn_Op<"term", [Pure, AttrSizedOperandSegments,
                                   AttrSizedResultSegments]> {
  let summary = "one normalised attention term: Σ_j w_ij v_j / z_i";
  let description = [{
    Computes, for every batch b, head h and query position i,

    ```
    term[b,h,i,:] = Σ_j w_ij · v[b,h,j,:] / z_i      (0 when row i has no
                                                     unmasked key or z_i = 0)
    ```

    with the weights chosen by the score (s = `scale`, default 1/sqrt(D)):

    | score     | w_ij for an unmasked (i, j)          | masked |
    |-----------|--------------------------------------|--------|
    | `softmax` | exp(s·q_i·k_j − max_j' s·q_i·k_j')   | 0      |
    | `relu2`   | relu(s·q_i·k_j)²                     | 0      |
    | `kernel`  | φ(q_i, i) · φ(k_j, j)                | 0      |

    and the feature map φ of a `kernel` term:
    `identity` x; `relu` max(x, 0); `elu1` elu(x) + 1;
    `favor_plus` exp(ω x' − |x'|²/2) / sqrt(m) with x' = x·s^(1/2) and
    ω: [m, D] the `omega` operand (Performer FAVOR+, φ(q)·φ(k) ≈ exp(s q·k));
    `cosformer` [relu(x)·cos(πi/2L), relu(x)·sin(πi/2L)] with L = max(N, M),
    so that φ(q_i,i)·φ(k_j,j) = relu(q_i)·relu(k_j)·cos(π(i−j)/2L);
    `rfa` (Random Feature Attention) [sin(ω x̂), cos(ω x̂)] / sqrt(m) with
    x̂ = x / |x| (0 for x = 0) and ω: [m, D] the `omega` operand, so that
    φ(x)·φ(y) = (1/m) Σ_r cos(ω_r·(x̂ − ŷ)).

    The normaliser z_i is `rows` (Σ_j w_ij + ε, ε = `eps`; the default for
    `softmax` and `kernel`), `length` (the number of unmasked keys of row i;
    the default for `relu2`) or `none` (1). ε defaults to 0 for `softmax` and
    `relu2` and to 1e-6 for `kernel`.

    With `project(E, F)` (Linformer), K' = E·K and V' = F·V along the
    sequence (E, F: [k, M], shared across batch and heads) and the term
    attends over the k projected keys.

    Decay (DESIGN §1.2, `kernel` terms): with g_t the `decay` number (every
    head and token), `decay(%g)` [H] (one γ per head, RetNet) or
    `decay(%g)` [B, H, N] (one g_t per token, GLA / Mamba-2), a visible pair
    j ≤ i weighs `w_ij = d_ij · κ_j · φ(q_i, i)·φ(k_j, j)` with
    `d_ij = Π_{t=j+1..i} g_t` (d_ii = 1); κ_j is the `key_weight` operand
    [B, H, M] (default 1; RFA's gate is decay g with key weight 1 − g).
    Lowerings work from cumulative sums of log g, so that long products
    neither underflow nor overflow.

    State (DESIGN §1.2, `causal` kernel terms): `state(%S0, %z0)` stands for
    keys before position 0 (S0: [B, H, F, E], z0: [B, H, F] with the `rows`
    normaliser, F the feature width), seen by query i with weight
    Π_{t=0..i} g_t; `final_state` adds the results S_{N−1} [B, H, F, E] and
    (rows) z_{N−1} [B, H, F] after the output. With either, the term is
    evaluated by chunked `kv_first` or `recurrent` (never `qk_first`).

    Heads, positions, windows and score modifications (DESIGN §1.3): K and V
    may have H_kv heads with H = r·H_kv query heads (grouped-query and
    multi-query attention), query head h reading key/value head ⌊h / r⌋.
    The `causal` and `window(l, r)` masks read the query position
    p_i = M − N + i (bottom-right alignment, so that N < M is a block of
    queries at the end of M keys: decoding against a cache). For `softmax`
    and `relu2` the score s·q·k goes through `softcap c` (s ← c·tanh(s/c)),
    then `alibi` (s ← s − a_h·|p_i − j|, with the ALiBi reference's slopes
    a_h, or `alibi(%slopes)` [H]), then the mask. `sink(%sinks)` [H]
    (softmax) adds one logit σ_h per head to the denominator only:
    m_i = max(max_j s_ij, σ_h), z_i = Σ_j exp(s_ij − m_i) + exp(σ_h − m_i).
    `key_lengths(%lk)` [B] hides key j of batch b unless j < L_b, and
    `query_lengths(%lq)` [B] makes rows i ≥ L_b of batch b 0 (a padded
    batch; f32 holding whole numbers: the operands are compared as
    j < L_b, so any value is defined, and L_b ≤ 0 hides every key or row).

    `lse` (softmax) adds the result lse [B, H, N], the log-sum-exp of
    each row's weights: lse_i = m_i + log z_i (with the sink's term when
    present), −inf for a row with no visible key (DESIGN §1.3); the
    partial results of two key ranges A and B then merge exactly as
    o = e^{lse_A − l} o_A + e^{lse_B − l} o_B, l = log(e^{lse_A} + e^{lse_B}).

    `order` and `chunk` record decisions that do not change the result:
    `qk_first` computes (φQ φK^T) V, `kv_first` computes φQ (φK^T V) (kernel
    terms only), `recurrent` runs token by token (causal kernel terms:
    S_i = g_i S_{i−1} + κ_i φ(k_i) v_iᵀ, z_i alike, o_i = φ(q_i)ᵀ S_i /
    (φ(q_i)·z_i + ε)); `auto` (the default) leaves the choice to
    `attn-select-order`. `chunk` is the sequence tile of the chosen strategy
    (the state chunk of causal kv-first); absent means `auto`.
    `crossover N`, set by `attn-select-order` when N is dynamic, keeps the
    order `auto` and asks code generation to branch at run time: kv-first
    from N queries on, qk-first below.

    Syntax (clauses in any order; defaults are omitted when printed):

    ```
    %t = attn.term kernel elu1 (%q, %k, %v) mask causal order kv_first chunk 64
           : tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>
           -> tensor<1x8x?x64xf32>
    ```

    Constraints (sizes are checked where both are static):
    - (C1) `query` is [B,H,N,D], `key` is [B,H_kv,M,D], `value` is
      [B,H_kv,M,E] with positive sizes; B agrees across the three, H_kv
      between key and value, D across query and key, M across key and
      value; H_kv = H, or both are static and H_kv divides H. The static sizes of every operand and of the result, times 4
      bytes, fit in int64 (every buffer and loop is sized by that product).
    - (C2) The result is [B,H,N,E].
    - (C3) A `kernel` term has a feature map; `softmax` and `relu2` have none.
    - (C4) `favor_plus` and `rfa` take `omega` [m, D]; no other term takes
      `omega`.
    - (C5) `kv_first` and `recurrent` need the product form: only `kernel`
      terms; `recurrent` needs the `causal` mask and no `project`.
    - (C6) `block_causal` masks need N = M, and so does `causal` on a
      `kernel` term (softmax and relu2 align N < M bottom-right).
    - (C7) `project` takes E and F, both [k, M]; it is not allowed with a mask.
    - (C8) `scale` is finite and positive, and only given to terms that use
      it (`softmax`, `relu2`, `kernel favor_plus`).
    - (C9) `eps` is finite and non-negative, and only given with `rows`.
    - (C10) `chunk` is positive; mask blocks are positive (see `#attn.mask`).
    - (C11) `crossover` is positive and only given to a `kernel` term whose
      order is `auto`.
    - (C12) A decay is either a number in (0, 1] or an operand [H] or
      [B, H, N], not both; it needs a `kernel` term, a `causal` or
      `block_causal` mask and the `rows` or `none` normaliser.
    - (C13) `key_weight` is [B, H, M] and needs a `kernel` term without
      `project`.
    - (C14) `state` and `final_state` need a `kernel` term with the `causal`
      mask, no `project` and an order other than `qk_first`; the states are
      [B, H, F, E] and, exactly when the normaliser is `rows`, [B, H, F]
      (F = D, 2D for `cosformer`, m for `favor_plus`, 2m for `rfa`).
    - (C15) A `kernel` term with a `window` mask or grouped heads
      (H_kv < H) is evaluated `qk_first` (its order is `auto` or
      `qk_first`).
    - (C16) `softcap` is finite and positive and `alibi` is given to
      `softmax` and `relu2` terms only, `alibi` not with `project`; `sink`
      needs `softmax`; the slopes and sinks are [H].
    - (C17) `key_lengths` and `query_lengths` are [B]; they need no
      `project` and no `state` or `final_state`, and a `kernel` term with
      either is evaluated `qk_first` (its order is `auto` or `qk_first`).
    - (C18) `lse` needs a `softmax` term with the `rows` normaliser and
      ε = 0; it is [B, H, N].
    - (C19) `query`, `key` and `value` have one element type: f32, f16 or
      bf16. Every other operand and result is f32 except the result, which
      may be f32, f16 or bf16. f16 and bf16 operands are widened exactly
      and all arithmetic is f32; a narrow result is the f32 result rounded
      to nearest even.
  }];

  let arguments = (ins
    Attn_ActivationTensor4D:$query,
    Attn_ActivationTensor4D:$key,
    Attn_ActivationTensor4D:$value,
    Optional<Attn_Tensor2D>:$omega,
    Optional<Attn_Tensor2D>:$key_projection,
    Optional<Attn_Tensor2D>:$value_projection,
    Optional<Attn_DecayTensor>:$decay,
    Optional<Attn_Tensor3D>:$key_weight,
    Optional<Attn_Tensor4D>:$initial_state,
    Optional<Attn_Tensor3D>:$initial_norm,
    Optional<Attn_Tensor1D>:$alibi_slopes,
    Optional<Attn_Tensor1D>:$sinks,
    Optional<Attn_Tensor1D>:$key_lengths,
    Optional<Attn_Tensor1D>:$query_lengths,
    Attn_ScoreAttr:$score,
    OptionalAttr<Attn_FeatureMapAttr>:$feature_map,
    OptionalAttr<Attn_MaskAttr>:$mask,
    OptionalAttr<Attn_NormalizerAttr>:$normalizer,
    OptionalAttr<F64Attr>:$scale,
    OptionalAttr<F64Attr>:$eps,
    OptionalAttr<F64Attr>:$decay_rate,
    DefaultValuedAttr<Attn_OrderAttr, "::mlir::attn::Order::Auto">:$order,
    OptionalAttr<I64Attr>:$chunk,
    OptionalAttr<I64Attr>:$crossover,
    OptionalAttr<F64Attr>:$softcap,
    UnitAttr:$alibi
  );
  let results = (outs Attn_ActivationTensor4D:$result,
                      Optional<Attn_Tensor4D>:$final_state,
                      Optional<Attn_Tensor3D>:$final_norm,
                      Optional<Attn_Tensor3D>:$lse);

  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;

  let extraClassDeclaration = [{
    /// True when the term takes or returns a state (C14).
    bool hasState() { return getInitialState() || getFinalState(); }
    /// F, the feature width of the state, when static.
    std::optional<int64_t> getStaticFeatureWidth();
    /// The mask, `none` when absent.
    ::mlir::attn::MaskKind getMaskKind();
    /// The mask's block size (0 for masks without one).
    int64_t getMaskBlock();
    /// The normaliser with the §1 default applied.
    ::mlir::attn::Normalizer getEffectiveNormalizer();
    /// ε with the §1 default applied (0 for normalisers other than rows).
    double getEffectiveEps();
    /// s with the §1 default 1/sqrt(D) applied; std::nullopt when the scale
    /// is defaulted and D is dynamic.
    std::optional<double> getEffectiveScale();
    /// True when the scale is part of the math of this term.
    bool usesScale();
    /// True when both association orders are legal (a kernel term).
    bool hasProductForm() { return getScore() == ::mlir::attn::Score::Kernel; }
    bool isProjected() { return getKeyProjection() != nullptr; }
    /// True when the term has a decay (a number or an operand).
    bool hasDecay() { return getDecayRate() || getDecay(); }
    /// True when K and V have fewer heads than Q (DESIGN §1.3).
    bool hasGroupedHeads();
    /// True when the term has key or query lengths (C17).
    bool hasLengths() { return getKeyLengths() || getQueryLengths(); }
    /// True when only qk-first can evaluate the term (C15, C17): a window
    /// mask, grouped heads or lengths.
    bool needsQkFirst();
    /// True when the term transforms its scores (softcap or alibi).
    bool modifiesScores() { return getSoftcap() || getAlibi(); }
  }];
}

//===----------------------------------------------------------------------===//
// CombineOp
//===----------------------------------------------------------------------===//

def Attn_CombineOp : Attn_Op<"combine", [Pure, AttrSizedOperandSegments]> {
  let summary = "sum of terms over a shared V, with an optional gate";
  let description = [{
    `O = G ⊙ Σ_t term_t`, elementwise over [B,H,N,E]; without a gate G = 1
    (GAU/FLASH use the gate, mixed-chunk attention sums a local and a global
    term).

    ```
    %o = attn.combine %local, %global gate(%g) : tensor<1x4x256x64xf32>
    %h = attn.combine %local, %global
           : tensor<1x4x256x64xf32> -> tensor<1x4x256x64xbf16>
    ```

    Constraints:
    - (C1) At least one term.
    - (C2) Every term, the gate and the result have the same shape (a
      static and a dynamic size are not the same shape here); the terms and
      the gate are f32.
    - (C3) The static sizes of the result, times 4 bytes, fit in int64.
    - (C4) The result is f32, f16 or bf16: the f32 sum (times the gate)
      rounded to nearest even.
  }];
  let arguments = (ins Variadic<Attn_Tensor4D>:$terms,
                       Optional<Attn_Tensor4D>:$gate);
  let results = (outs Attn_ActivationTensor4D:$result);
  // `: T` when the result is f32 (T is then every operand's type), else
  // `: T -> R` with T the f32 operand type and R the narrow result.
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

#endif // ATTN_DIALECT_ATTN_IR_ATTNOPS_TD
