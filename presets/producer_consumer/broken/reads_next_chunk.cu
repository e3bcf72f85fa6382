// kpg-expect: fail "c = a*a + 1" first 0
// The consumer reads the chunk after its own: data the producer has not
// made yet, or made for another chunk.
extern "C" __global__ void produce(const float *a, float *b, int offset, int count)
{
    const int i = offset + blockIdx.x * blockDim.x + threadIdx.x;
    if (i < offset + count) {
        b[i] = a[i] * a[i];
    }
}

extern "C" __global__ void consume(const float *b, float *c, int offset, int count)
{
    const int i = offset + blockIdx.x * blockDim.x + threadIdx.x;
    if (i < offset + count) {
        c[i] = b[(i + count) % (4 * count)] + 1.0f;
    }
}
