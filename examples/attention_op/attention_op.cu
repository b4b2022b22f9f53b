// The CUDA kernels of attnsweep_example::attention and attention_backward (schemas,
// CPU kernels and the Autograd kernel: attention_op.cpp).
//
// No GPU work but the op's own kernels: outputs come from at::empty (the caching
// allocator, no memset) and inputs are read where they are (q, k, v must be
// contiguous; nothing is copied).
//
// Forward, one launch. Each thread block takes 16 query rows of one (batch, head):
// 4 warps, 4 rows each. It walks the keys in tiles of 32, loading each key/value
// tile into shared memory as float32. For each of its rows a warp scores the tile
// (lane j takes key j), then updates the row's running max, running sum and output
// accumulator (online softmax, all float32; lane l owns output dims l, l+32, l+64,
// l+96). The output is written once, at the end.
//
// Backward, two launches, naive (no tiling, no tensor cores; written to be checked,
// not to be fast). With P = softmax(q k^T * scale), dP = dO v^T, delta_i = sum_j
// P_ij dP_ij and dS = P * (dP - delta):
//   1. attention_backward_query_kernel, one block per (batch, head, query row): a
//      first pass over the row's visible keys recomputes the row's log-sum-exp and
//      delta (online, as the forward's softmax), a second pass recomputes P and dP
//      key by key and sums dq = scale * sum_j dS_ij k_j. Writes dq and, for the
//      second kernel, the row's log-sum-exp and delta (float32 scratch from
//      at::empty, [batch, heads, seq_q, 2]).
//   2. attention_backward_key_kernel, one block per (batch, kv head, key): over
//      every query row that sees the key, in every query head that reads the kv
//      head, recomputes P_ij from the stored log-sum-exp and sums dv_j = sum_i
//      P_ij dO_i and dk_j = scale * sum_i dS_ij q_i.
// Each output element is written once, by one block: no atomics, the same bits on
// every run. Inside a block the 4 warps take every 4th key (or row) and meet in
// shared memory at the end; a warp scores one key or row at a time, lane l on dims
// l, l+32, l+64, l+96, and reduces with shuffles. grad_out may have any strides
// (autograd hands out.sum()'s gradient over as an expanded tensor).
//
// Limits: head_dim 1..128 (any value), float32/bfloat16/float16, contiguous
// q, k, v on one CUDA device, batch and heads up to 65535; the backward also
// seq_q and seq_kv up to 2^31 - 1 (one block per row).
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <climits>
#include <cmath>
#include <optional>
#include <tuple>

#define ATTENTION_CHECK(condition, ...) TORCH_CHECK(condition, "attnsweep_example::attention: ", __VA_ARGS__)

namespace attnsweep_example {

// Defined in attention_op.cpp.
void check_attention_inputs(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v);
void check_grad_out(const at::Tensor& grad_out, const at::Tensor& q);
double default_scale(const at::Tensor& q, std::optional<double> scale);

namespace {

constexpr int kWarpSize = 32;
constexpr int kMaxHeadDim = 128;
constexpr int kDimsPerLane = kMaxHeadDim / kWarpSize;  // output dims each lane accumulates
constexpr int kWarps = 4;                                // warps per block
constexpr int kRowsPerWarp = 4;                          // query rows per warp
constexpr int kBlockRows = kWarps * kRowsPerWarp;        // query rows per block
constexpr int kTileKeys = kWarpSize;                     // keys per shared-memory tile: one per lane
constexpr unsigned kFullMask = 0xffffffffu;

struct Shape {
  int64_t heads, kv_heads, seq_q, seq_kv;
  int head_dim;
  float scale;
  bool is_causal;
};

__device__ float warp_max(float x) {
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) x = fmaxf(x, __shfl_xor_sync(kFullMask, x, offset));
  return x;
}

__device__ float warp_sum(float x) {
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) x += __shfl_xor_sync(kFullMask, x, offset);
  return x;
}

// grid (ceil(seq_q / kBlockRows), heads, batch), block kWarps * 32 threads.
template <typename scalar_t>
__global__ void __launch_bounds__(kWarps* kWarpSize)
    attention_kernel(const scalar_t* __restrict__ q, const scalar_t* __restrict__ k, const scalar_t* __restrict__ v,
                     scalar_t* __restrict__ out, Shape shape) {
  __shared__ float q_tile[kBlockRows][kMaxHeadDim];      // this block's query rows, times scale
  __shared__ float k_tile[kTileKeys][kMaxHeadDim + 1];   // +1: lanes read one column of 32 rows, no bank conflict
  __shared__ float v_tile[kTileKeys][kMaxHeadDim];

  const int d_count = shape.head_dim;
  const int64_t batch = blockIdx.z, head = blockIdx.y;
  const int64_t kv_head = head / (shape.heads / shape.kv_heads);
  const int64_t first_row = static_cast<int64_t>(blockIdx.x) * kBlockRows;
  const scalar_t* q_rows = q + (batch * shape.heads + head) * shape.seq_q * d_count;
  const scalar_t* k_rows = k + (batch * shape.kv_heads + kv_head) * shape.seq_kv * d_count;
  const scalar_t* v_rows = v + (batch * shape.kv_heads + kv_head) * shape.seq_kv * d_count;
  scalar_t* out_rows = out + (batch * shape.heads + head) * shape.seq_q * d_count;

  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;

  for (int i = threadIdx.x; i < kBlockRows * d_count; i += blockDim.x) {
    const int r = i / d_count, d = i % d_count;
    const int64_t row = first_row + r;
    q_tile[r][d] = row < shape.seq_q ? static_cast<float>(q_rows[row * d_count + d]) * shape.scale : 0.f;
  }

  float row_max[kRowsPerWarp], row_sum[kRowsPerWarp], acc[kRowsPerWarp][kDimsPerLane];
#pragma unroll
  for (int r = 0; r < kRowsPerWarp; ++r) {
    row_max[r] = -INFINITY;
    row_sum[r] = 0.f;
#pragma unroll
    for (int i = 0; i < kDimsPerLane; ++i) acc[r][i] = 0.f;
  }

  // Causal: the block's last row sees keys up to its own index; later tiles are all masked.
  const int64_t key_end = shape.is_causal ? min(shape.seq_kv, first_row + kBlockRows) : shape.seq_kv;

  for (int64_t first_key = 0; first_key < key_end; first_key += kTileKeys) {
    __syncthreads();  // the previous tile is used up (and, the first time, q_tile is complete)
    for (int i = threadIdx.x; i < kTileKeys * d_count; i += blockDim.x) {
      const int j = i / d_count, d = i % d_count;
      const int64_t key = first_key + j;
      k_tile[j][d] = key < shape.seq_kv ? static_cast<float>(k_rows[key * d_count + d]) : 0.f;
      v_tile[j][d] = key < shape.seq_kv ? static_cast<float>(v_rows[key * d_count + d]) : 0.f;
    }
    __syncthreads();

#pragma unroll
    for (int r = 0; r < kRowsPerWarp; ++r) {
      const int tile_row = warp * kRowsPerWarp + r;
      const int64_t row = first_row + tile_row;
      if (row >= shape.seq_q) break;  // the same for the whole warp

      // Lane j scores key first_key + j.
      const int64_t key = first_key + lane;
      const bool visible = key < shape.seq_kv && (!shape.is_causal || key <= row);
      float score = -INFINITY;
      if (visible) {
        score = 0.f;
        for (int d = 0; d < d_count; ++d) score += q_tile[tile_row][d] * k_tile[lane][d];
      }

      // Online softmax: rescale what was accumulated so far to the new running max.
      const float new_max = fmaxf(row_max[r], warp_max(score));
      if (new_max == -INFINITY) continue;  // no visible key yet (cannot happen: key 0 is always visible)
      const float rescale = expf(row_max[r] - new_max);  // 0 the first time (row_max is -inf)
      const float p = visible ? expf(score - new_max) : 0.f;
      row_sum[r] = row_sum[r] * rescale + warp_sum(p);
      row_max[r] = new_max;
#pragma unroll
      for (int i = 0; i < kDimsPerLane; ++i) acc[r][i] *= rescale;
      for (int j = 0; j < kTileKeys; ++j) {
        const float p_j = __shfl_sync(kFullMask, p, j);
#pragma unroll
        for (int i = 0; i < kDimsPerLane; ++i) {
          const int d = lane + i * kWarpSize;
          if (d < d_count) acc[r][i] += p_j * v_tile[j][d];
        }
      }
    }
  }

#pragma unroll
  for (int r = 0; r < kRowsPerWarp; ++r) {
    const int64_t row = first_row + warp * kRowsPerWarp + r;
    if (row >= shape.seq_q) break;
#pragma unroll
    for (int i = 0; i < kDimsPerLane; ++i) {
      const int d = lane + i * kWarpSize;
      if (d < d_count) out_rows[row * d_count + d] = static_cast<scalar_t>(acc[r][i] / row_sum[r]);
    }
  }
}

// ---- backward ------------------------------------------------------------------

// grad_out's strides in elements: it is read where it is, in any layout.
struct GradStrides {
  int64_t batch, head, row, dim;
};

constexpr int kRowStats = 2;  // per query row in the scratch: log-sum-exp, delta

// One key against one query row, by a whole warp (lane l takes dims l, l+32, ...):
// the score (q_row is already scaled) and dP = dO . v, both summed over the warp.
// The lane's values of the key are left in k_lane.
template <typename scalar_t>
__device__ void score_key(const float* q_row, const float* grad_row, const scalar_t* k_row, const scalar_t* v_row,
                          int d_count, int lane, float (&k_lane)[kDimsPerLane], float& score, float& grad_prob) {
  float s = 0.f, g = 0.f;
#pragma unroll
  for (int i = 0; i < kDimsPerLane; ++i) {
    const int d = lane + i * kWarpSize;
    k_lane[i] = 0.f;
    if (d < d_count) {
      k_lane[i] = static_cast<float>(k_row[d]);
      s += q_row[d] * k_lane[i];
      g += grad_row[d] * static_cast<float>(v_row[d]);
    }
  }
  score = warp_sum(s);
  grad_prob = warp_sum(g);
}

// dq, and each row's log-sum-exp and delta for the second kernel.
// grid (seq_q, heads, batch), block kWarps * 32 threads: one query row per block.
template <typename scalar_t>
__global__ void __launch_bounds__(kWarps* kWarpSize)
    attention_backward_query_kernel(const scalar_t* __restrict__ grad_out, GradStrides grad_strides,
                                    const scalar_t* __restrict__ q, const scalar_t* __restrict__ k,
                                    const scalar_t* __restrict__ v, scalar_t* __restrict__ grad_q,
                                    float* __restrict__ row_stats, Shape shape) {
  __shared__ float q_row[kMaxHeadDim];     // times scale
  __shared__ float grad_row[kMaxHeadDim];  // dO of this row
  __shared__ float warp_partials[kWarps][3];  // each warp's running max, sum and sum of p * dP
  __shared__ float warp_grad_q[kWarps][kMaxHeadDim];

  const int d_count = shape.head_dim;
  const int64_t row = blockIdx.x, head = blockIdx.y, batch = blockIdx.z;
  const int64_t kv_head = head / (shape.heads / shape.kv_heads);
  const int64_t row_index = (batch * shape.heads + head) * shape.seq_q + row;  // in q, grad_q and row_stats
  const scalar_t* k_rows = k + (batch * shape.kv_heads + kv_head) * shape.seq_kv * d_count;
  const scalar_t* v_rows = v + (batch * shape.kv_heads + kv_head) * shape.seq_kv * d_count;
  const scalar_t* grad = grad_out + batch * grad_strides.batch + head * grad_strides.head + row * grad_strides.row;
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;

  for (int d = threadIdx.x; d < d_count; d += blockDim.x) {
    q_row[d] = static_cast<float>(q[row_index * d_count + d]) * shape.scale;
    grad_row[d] = static_cast<float>(grad[d * grad_strides.dim]);
  }
  __syncthreads();

  // Causal: query `row` sees keys 0..row (key 0 always, so every row has a visible key).
  const int64_t key_end = shape.is_causal ? min(shape.seq_kv, row + 1) : shape.seq_kv;
  float k_lane[kDimsPerLane];

  // Pass 1: the softmax's max and sum, and sum_j exp(s_j - max) dP_j, online per warp.
  float running_max = -INFINITY, running_sum = 0.f, running_weighted = 0.f;
  for (int64_t key = warp; key < key_end; key += kWarps) {
    float score, grad_prob;
    score_key(q_row, grad_row, k_rows + key * d_count, v_rows + key * d_count, d_count, lane, k_lane, score,
              grad_prob);
    const float new_max = fmaxf(running_max, score);
    const float rescale = expf(running_max - new_max);  // 0 the first time (running_max is -inf)
    const float p = expf(score - new_max);
    running_sum = running_sum * rescale + p;
    running_weighted = running_weighted * rescale + p * grad_prob;
    running_max = new_max;
  }
  if (lane == 0) {
    warp_partials[warp][0] = running_max;
    warp_partials[warp][1] = running_sum;
    warp_partials[warp][2] = running_weighted;
  }
  __syncthreads();
  float row_max = -INFINITY;
#pragma unroll
  for (int w = 0; w < kWarps; ++w) row_max = fmaxf(row_max, warp_partials[w][0]);
  float row_sum = 0.f, row_weighted = 0.f;
#pragma unroll
  for (int w = 0; w < kWarps; ++w) {
    if (warp_partials[w][1] == 0.f) continue;  // a warp that had no key (fewer visible keys than warps)
    const float rescale = expf(warp_partials[w][0] - row_max);
    row_sum += warp_partials[w][1] * rescale;
    row_weighted += warp_partials[w][2] * rescale;
  }
  const float log_sum_exp = row_max + logf(row_sum);
  const float delta = row_weighted / row_sum;  // sum_j P_j dP_j
  if (threadIdx.x == 0) {
    row_stats[row_index * kRowStats] = log_sum_exp;
    row_stats[row_index * kRowStats + 1] = delta;
  }

  // Pass 2: dq = scale * sum_j P_j (dP_j - delta) k_j.
  float acc[kDimsPerLane];
#pragma unroll
  for (int i = 0; i < kDimsPerLane; ++i) acc[i] = 0.f;
  for (int64_t key = warp; key < key_end; key += kWarps) {
    float score, grad_prob;
    score_key(q_row, grad_row, k_rows + key * d_count, v_rows + key * d_count, d_count, lane, k_lane, score,
              grad_prob);
    const float grad_score = expf(score - log_sum_exp) * (grad_prob - delta);
#pragma unroll
    for (int i = 0; i < kDimsPerLane; ++i) acc[i] += grad_score * k_lane[i];
  }
#pragma unroll
  for (int i = 0; i < kDimsPerLane; ++i) {
    const int d = lane + i * kWarpSize;
    if (d < d_count) warp_grad_q[warp][d] = acc[i];
  }
  __syncthreads();
  for (int d = threadIdx.x; d < d_count; d += blockDim.x) {
    float total = 0.f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) total += warp_grad_q[w][d];
    grad_q[row_index * d_count + d] = static_cast<scalar_t>(total * shape.scale);
  }
}

// dk and dv of one key, from every query row that sees it.
// grid (seq_kv, kv_heads, batch), block kWarps * 32 threads: one key per block.
template <typename scalar_t>
__global__ void __launch_bounds__(kWarps* kWarpSize)
    attention_backward_key_kernel(const scalar_t* __restrict__ grad_out, GradStrides grad_strides,
                                  const scalar_t* __restrict__ q, const scalar_t* __restrict__ k,
                                  const scalar_t* __restrict__ v, scalar_t* __restrict__ grad_k,
                                  scalar_t* __restrict__ grad_v, const float* __restrict__ row_stats, Shape shape) {
  __shared__ float k_row[kMaxHeadDim];  // times scale
  __shared__ float v_row[kMaxHeadDim];
  __shared__ float warp_grad_k[kWarps][kMaxHeadDim];
  __shared__ float warp_grad_v[kWarps][kMaxHeadDim];

  const int d_count = shape.head_dim;
  const int64_t key = blockIdx.x, kv_head = blockIdx.y, batch = blockIdx.z;
  const int64_t group = shape.heads / shape.kv_heads;  // query heads kv_head * group .. + group - 1 read it
  const int64_t key_index = (batch * shape.kv_heads + kv_head) * shape.seq_kv + key;  // in k, v, grad_k, grad_v
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;

  for (int d = threadIdx.x; d < d_count; d += blockDim.x) {
    k_row[d] = static_cast<float>(k[key_index * d_count + d]) * shape.scale;
    v_row[d] = static_cast<float>(v[key_index * d_count + d]);
  }
  __syncthreads();

  // Causal: only rows key, key + 1, ... see this key (none when key >= seq_q: dk = dv = 0).
  const int64_t first_row = shape.is_causal ? key : 0;
  const int64_t rows = first_row < shape.seq_q ? shape.seq_q - first_row : 0;  // per query head
  float acc_k[kDimsPerLane], acc_v[kDimsPerLane];
#pragma unroll
  for (int i = 0; i < kDimsPerLane; ++i) acc_k[i] = acc_v[i] = 0.f;

  for (int64_t n = warp; n < group * rows; n += kWarps) {
    const int64_t head = kv_head * group + n / rows, row = first_row + n % rows;
    const int64_t row_index = (batch * shape.heads + head) * shape.seq_q + row;
    const scalar_t* q_row = q + row_index * d_count;
    const scalar_t* grad = grad_out + batch * grad_strides.batch + head * grad_strides.head + row * grad_strides.row;
    float q_lane[kDimsPerLane], grad_lane[kDimsPerLane], s = 0.f, g = 0.f;
#pragma unroll
    for (int i = 0; i < kDimsPerLane; ++i) {
      const int d = lane + i * kWarpSize;
      q_lane[i] = grad_lane[i] = 0.f;
      if (d < d_count) {
        q_lane[i] = static_cast<float>(q_row[d]);
        grad_lane[i] = static_cast<float>(grad[d * grad_strides.dim]);
        s += q_lane[i] * k_row[d];
        g += grad_lane[i] * v_row[d];
      }
    }
    const float score = warp_sum(s), grad_prob = warp_sum(g);
    const float prob = expf(score - row_stats[row_index * kRowStats]);
    const float grad_score = prob * (grad_prob - row_stats[row_index * kRowStats + 1]);
#pragma unroll
    for (int i = 0; i < kDimsPerLane; ++i) {
      acc_v[i] += prob * grad_lane[i];
      acc_k[i] += grad_score * q_lane[i];
    }
  }

#pragma unroll
  for (int i = 0; i < kDimsPerLane; ++i) {
    const int d = lane + i * kWarpSize;
    if (d < d_count) {
      warp_grad_k[warp][d] = acc_k[i];
      warp_grad_v[warp][d] = acc_v[i];
    }
  }
  __syncthreads();
  for (int d = threadIdx.x; d < d_count; d += blockDim.x) {
    float total_k = 0.f, total_v = 0.f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
      total_k += warp_grad_k[w][d];
      total_v += warp_grad_v[w][d];
    }
    grad_k[key_index * d_count + d] = static_cast<scalar_t>(total_k * shape.scale);
    grad_v[key_index * d_count + d] = static_cast<scalar_t>(total_v);
  }
}

template <typename scalar_t>
void launch(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, at::Tensor& out, const Shape& shape) {
  const dim3 grid(static_cast<unsigned>((shape.seq_q + kBlockRows - 1) / kBlockRows),
                  static_cast<unsigned>(shape.heads), static_cast<unsigned>(q.size(0)));
  attention_kernel<scalar_t><<<grid, kWarps * kWarpSize, 0, at::cuda::getCurrentCUDAStream()>>>(
      q.const_data_ptr<scalar_t>(), k.const_data_ptr<scalar_t>(), v.const_data_ptr<scalar_t>(),
      out.mutable_data_ptr<scalar_t>(), shape);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

template <typename scalar_t>
void launch_backward(const at::Tensor& grad_out, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                     at::Tensor& grad_q, at::Tensor& grad_k, at::Tensor& grad_v, at::Tensor& row_stats,
                     const Shape& shape) {
  const GradStrides grad_strides{grad_out.stride(0), grad_out.stride(1), grad_out.stride(2), grad_out.stride(3)};
  const auto stream = at::cuda::getCurrentCUDAStream();
  const auto batch = static_cast<unsigned>(q.size(0));
  const dim3 query_grid(static_cast<unsigned>(shape.seq_q), static_cast<unsigned>(shape.heads), batch);
  attention_backward_query_kernel<scalar_t><<<query_grid, kWarps * kWarpSize, 0, stream>>>(
      grad_out.const_data_ptr<scalar_t>(), grad_strides, q.const_data_ptr<scalar_t>(), k.const_data_ptr<scalar_t>(),
      v.const_data_ptr<scalar_t>(), grad_q.mutable_data_ptr<scalar_t>(), row_stats.mutable_data_ptr<float>(), shape);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  const dim3 key_grid(static_cast<unsigned>(shape.seq_kv), static_cast<unsigned>(shape.kv_heads), batch);
  attention_backward_key_kernel<scalar_t><<<key_grid, kWarps * kWarpSize, 0, stream>>>(
      grad_out.const_data_ptr<scalar_t>(), grad_strides, q.const_data_ptr<scalar_t>(), k.const_data_ptr<scalar_t>(),
      v.const_data_ptr<scalar_t>(), grad_k.mutable_data_ptr<scalar_t>(), grad_v.mutable_data_ptr<scalar_t>(),
      row_stats.const_data_ptr<float>(), shape);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

// What the forward and the backward kernels need of q, k and v, beyond check_attention_inputs.
void check_cuda_inputs(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  ATTENTION_CHECK(q.is_cuda() && k.is_cuda() && v.is_cuda(), "q, k and v must all be CUDA tensors, got ", q.device(),
                  ", ", k.device(), ", ", v.device());
  ATTENTION_CHECK(k.device() == q.device() && v.device() == q.device(), "q, k and v must be on one device, got ",
                  q.device(), ", ", k.device(), ", ", v.device());
  check_attention_inputs(q, k, v);
  ATTENTION_CHECK(q.size(3) <= kMaxHeadDim, "head_dim must be at most ", kMaxHeadDim, " on CUDA, got ", q.size(3));
  ATTENTION_CHECK(q.is_contiguous() && k.is_contiguous() && v.is_contiguous(),
                  "q, k and v must be contiguous on CUDA (this kernel copies nothing)");
  ATTENTION_CHECK(q.size(0) <= 65535 && q.size(1) <= 65535, "batch and heads must be at most 65535 on CUDA, got ",
                  q.size(0), " and ", q.size(1));
}

at::Tensor attention_cuda(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, bool is_causal,
                          std::optional<double> scale) {
  check_cuda_inputs(q, k, v);

  const c10::cuda::CUDAGuard device_guard(q.device());
  at::Tensor out = at::empty(q.sizes(), q.options());
  if (out.numel() == 0) return out;  // nothing to compute, nothing launched

  const Shape shape{q.size(1), k.size(1), q.size(2), k.size(2), static_cast<int>(q.size(3)),
                    static_cast<float>(default_scale(q, scale)), is_causal};
  switch (q.scalar_type()) {
    case at::kFloat: launch<float>(q, k, v, out, shape); break;
    case at::kBFloat16: launch<at::BFloat16>(q, k, v, out, shape); break;
    case at::kHalf: launch<at::Half>(q, k, v, out, shape); break;
    default: ATTENTION_CHECK(false, "dtype ", q.scalar_type(), " is not supported");  // check_attention_inputs refused it
  }
  return out;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> attention_backward_cuda(const at::Tensor& grad_out,
                                                                       const at::Tensor& q, const at::Tensor& k,
                                                                       const at::Tensor& v, bool is_causal,
                                                                       std::optional<double> scale) {
  check_cuda_inputs(q, k, v);
  ATTENTION_CHECK(grad_out.device() == q.device(), "grad_out must be on q's device ", q.device(), ", got ",
                  grad_out.device());
  check_grad_out(grad_out, q);
  ATTENTION_CHECK(q.size(2) <= INT_MAX && k.size(2) <= INT_MAX,
                  "seq_q and seq_kv must be at most 2147483647 for the CUDA backward, got ", q.size(2), " and ",
                  k.size(2));

  const c10::cuda::CUDAGuard device_guard(q.device());
  if (q.numel() == 0) {
    // No query row: nothing reaches k or v, whose gradients are zero (one fill each, no kernel of ours).
    return {at::empty(q.sizes(), q.options()), at::zeros(k.sizes(), k.options()), at::zeros(v.sizes(), v.options())};
  }
  at::Tensor grad_q = at::empty(q.sizes(), q.options());
  at::Tensor grad_k = at::empty(k.sizes(), k.options());
  at::Tensor grad_v = at::empty(v.sizes(), v.options());
  at::Tensor row_stats = at::empty({q.size(0), q.size(1), q.size(2), kRowStats}, q.options().dtype(at::kFloat));

  const Shape shape{q.size(1), k.size(1), q.size(2), k.size(2), static_cast<int>(q.size(3)),
                    static_cast<float>(default_scale(q, scale)), is_causal};
  switch (q.scalar_type()) {
    case at::kFloat: launch_backward<float>(grad_out, q, k, v, grad_q, grad_k, grad_v, row_stats, shape); break;
    case at::kBFloat16:
      launch_backward<at::BFloat16>(grad_out, q, k, v, grad_q, grad_k, grad_v, row_stats, shape);
      break;
    case at::kHalf: launch_backward<at::Half>(grad_out, q, k, v, grad_q, grad_k, grad_v, row_stats, shape); break;
    default: ATTENTION_CHECK(false, "dtype ", q.scalar_type(), " is not supported");  // check_attention_inputs refused it
  }
  return {grad_q, grad_k, grad_v};
}

}  // namespace
}  // namespace attnsweep_example

TORCH_LIBRARY_IMPL(attnsweep_example, CUDA, m) {
  m.impl("attention", &attnsweep_example::attention_cuda);
  m.impl("attention_backward", &attnsweep_example::attention_backward_cuda);
}
