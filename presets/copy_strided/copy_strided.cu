// The same copy twice: every element of in goes to the same place in out.
//
// copy_coalesced: thread i copies element i, so the 32 threads of a warp
// touch 32 neighbouring floats, 128 bytes: 4 sectors of 32 bytes per request.
//
// copy_strided: thread i copies element (i % stride) * (n / stride) + i / stride.
// Every element is still copied exactly once, but neighbouring threads are
// n / stride floats apart, so each thread of a warp needs a sector of its
// own: 32 sectors per request for the 4 a warp's 128 bytes fit in.

__global__ void copy_coalesced(const float *in, float *out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = in[i];
    }
}

__global__ void copy_strided(const float *in, float *out, int n, int stride)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const int j = (i % stride) * (n / stride) + i / stride;
        out[j] = in[j];
    }
}
