// kpg-expect: fail "padded row sums" first 0
// Bug: to be rid of the bank conflict, rows_33 reads tile[k][t], a column,
// which is conflict-free with or without the padding, but sums column t of
// the tile instead of row t. Every sum is wrong, the first one first.
// Row sums of a matrix of 32-float rows, staged 32 rows at a time through
// shared memory, with two row lengths for the tile.
//
// A warp (one block of 32 threads) first copies a 32 x 32 tile in, row by
// row: thread t writes column t, 32 neighbouring words, no bank conflict.
// Then thread t sums row t. Shared memory has 32 banks of 4-byte words, and
// word w lives in bank w % 32.
//
// rows_32: the tile's rows are 32 floats long. Row t, column k is word
// 32 t + k, in bank k for every t: the 32 threads read one bank at a time,
// a 32-way conflict, 32 wavefronts per request.
//
// rows_33: the rows are 33 floats long (one unused). Word 33 t + k is in bank
// (t + k) % 32: 32 different banks, one wavefront per request.

#define TILE 32

__global__ void rows_32(const float *in, float *sums, int rows)
{
    __shared__ float tile[TILE][TILE];
    const int first = blockIdx.x * TILE;
    for (int r = 0; r < TILE && first + r < rows; ++r) {
        tile[r][threadIdx.x] = in[(first + r) * TILE + threadIdx.x];
    }
    __syncthreads();
    if (first + threadIdx.x < rows) {
        float s = 0.0f;
        for (int k = 0; k < TILE; ++k) {
            s += tile[threadIdx.x][k];
        }
        sums[first + threadIdx.x] = s;
    }
}

__global__ void rows_33(const float *in, float *sums, int rows)
{
    __shared__ float tile[TILE][TILE + 1]; // + 1: the padding that spreads a column over the banks
    const int first = blockIdx.x * TILE;
    for (int r = 0; r < TILE && first + r < rows; ++r) {
        tile[r][threadIdx.x] = in[(first + r) * TILE + threadIdx.x];
    }
    __syncthreads();
    if (first + threadIdx.x < rows) {
        float s = 0.0f;
        for (int k = 0; k < TILE; ++k) {
            s += tile[k][threadIdx.x]; // the bug: column t, not row t
        }
        sums[first + threadIdx.x] = s;
    }
}
