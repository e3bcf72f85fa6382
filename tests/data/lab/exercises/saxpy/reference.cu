__global__ void saxpy(int n, float alpha, const float *x, float *y)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        y[i] = alpha * x[i] + y[i];
    }
}
