// Trusted reference for the reduction presets: block b's partial sum is the
// sum of in[b * per_block] .. in[b * per_block + per_block - 1] (the part
// inside n), added in double by one thread and rounded once.

__global__ void reduce_reference(const float *in, float *partial, int n, int per_block)
{
    double sum = 0.0;
    const long long begin = (long long)blockIdx.x * per_block;
    for (long long i = begin; i < begin + per_block && i < n; ++i) {
        sum += in[i];
    }
    partial[blockIdx.x] = float(sum);
}
