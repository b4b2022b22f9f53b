// The CUDA kernel of attnsweep_example::attention (schema and CPU kernel: attention_op.cpp).
//
// One launch per call and no other GPU work: the output comes from at::empty
// (the caching allocator, no memset) and inputs are read where they are (they
// must be contiguous; nothing is copied).
//
// Each thread block takes 16 query rows of one (batch, head): 4 warps, 4 rows
// each. It walks the keys in tiles of 32, loading each key/value tile into
// shared memory as float32. For each of its rows a warp scores the tile (lane j
// takes key j), then updates the row's running max, running sum and output
// accumulator (online softmax, all float32; lane l owns output dims l, l+32, l+64,
// l+96). The output is written once, at the end.
//
// Limits: head_dim 1..128 (any value), float32/bfloat16/float16, contiguous
// q, k, v on one CUDA device, batch and heads up to 65535.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <cmath>
#include <optional>

#define ATTENTION_CHECK(condition, ...) TORCH_CHECK(condition, "attnsweep_example::attention: ", __VA_ARGS__)

namespace attnsweep_example {

// Defined in attention_op.cpp.
void check_attention_inputs(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v);
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

template <typename scalar_t>
void launch(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, at::Tensor& out, const Shape& shape) {
  const dim3 grid(static_cast<unsigned>((shape.seq_q + kBlockRows - 1) / kBlockRows),
                  static_cast<unsigned>(shape.heads), static_cast<unsigned>(q.size(0)));
  attention_kernel<scalar_t><<<grid, kWarps * kWarpSize, 0, at::cuda::getCurrentCUDAStream()>>>(
      q.const_data_ptr<scalar_t>(), k.const_data_ptr<scalar_t>(), v.const_data_ptr<scalar_t>(),
      out.mutable_data_ptr<scalar_t>(), shape);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

at::Tensor attention_cuda(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, bool is_causal,
                          std::optional<double> scale) {
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

}  // namespace
}  // namespace attnsweep_example

TORCH_LIBRARY_IMPL(attnsweep_example, CUDA, m) { m.impl("attention", &attnsweep_example::attention_cuda); }
