// kpg-expect: fail "Y = a * X + Y" first 0
// Bug: the old y is not added (y = a * x), wrong from the first element on.

__global__ void saxpy(int n, float a, const float *__restrict__ x, float *__restrict__ y)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = a * x[i];
    }
}
