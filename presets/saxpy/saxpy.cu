// SAXPY: y = a * x + y for n floats ("single-precision a times x plus y").
//
// One thread per element, like vector add, but y is read and written: the
// kernel updates it in place. n is not a multiple of the block size, so the
// guard matters for the last block.

__global__ void saxpy(int n, float a, const float *__restrict__ x, float *__restrict__ y)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = a * x[i] + y[i];
    }
}
