// Histogram of bytes with atomics in global memory.
//
// One thread per element: it adds 1 to the bin of its byte with atomicAdd,
// which makes the read-modify-write of that bin indivisible. Many threads hit
// the same few bins at once (the data is bell-shaped, so the middle bins are
// busy), and those atomics on the same address are serialised.
// histogram_shared counts in shared memory first.

__global__ void histogram_global(const unsigned char *data, unsigned int *hist, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(&hist[data[i]], 1u);
    }
}
