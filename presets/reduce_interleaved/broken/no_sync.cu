// kpg-expect: fail "partial sums match the reference" first any
// Bug: no __syncthreads() between the rounds of the tree. From stride 32 on a
// thread adds a value another warp may not have finished yet: a race, so
// which blocks come out wrong changes from run to run.

__global__ void reduce_interleaved(const float *in, float *partial, int n)
{
    extern __shared__ float sdata[];
    const unsigned int tid = threadIdx.x;
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();

    for (unsigned int stride = 1; stride < blockDim.x; stride *= 2) {
        if (tid % (2 * stride) == 0) {
            sdata[tid] += sdata[tid + stride];
        }
    }
    if (tid == 0) {
        partial[blockIdx.x] = sdata[0];
    }
}
