// Trusted reference for the histogram presets: one thread per bin counts
// the elements equal to its bin, no atomics. Slow (every thread reads all of
// data) but obviously right.

__global__ void histogram_reference(const unsigned char *data, unsigned int *hist, int n)
{
    const int bin = blockIdx.x * blockDim.x + threadIdx.x;
    if (bin >= 256) {
        return;
    }
    unsigned int count = 0;
    for (int i = 0; i < n; ++i) {
        count += data[i] == bin;
    }
    hist[bin] = count;
}
