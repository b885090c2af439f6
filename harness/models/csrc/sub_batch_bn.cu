// Sub-batch BN as one C++ operation: CUDA kernels over channels-last memory behind a C++ autograd function.
//
// The same computation as harness/models/triton_bn.py (groups = k contiguous blocks of the batch, which in
// channels-last memory are k contiguous slabs of rows of C channels; statistics in fp32 whatever the activation's
// dtype; the running statistics moved inside a kernel), with the host's side in C++: an eager step pays about a CUDA
// launch per kernel rather than a Python autograd function per layer (docs/gpu-notes.md measured that function as
// most of the Triton path's host time). Built on first use by harness/models/cuda_bn.py.
//
// Kernels, each over a (rows × C) activation, a thread handling V channels of a row at a time (one 16-byte load
// where C and the pointers allow; V = 1 otherwise):
//   forward   partial_sums (per program: a run of one group's rows → partial sums of x − x₀ and (x − x₀)², x₀ the
//             group's first row, which keeps the fp32 sums exact enough where |mean| ≫ std), finish_stats (the
//             partials of each group → mean, 1/std, scale, shift, unbiased variance; the running statistics), affine
//             (y = x·scale + shift);
//   backward  partial_sums again (of dy and dy·x̂), finish_grads (per group the coefficients of
//             dx = a·dy + b·x + c, and over the groups the affine weight's and bias's gradients), affine again.

#include <torch/extension.h>

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>

#include <algorithm>
#include <optional>
#include <tuple>

namespace {

using torch::Tensor;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

constexpr int kThreads = 256;          // per block of the row kernels
constexpr int kTargetPrograms = 1024;  // reduction programs in all: enough to fill an H100's 132 multiprocessors
constexpr int kRowsPerThread = 8;      // rows each thread of an elementwise kernel handles
constexpr int kFinishLanesC = 32, kFinishLanesP = 16;  // finishing kernels: channels × partials per block

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

__device__ __forceinline__ int64_t lesser(int64_t a, int64_t b) { return a < b ? a : b; }

// The activation dtypes the kernels are built for (each one more set of kernels to compile).
#define DISPATCH_ACTIVATION_TYPES(TYPE, NAME, ...)                                       \
  AT_DISPATCH_SWITCH(TYPE, NAME, AT_DISPATCH_CASE(at::kFloat, __VA_ARGS__)              \
                                     AT_DISPATCH_CASE(at::kHalf, __VA_ARGS__)          \
                                         AT_DISPATCH_CASE(at::kBFloat16, __VA_ARGS__))

template <typename T, int V>
struct alignas(sizeof(T) * V) Pack {
  T v[V];
};

// How the row kernels cover a (rows × C) activation of `splits` groups.
struct Layout {
  int64_t channels, rows_per_group;
  int lanes_c, lanes_r, channel_blocks;
  int64_t rows_per_prog, progs_per_group;  // reductions: programs per group, rows each
  int64_t rows_per_block, blocks_per_group;  // elementwise kernels
};

Layout make_layout(int64_t channels, int64_t rows, int64_t splits, int vec) {
  Layout l;
  l.channels = channels;
  l.rows_per_group = rows / splits;
  const int64_t vectors = channels / vec;
  l.lanes_c = static_cast<int>(std::min<int64_t>(vectors, 32));
  l.lanes_r = kThreads / l.lanes_c;
  l.channel_blocks = static_cast<int>(ceil_div(vectors, l.lanes_c));
  const int64_t most = ceil_div(l.rows_per_group, l.lanes_r);
  const int64_t progs = std::max<int64_t>(1, std::min<int64_t>(ceil_div(kTargetPrograms, splits * l.channel_blocks), most));
  l.rows_per_prog = ceil_div(l.rows_per_group, progs);
  l.progs_per_group = ceil_div(l.rows_per_group, l.rows_per_prog);
  l.rows_per_block = static_cast<int64_t>(l.lanes_r) * kRowsPerThread;
  l.blocks_per_group = ceil_div(l.rows_per_group, l.rows_per_block);
  return l;
}

// Sums within a block over its row lanes (threadIdx.y), two values per (thread column, channel); the result is in
// row lane 0's slots. `lanes_r` need not be a power of two.
template <int V>
__device__ void sum_over_row_lanes(float (&a)[V], float (&b)[V], float* shared) {
  const int lanes = blockDim.x * blockDim.y;
  const int me = threadIdx.y * blockDim.x + threadIdx.x;
#pragma unroll
  for (int v = 0; v < V; ++v) {
    shared[me * V + v] = a[v];
    shared[(lanes + me) * V + v] = b[v];
  }
  __syncthreads();
  int width = 1;
  while (width < static_cast<int>(blockDim.y)) width <<= 1;
  for (int stride = width >> 1; stride > 0; stride >>= 1) {
    if (threadIdx.y < stride && threadIdx.y + stride < blockDim.y) {
      const int other = (threadIdx.y + stride) * blockDim.x + threadIdx.x;
#pragma unroll
      for (int v = 0; v < V; ++v) {
        shared[me * V + v] += shared[other * V + v];
        shared[(lanes + me) * V + v] += shared[(lanes + other) * V + v];
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int v = 0; v < V; ++v) {
    a[v] = shared[me * V + v];
    b[v] = shared[(lanes + me) * V + v];
  }
}

// What a reduction program sums per channel, two values per row: forward, x − x₀ and (x − x₀)² (x₀ the group's first
// row); backward, dy and dy·x̂.
template <typename T, int V>
struct ShiftedSums {
  const T* __restrict__ x;
  float shift[V];
  __device__ void begin(int64_t group, int64_t first_row_at, int64_t channels, int64_t c0) {
    const Pack<T, V> first = *reinterpret_cast<const Pack<T, V>*>(x + first_row_at);
#pragma unroll
    for (int v = 0; v < V; ++v) shift[v] = static_cast<float>(first.v[v]);
  }
  __device__ void add(int64_t at, float (&a)[V], float (&b)[V]) const {
    const Pack<T, V> p = *reinterpret_cast<const Pack<T, V>*>(x + at);
#pragma unroll
    for (int v = 0; v < V; ++v) {
      const float d = static_cast<float>(p.v[v]) - shift[v];
      a[v] += d;
      b[v] += d * d;
    }
  }
};

template <typename T, int V>
struct GradSums {
  const T* __restrict__ x;
  const T* __restrict__ dy;
  const float* __restrict__ mean;
  const float* __restrict__ invstd;
  float m[V], s[V];
  __device__ void begin(int64_t group, int64_t first_row_at, int64_t channels, int64_t c0) {
#pragma unroll
    for (int v = 0; v < V; ++v) {
      m[v] = mean[group * channels + c0 + v];
      s[v] = invstd[group * channels + c0 + v];
    }
  }
  __device__ void add(int64_t at, float (&a)[V], float (&b)[V]) const {
    const Pack<T, V> px = *reinterpret_cast<const Pack<T, V>*>(x + at);
    const Pack<T, V> pg = *reinterpret_cast<const Pack<T, V>*>(dy + at);
#pragma unroll
    for (int v = 0; v < V; ++v) {
      const float g = static_cast<float>(pg.v[v]);
      a[v] += g;
      b[v] += g * (static_cast<float>(px.v[v]) - m[v]) * s[v];
    }
  }
};

// Per program (one run of one group's rows, a block of channels): the two sums of `Sums` over its rows.
// part: 2 planes × programs × C.
template <int V, typename Sums>
__global__ void partial_sums(Sums sums, float* __restrict__ part, int64_t channels, int64_t rows_per_group,
                             int64_t rows_per_prog, int64_t progs_per_group) {
  extern __shared__ float shared[];
  const int64_t pid = blockIdx.x;
  const int64_t group = pid / progs_per_group, prog = pid % progs_per_group;
  const int64_t c0 = (static_cast<int64_t>(blockIdx.y) * blockDim.x + threadIdx.x) * V;
  const bool active = c0 < channels;
  const int64_t base = group * rows_per_group;
  const int64_t start = prog * rows_per_prog, end = lesser(start + rows_per_prog, rows_per_group);
  float a[V], b[V];
#pragma unroll
  for (int v = 0; v < V; ++v) a[v] = b[v] = 0.f;
  if (active) {
    sums.begin(group, base * channels + c0, channels, c0);
    for (int64_t r = start + threadIdx.y; r < end; r += blockDim.y) sums.add((base + r) * channels + c0, a, b);
  }
  sum_over_row_lanes<V>(a, b, shared);
  if (active && threadIdx.y == 0) {
    const int64_t plane = static_cast<int64_t>(gridDim.x) * channels;
#pragma unroll
    for (int v = 0; v < V; ++v) {
      part[pid * channels + c0 + v] = a[v];
      part[plane + pid * channels + c0 + v] = b[v];
    }
  }
}

// Adds up one group's partials of one channel per column of threads (kFinishLanesP partials at a time, in double),
// returned in row lane 0.
__device__ void sum_partials(const float* __restrict__ part, int64_t plane, int64_t channels, int64_t c,
                             int64_t first, int64_t count, double& a, double& b, double* shared) {
  a = 0.0;
  b = 0.0;
  if (c < channels) {
    for (int64_t p = threadIdx.y; p < count; p += blockDim.y) {
      a += part[(first + p) * channels + c];
      b += part[plane + (first + p) * channels + c];
    }
  }
  const int lanes = blockDim.x * blockDim.y;
  const int me = threadIdx.y * blockDim.x + threadIdx.x;
  __syncthreads();  // the previous group's reads of `shared` are done
  shared[me] = a;
  shared[lanes + me] = b;
  __syncthreads();
  for (int stride = blockDim.y / 2; stride > 0; stride >>= 1) {  // blockDim.y is a power of two
    if (threadIdx.y < stride) {
      shared[me] += shared[me + stride * blockDim.x];
      shared[lanes + me] += shared[lanes + me + stride * blockDim.x];
    }
    __syncthreads();
  }
  a = shared[threadIdx.x];
  b = shared[lanes + threadIdx.x];
}

// Each group's mean, 1/std, scale = w/std, shift = b − mean·scale and unbiased variance (stats: 5 planes × splits
// × C); with running statistics, the batch's (mean of the group means; mean of the group variances plus the
// variance of the group means) moved into them by `factor`.
template <typename T>
__global__ void finish_stats(const float* __restrict__ part, const T* __restrict__ x, const float* __restrict__ weight,
                             const float* __restrict__ bias, float* __restrict__ stats, float* running_mean,
                             float* running_var, int64_t channels, int64_t rows_per_group, int64_t progs_per_group,
                             int64_t splits, double eps, double factor) {
  __shared__ double shared[2 * kFinishLanesC * kFinishLanesP];
  const int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t plane = splits * progs_per_group * channels;
  const int64_t out_plane = splits * channels;
  const double n = static_cast<double>(rows_per_group);
  double means_mean = 0.0, means_m2 = 0.0, var_sum = 0.0;
  for (int64_t g = 0; g < splits; ++g) {
    double s1, s2;
    sum_partials(part, plane, channels, c, g * progs_per_group, progs_per_group, s1, s2, shared);
    if (threadIdx.y != 0 || c >= channels) continue;
    const double shifted = s1 / n;
    const double var = fmax(s2 / n - shifted * shifted, 0.0);
    const double mean = static_cast<double>(static_cast<float>(x[g * rows_per_group * channels + c])) + shifted;
    const double inv = 1.0 / sqrt(var + eps);
    const double scale = weight[c] * inv;
    const double unbiased = var * n / fmax(n - 1.0, 1.0);
    const int64_t at = g * channels + c;
    stats[at] = static_cast<float>(mean);
    stats[out_plane + at] = static_cast<float>(inv);
    stats[2 * out_plane + at] = static_cast<float>(scale);
    stats[3 * out_plane + at] = static_cast<float>(bias[c] - mean * scale);
    stats[4 * out_plane + at] = static_cast<float>(unbiased);
    const double delta = mean - means_mean;
    means_mean += delta / static_cast<double>(g + 1);
    means_m2 += delta * (mean - means_mean);
    var_sum += unbiased;
  }
  if (running_mean != nullptr && threadIdx.y == 0 && c < channels) {
    const double k = static_cast<double>(splits);
    const double batch_var = var_sum / k + means_m2 / k;
    running_mean[c] = static_cast<float>(running_mean[c] + factor * (means_mean - running_mean[c]));
    running_var[c] = static_cast<float>(running_var[c] + factor * (batch_var - running_var[c]));
  }
}

// Per group, from Σ dy and Σ dy·x̂: the coefficients of dx = a·dy + b·x + c, a = w/std, b = −a·mean(dy·x̂)/std,
// c = −a·mean(dy) − b·mean (coef: 3 planes × splits × C); over the groups, the affine weight's and bias's gradients.
__global__ void finish_grads(const float* __restrict__ part, const float* __restrict__ stats,
                             const float* __restrict__ weight, float* __restrict__ coef, float* __restrict__ grad_weight,
                             float* __restrict__ grad_bias, int64_t channels, int64_t rows_per_group,
                             int64_t progs_per_group, int64_t splits) {
  __shared__ double shared[2 * kFinishLanesC * kFinishLanesP];
  const int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t plane = splits * progs_per_group * channels;
  const int64_t out_plane = splits * channels;
  const double n = static_cast<double>(rows_per_group);
  double total_dy = 0.0, total_dy_xhat = 0.0;
  for (int64_t g = 0; g < splits; ++g) {
    double sum_dy, sum_dy_xhat;
    sum_partials(part, plane, channels, c, g * progs_per_group, progs_per_group, sum_dy, sum_dy_xhat, shared);
    if (threadIdx.y != 0 || c >= channels) continue;
    const int64_t at = g * channels + c;
    const double mean = stats[at], inv = stats[out_plane + at];
    const double a = weight[c] * inv;
    const double b = -a * inv * (sum_dy_xhat / n);
    coef[at] = static_cast<float>(a);
    coef[out_plane + at] = static_cast<float>(b);
    coef[2 * out_plane + at] = static_cast<float>(-a * (sum_dy / n) - b * mean);
    total_dy += sum_dy;
    total_dy_xhat += sum_dy_xhat;
  }
  if (threadIdx.y == 0 && c < channels) {
    grad_weight[c] = static_cast<float>(total_dy_xhat);
    grad_bias[c] = static_cast<float>(total_dy);
  }
}

// out = a·u + b·w + c per (group, channel), the coefficients given as planes × splits × C; forward: u = x, a = scale,
// b = 0 (w unused), c = shift; backward: u = dy, w = x.
template <typename T, int V, bool TWO_INPUTS>
__global__ void affine(const T* __restrict__ u, const T* __restrict__ w, const float* __restrict__ coef_a,
                       const float* __restrict__ coef_b, const float* __restrict__ coef_c, T* __restrict__ out,
                       int64_t channels, int64_t rows_per_group, int64_t rows_per_block, int64_t blocks_per_group) {
  const int64_t group = blockIdx.x / blocks_per_group, block = blockIdx.x % blocks_per_group;
  const int64_t c0 = (static_cast<int64_t>(blockIdx.y) * blockDim.x + threadIdx.x) * V;
  if (c0 >= channels) return;
  float a[V], b[V], c[V];
#pragma unroll
  for (int v = 0; v < V; ++v) {
    const int64_t at = group * channels + c0 + v;
    a[v] = coef_a[at];
    b[v] = TWO_INPUTS ? coef_b[at] : 0.f;
    c[v] = coef_c[at];
  }
  const int64_t base = group * rows_per_group;
  const int64_t start = block * rows_per_block, end = lesser(start + rows_per_block, rows_per_group);
  for (int64_t r = start + threadIdx.y; r < end; r += blockDim.y) {
    const int64_t at = (base + r) * channels + c0;
    const Pack<T, V> pu = *reinterpret_cast<const Pack<T, V>*>(u + at);
    Pack<T, V> po;
    if constexpr (TWO_INPUTS) {
      const Pack<T, V> pw = *reinterpret_cast<const Pack<T, V>*>(w + at);
#pragma unroll
      for (int v = 0; v < V; ++v)
        po.v[v] = static_cast<T>(a[v] * static_cast<float>(pu.v[v]) + b[v] * static_cast<float>(pw.v[v]) + c[v]);
    } else {
#pragma unroll
      for (int v = 0; v < V; ++v) po.v[v] = static_cast<T>(a[v] * static_cast<float>(pu.v[v]) + c[v]);
    }
    *reinterpret_cast<Pack<T, V>*>(out + at) = po;
  }
}

// The activation's values as rows of C (channels last): x itself where its memory already is, else a copy.
Tensor as_rows(const Tensor& t) { return t.movedim(1, -1).contiguous(); }

at::MemoryFormat rows_format(int64_t dim) {
  return dim == 5 ? at::MemoryFormat::ChannelsLast3d : dim == 4 ? at::MemoryFormat::ChannelsLast
                                                                : at::MemoryFormat::Contiguous;
}

// A tensor shaped like `like` whose memory is rows of C (what the kernels write), in `like`'s memory format.
Tensor empty_rows_like(const Tensor& like) {
  return at::empty(like.sizes(), like.options(), rows_format(like.dim()));
}

template <typename T>
int vector_width(const Tensor& a, int64_t channels) {
  constexpr int wide = 16 / sizeof(T);
  const bool aligned = reinterpret_cast<uintptr_t>(a.data_ptr()) % 16 == 0;
  return (channels % wide == 0 && aligned) ? wide : 1;
}

template <typename T, int V>
void launch_forward(const Tensor& rows, const Tensor& y, const Tensor& weight, const Tensor& bias, const Tensor& stats,
                    float* running_mean, float* running_var, int64_t splits, double eps, double factor,
                    const Layout& l) {
  auto stream = at::cuda::getCurrentCUDAStream();
  const T* x = rows.data_ptr<T>();
  const int64_t programs = splits * l.progs_per_group;
  auto part = at::empty({2, programs, l.channels}, rows.options().dtype(at::kFloat));
  const dim3 block(l.lanes_c, l.lanes_r);
  const size_t shared = 2 * kThreads * V * sizeof(float);
  partial_sums<V><<<dim3(programs, l.channel_blocks), block, shared, stream>>>(
      ShiftedSums<T, V>{x}, part.data_ptr<float>(), l.channels, l.rows_per_group, l.rows_per_prog, l.progs_per_group);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  finish_stats<T><<<ceil_div(l.channels, kFinishLanesC), dim3(kFinishLanesC, kFinishLanesP), 0, stream>>>(
      part.data_ptr<float>(), x, weight.data_ptr<float>(), bias.data_ptr<float>(), stats.data_ptr<float>(),
      running_mean, running_var, l.channels, l.rows_per_group, l.progs_per_group, splits, eps, factor);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  const float* st = stats.data_ptr<float>();
  const int64_t plane = splits * l.channels;
  affine<T, V, false><<<dim3(splits * l.blocks_per_group, l.channel_blocks), block, 0, stream>>>(
      x, nullptr, st + 2 * plane, nullptr, st + 3 * plane, y.data_ptr<T>(), l.channels, l.rows_per_group,
      l.rows_per_block, l.blocks_per_group);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

template <typename T, int V>
void launch_backward(const Tensor& rows, const Tensor& dy, const Tensor& dx, const Tensor& weight, const Tensor& stats,
                     const Tensor& grads, int64_t splits, const Layout& l) {
  auto stream = at::cuda::getCurrentCUDAStream();
  const int64_t programs = splits * l.progs_per_group;
  const int64_t plane = splits * l.channels;
  auto options = rows.options().dtype(at::kFloat);
  // One allocation for the partial sums and dx's coefficients (allocations cost the host as much as launches)
  auto work = at::empty({2 * programs * l.channels + 3 * plane}, options);
  float* part = work.data_ptr<float>();
  float* coef = part + 2 * programs * l.channels;
  const float* st = stats.data_ptr<float>();
  const dim3 block(l.lanes_c, l.lanes_r);
  const size_t shared = 2 * kThreads * V * sizeof(float);
  partial_sums<V><<<dim3(programs, l.channel_blocks), block, shared, stream>>>(
      GradSums<T, V>{rows.data_ptr<T>(), dy.data_ptr<T>(), st, st + plane}, part, l.channels, l.rows_per_group,
      l.rows_per_prog, l.progs_per_group);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  float* g = grads.data_ptr<float>();
  finish_grads<<<ceil_div(l.channels, kFinishLanesC), dim3(kFinishLanesC, kFinishLanesP), 0, stream>>>(
      part, st, weight.data_ptr<float>(), coef, g, g + l.channels, l.channels, l.rows_per_group, l.progs_per_group,
      splits);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  if (!dx.defined()) return;
  affine<T, V, true><<<dim3(splits * l.blocks_per_group, l.channel_blocks), block, 0, stream>>>(
      dy.data_ptr<T>(), rows.data_ptr<T>(), coef, coef + plane, coef + 2 * plane, dx.data_ptr<T>(), l.channels,
      l.rows_per_group, l.rows_per_block, l.blocks_per_group);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

// Running statistics travel past autograd (buffers, changed in place by finish_stats).
struct Running {
  std::optional<Tensor> mean, var;
  double factor;
};

int vector_width_for(const Tensor& a, const Tensor& b, const Tensor& c, int64_t channels) {
  int width = 1;
  DISPATCH_ACTIVATION_TYPES(a.scalar_type(), "sub_batch_bn", [&] {
    width = std::min({vector_width<scalar_t>(a, channels), vector_width<scalar_t>(b, channels),
                      c.defined() ? vector_width<scalar_t>(c, channels) : 16});
  });
  return width;
}

class SubBatchBatchNorm : public torch::autograd::Function<SubBatchBatchNorm> {
 public:
  static variable_list forward(AutogradContext* ctx, Tensor x, Tensor weight, Tensor bias, int64_t splits, double eps,
                               Running running, bool with_stats) {
    const at::cuda::CUDAGuard guard(x.device());
    const int64_t channels = x.size(1);
    const Tensor rows = as_rows(x);
    const Tensor w = weight.to(at::kFloat).contiguous(), b = bias.to(at::kFloat).contiguous();
    const Tensor y = empty_rows_like(x);
    const Tensor stats = at::empty({5, splits, channels}, x.options().dtype(at::kFloat));
    float* running_mean = running.mean ? running.mean->data_ptr<float>() : nullptr;
    float* running_var = running.var ? running.var->data_ptr<float>() : nullptr;
    const int vec = vector_width_for(rows, y, Tensor(), channels);
    const Layout l = make_layout(channels, rows.numel() / channels, splits, vec);
    DISPATCH_ACTIVATION_TYPES(x.scalar_type(), "sub_batch_bn_forward", [&] {
      constexpr int wide = 16 / sizeof(scalar_t);
      if (vec == wide) {
        launch_forward<scalar_t, wide>(rows, y, w, b, stats, running_mean, running_var, splits, eps,
                                       running.factor, l);
      } else {
        launch_forward<scalar_t, 1>(rows, y, w, b, stats, running_mean, running_var, splits, eps, running.factor,
                                    l);
      }
    });
    // y and dx go back in x's memory format: as written where it is channels last, else a copy
    const at::MemoryFormat x_format = x.suggest_memory_format();
    ctx->save_for_backward({rows, w, stats});
    ctx->saved_data["splits"] = splits;
    ctx->saved_data["weight_dtype"] = weight.scalar_type();
    ctx->saved_data["x_format"] = static_cast<int64_t>(x_format);
    if (!with_stats) return {y.contiguous(x_format)};  // (two outputs fewer: less for autograd to keep per layer)
    Tensor mean = stats[0], var = stats[4];
    ctx->mark_non_differentiable({mean, var});
    return {y.contiguous(x_format), mean, var};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const Tensor &rows = saved[0], &w = saved[1], &stats = saved[2];
    const int64_t splits = ctx->saved_data["splits"].toInt();
    const at::ScalarType weight_dtype = ctx->saved_data["weight_dtype"].toScalarType();
    const Tensor& grad_out = grads[0];
    const at::cuda::CUDAGuard guard(rows.device());
    const int64_t channels = w.numel();
    const Tensor dy = as_rows(grad_out.to(rows.scalar_type()));
    const bool want_x = ctx->needs_input_grad(0);
    // dx as an activation shaped like the input, in channels-last memory (the rows the kernels write)
    const Tensor dx = want_x ? empty_rows_like(grad_out) : Tensor();
    const Tensor affine_grads = at::empty({2, channels}, w.options());
    const int vec = vector_width_for(rows, dy, dx, channels);
    const Layout l = make_layout(channels, rows.numel() / channels, splits, vec);
    DISPATCH_ACTIVATION_TYPES(rows.scalar_type(), "sub_batch_bn_backward", [&] {
      constexpr int wide = 16 / sizeof(scalar_t);
      if (vec == wide) {
        launch_backward<scalar_t, wide>(rows, dy, dx, w, stats, affine_grads, splits, l);
      } else {
        launch_backward<scalar_t, 1>(rows, dy, dx, w, stats, affine_grads, splits, l);
      }
    });
    Tensor grad_x;
    if (want_x) {
      grad_x = dx.contiguous(static_cast<at::MemoryFormat>(ctx->saved_data["x_format"].toInt()));
    }
    return {grad_x, affine_grads[0].to(weight_dtype), affine_grads[1].to(weight_dtype), Tensor(), Tensor(), Tensor(),
            Tensor()};
  }
};

// (y, the groups' means, their unbiased variances); the last two undefined (None) unless `with_stats`.
std::tuple<Tensor, Tensor, Tensor> sub_batch_bn(Tensor x, Tensor weight, Tensor bias, int64_t splits, double eps,
                                                std::optional<Tensor> running_mean, std::optional<Tensor> running_var,
                                                double factor, bool with_stats) {
  // Messages are plain text: numbers streamed into them crashed a build whose C++ library differed from
  // PyTorch's (harness/models/cuda_bn.py checks the arguments first and names the values).
  TORCH_CHECK(x.is_cuda(), "sub-batch BN (train.sub_batch_bn=cuda_cpp) runs on CUDA tensors");
  TORCH_CHECK(x.dim() == 2 || x.dim() == 4 || x.dim() == 5,
              "sub-batch BN takes N×C, N×C×H×W or N×C×T×H×W activations");
  const int64_t channels = x.size(1);
  TORCH_CHECK(weight.numel() == channels && bias.numel() == channels,
              "sub-batch BN: weight and bias need one value per channel of the activation");
  TORCH_CHECK(splits >= 1 && x.size(0) % splits == 0,
              "sub-batch BN: the batch cannot be split into that many equal groups");
  TORCH_CHECK(x.numel() > 0, "sub-batch BN: the activation is empty");
  TORCH_CHECK(x.scalar_type() == at::kFloat || x.scalar_type() == at::kHalf || x.scalar_type() == at::kBFloat16,
              "sub-batch BN's CUDA kernels take float32, float16 or bfloat16 activations");
  TORCH_CHECK(running_mean.has_value() == running_var.has_value(),
              "sub-batch BN: give both running statistics or neither");
  for (const auto* t : {&running_mean, &running_var}) {
    if (t->has_value()) {
      TORCH_CHECK((*t)->scalar_type() == at::kFloat && (*t)->is_contiguous() && (*t)->numel() == channels &&
                      (*t)->device() == x.device(),
                  "sub-batch BN: running statistics must be contiguous float32 tensors of one value per channel, "
                  "on the activation's device");
    }
  }
  auto out = SubBatchBatchNorm::apply(x, weight, bias, splits, eps, Running{running_mean, running_var, factor},
                                      with_stats);
  if (!with_stats) return {out[0], Tensor(), Tensor()};
  return {out[0], out[1], out[2]};
}

}  // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("sub_batch_bn", &sub_batch_bn,
        "y = BN(x) with statistics per contiguous block of `splits` equal blocks of the batch; returns (y, the "
        "blocks' means, their unbiased variances), and with running statistics moves them towards the batch's");
}
