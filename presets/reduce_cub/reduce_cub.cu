// Reduction, step 4: cub::BlockReduce, the library's block-wide sum.
//
// CUB (part of the CUDA toolkit's CCCL) provides collective primitives for
// a warp, a block or a whole device. cub::BlockReduce<float, BLOCK> needs the
// block size at compile time and a TempStorage in shared memory; Sum() returns
// the block's total in thread 0 (the other threads' return values are
// undefined). Here BLOCK is a template parameter, and the launch names the
// instantiation: "reduce_cub<256>" with a block of 256 threads.

#include <cub/block/block_reduce.cuh>

template <int BLOCK>
__global__ void reduce_cub(const float *in, float *partial, int n)
{
    using BlockReduce = cub::BlockReduce<float, BLOCK>;
    __shared__ typename BlockReduce::TempStorage temp;

    const int i = blockIdx.x * BLOCK + threadIdx.x;
    const float v = i < n ? in[i] : 0.0f;
    const float sum = BlockReduce(temp).Sum(v);
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = sum;
    }
}
