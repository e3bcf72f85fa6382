// Reduction, step 3: warp shuffles.
//
// Inside a warp, threads can read each other's registers with
// __shfl_down_sync: after offsets 16, 8, 4, 2, 1 lane 0 holds the sum of the
// warp's 32 values, with no shared memory and no __syncthreads(). Each warp's
// lane 0 then writes its sum to shared memory, the block waits once, and the
// first warp adds the (up to 32) warp sums the same way.
// blockDim.x must be a multiple of 32 (at most 1024).

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
        v = lane < blockDim.x / 32 ? warp_sums[lane] : 0.0f;
        v = warp_sum(v);
        if (lane == 0) {
            partial[blockIdx.x] = v;
        }
    }
}
