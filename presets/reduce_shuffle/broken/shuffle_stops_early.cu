// kpg-expect: fail "partial sums match the reference" first 0
// Bug: the shuffle loop stops at offset 2 (offset > 1), so lane 0 never adds
// lane 1's half: every warp sum misses half of its warp, in both stages.

__device__ float warp_sum(float v)
{
    for (int offset = 16; offset > 1; offset /= 2) {
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
        v = lane < blockDim.x / 32 ? warp_sums[lane] : 0.0f;
        v = warp_sum(v);
        if (lane == 0) {
            partial[blockIdx.x] = v;
        }
    }
}
