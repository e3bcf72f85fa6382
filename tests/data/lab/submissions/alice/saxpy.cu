// alice: grid-stride SAXPY
__global__ void saxpy(int n, float alpha, const float *x, float *y)
{
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] = alpha * x[i] + y[i];
}
