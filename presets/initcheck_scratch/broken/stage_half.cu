// kpg-expect: fail "out = 2 a + 1" first any
// Bug: stage writes only the first half of scratch, so finish reads the
// second half uninitialised: whatever the GPU memory held. initcheck reports
// "read of 4 uninitialised bytes" on the marked line, with the element of
// scratch each thread read.

__global__ void stage(const float *a, float *scratch, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n / 2) {
        scratch[i] = 2.0f * a[i];
    }
}

__global__ void finish(const float *scratch, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = scratch[i] + 1.0f; // the read initcheck watches
    }
}
