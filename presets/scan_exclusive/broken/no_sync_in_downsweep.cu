// kpg-expect: fail "out matches the reference" first any
// Bug: no __syncthreads() in the down-sweep. From d = 32 on a thread reads
// tree nodes that another warp is still updating: a race, so which elements
// come out wrong changes from run to run.

#define THREADS 256
#define ITEMS (2 * THREADS)

__global__ void scan_blocks(const int *in, int *out, int *block_sums, int n)
{
    __shared__ int temp[ITEMS];
    const int tid = threadIdx.x;
    const int base = blockIdx.x * ITEMS;

    // Each thread loads two elements (zeros past the end).
    temp[2 * tid] = base + 2 * tid < n ? in[base + 2 * tid] : 0;
    temp[2 * tid + 1] = base + 2 * tid + 1 < n ? in[base + 2 * tid + 1] : 0;

    // Up-sweep (reduce): after it, temp[ITEMS - 1] holds the block's total.
    int offset = 1;
    for (int d = ITEMS / 2; d > 0; d /= 2) {
        __syncthreads();
        if (tid < d) {
            const int a = offset * (2 * tid + 1) - 1;
            const int b = offset * (2 * tid + 2) - 1;
            temp[b] += temp[a];
        }
        offset *= 2;
    }

    // Clear the last element: the exclusive scan starts from 0.
    if (tid == 0) {
        block_sums[blockIdx.x] = temp[ITEMS - 1];
        temp[ITEMS - 1] = 0;
    }

    // Down-sweep: each node passes its value to its left child and the sum of
    // its value and the left child's to its right child.
    for (int d = 1; d < ITEMS; d *= 2) {
        offset /= 2;
        if (tid < d) {
            const int a = offset * (2 * tid + 1) - 1;
            const int b = offset * (2 * tid + 2) - 1;
            const int t = temp[a];
            temp[a] = temp[b];
            temp[b] += t;
        }
    }
    __syncthreads();

    if (base + 2 * tid < n) {
        out[base + 2 * tid] = temp[2 * tid];
    }
    if (base + 2 * tid + 1 < n) {
        out[base + 2 * tid + 1] = temp[2 * tid + 1];
    }
}

__global__ void add_offsets(int *out, const int *block_offsets, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] += block_offsets[i / ITEMS];
    }
}
