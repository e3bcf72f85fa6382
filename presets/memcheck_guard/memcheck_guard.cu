// Memory safety 1: writing past the end of a buffer.
//
// Step 1 scales a into b; step 2 copies b into c. Every buffer sits between
// two guard zones that kpg fills with a pattern and checks after each step,
// so a write outside c (broken/shifted_copy.cu writes c[i + 1]) is reported
// with the step, the buffer and the elements it hit.

__global__ void scale(const float *a, float *b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        b[i] = 2.0f * a[i];
    }
}

__global__ void copy(const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = b[i]; // the write the broken variants get wrong
    }
}
