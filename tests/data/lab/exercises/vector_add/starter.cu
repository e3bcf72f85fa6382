// Exercise: c[i] = a[i] + b[i] for i < n.
__global__ void vectorAdd(const float *a, const float *b, float *c, int n)
{
    // TODO: compute this thread's index and add.
}
