// kpg-expect: fail "partial sums match the reference" first 0
// Bug: the second stage adds only the first four warp sums
// (lane < 4 instead of lane < blockDim.x / 32): with 8 warps per block,
// every partial sum misses the block's second half.

__device__ float warp_sum(float v)
{
    for (int offset = 16; offset > 0; offset /= 2) {
        v += __shfl_down_sync(0xffffffffu, v, offset);
    }
    return v;
}

__global__ void reduce_shuffle(const float *in, float *partial, int n)
{
    __shared__ float warp_sums[32];
    const unsigned int tid = threadIdx.x;
    const unsigned int lane = tid % 32;
    const unsigned int warp = tid / 32;
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;

    float v = warp_sum(i < n ? in[i] : 0.0f);
    if (lane == 0) {
        warp_sums[warp] = v;
    }
    __syncthreads();

    if (warp == 0) {
        v = lane < 4 ? warp_sums[lane] : 0.0f;
        v = warp_sum(v);
        if (lane == 0) {
            partial[blockIdx.x] = v;
        }
    }
}
