// kpg-expect: race "partial sums match the reference"
// Bug: no __syncthreads() between the rounds. A thread reads sdata[tid + s]
// that another warp may not have written yet: a race on shared memory, and
// which blocks come out wrong changes from run to run. racecheck reports it
// as the two lines marked below: the read of one round against the write of
// the round before.

__global__ void reduce_racy(const float *in, float *partial, int n)
{
    extern __shared__ float sdata[];
    const unsigned int tid = threadIdx.x;
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            const float other = sdata[tid + s]; // the racing read: written by another thread last round
            sdata[tid] += other;                // the racing write: read by another thread next round
        }
    }
    if (tid == 0) {
        partial[blockIdx.x] = sdata[0];
    }
}
