// kpg-expect: fail "Y = a * X + Y" first 999999
// Bug: the guard is off by one (i < n - 1), so the last element keeps its
// initial value.

__global__ void saxpy(int n, float a, const float *__restrict__ x, float *__restrict__ y)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n - 1) {
        y[i] = a * x[i] + y[i];
    }
}
