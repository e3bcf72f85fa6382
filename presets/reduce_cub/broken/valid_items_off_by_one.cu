// kpg-expect: fail "partial sums match the reference" first 0
// Bug: Sum(v, num_valid) is told one item too few (BLOCK - 1), so each
// block's last element is left out of its sum.

#include <cub/block/block_reduce.cuh>

template <int BLOCK>
__global__ void reduce_cub(const float *in, float *partial, int n)
{
    using BlockReduce = cub::BlockReduce<float, BLOCK>;
    __shared__ typename BlockReduce::TempStorage temp;

    const int i = blockIdx.x * BLOCK + threadIdx.x;
    const float v = i < n ? in[i] : 0.0f;
    const float sum = BlockReduce(temp).Sum(v, BLOCK - 1);
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = sum;
    }
}
