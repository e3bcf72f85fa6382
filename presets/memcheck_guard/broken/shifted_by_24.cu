// kpg-expect: fail "c = 2 a" first 0
// Bug: the copy writes c[i + 24]: elements 0..23 of c are never written and
// the last 24 threads write 96 bytes past its end (elements 1000..1023 of the
// guard). Under Run > Check memory (memcheck) each of those writes is an
// "invalid __global__ write" on the marked line, with its thread and block.

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
        c[i + 24] = b[i]; // the write the broken variants get wrong
    }
}
