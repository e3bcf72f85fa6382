// kpg-expect: fail "partial sums match the reference" first any
// Bug: no __syncthreads() between rounds. While s >= 32 a thread adds a value
// that another warp may not have written yet: a race, so which blocks come
// out wrong changes from run to run.

__global__ void reduce_sequential(const float *in, float *partial, int n)
{
    extern __shared__ float sdata[];
    const unsigned int tid = threadIdx.x;
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();

    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
    }
    if (tid == 0) {
        partial[blockIdx.x] = sdata[0];
    }
}
