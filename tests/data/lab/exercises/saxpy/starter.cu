// Exercise: y[i] = alpha * x[i] + y[i] for i < n, with a grid-stride loop
// (the grid is smaller than n).
__global__ void saxpy(int n, float alpha, const float *x, float *y)
{
}
