// kpg-expect: fail "c = 2 a" first 0
// Bug: the copy writes c[i + 1]. c[0] is never written, and the last thread
// writes c[1000], 4 bytes past the end of c: the guard zone after c catches
// it ("step 2 (copy) wrote past the end of `c`: 4 bytes, element 1000").

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
        c[i + 1] = b[i]; // the write the broken variants get wrong
    }
}
