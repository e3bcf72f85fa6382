// Memory safety 3: reading memory nobody wrote.
//
// Step 1 (stage) writes scratch = 2 a; step 2 (finish) reads it: out =
// scratch + 1. scratch is "uninitialized" in the project: kpg allocates it on
// the GPU and never copies anything into it, as cudaMalloc would. If stage
// misses an element (broken/stage_half.cu), finish reads garbage there, and
// compute-sanitizer's initcheck reports every such read.

__global__ void stage(const float *a, float *scratch, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        scratch[i] = 2.0f * a[i];
    }
}

__global__ void finish(const float *scratch, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = scratch[i] + 1.0f; // the read initcheck watches
    }
}
