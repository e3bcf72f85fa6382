// kpg-expect: fail "partial sums match the reference" first any
// Bug: no __syncthreads() between the rounds. A thread adds sdata[tid + s]
// that another warp may not have written yet: a read-after-write race on
// shared memory, and which blocks come out wrong changes from run to run.
// racecheck reports it on the marked line (a read and a write there).

__global__ void reduce_racy(const float *in, float *partial, int n)
{
    extern __shared__ float sdata[];
    const unsigned int tid = threadIdx.x;
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s]; // the racing line without the barrier below
        }
    }
    if (tid == 0) {
        partial[blockIdx.x] = sdata[0];
    }
}
