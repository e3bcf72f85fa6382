// The producer squares a chunk of a into b; the consumer, on another stream,
// adds one to that chunk of b once the producer's event for it has happened.
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
        c[i] = b[i] + 1.0f;
    }
}
