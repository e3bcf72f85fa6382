// Vector add: c[i] = a[i] + b[i], one thread per element.
//
// The first kernel everyone writes. Each thread computes its global index
// from its block and thread coordinates, and the guard (i < n) keeps the last,
// partly filled block from writing past the end of the arrays.

extern "C" __global__ void vectorAdd(const float *__restrict__ a,
                                     const float *__restrict__ b,
                                     float *__restrict__ c,
                                     int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}
